package roost

// Test support: tables built by the real roost-load, real roost-server
// processes on loopback (one per shard and replica), and their logs, as
// clients/python/tests/conftest.py does. The binaries come from
// ROOST_LOAD_BINARY and ROOST_SERVER_BINARY (ctest sets them to the
// build's), else from build/release of this checkout. Nothing is mocked.

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

const waitTimeout = 60 * time.Second

func repoRoot(t testing.TB) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..", "..")
}

func binary(t testing.TB, variable, relative string) string {
	path := os.Getenv(variable)
	if path == "" {
		path = filepath.Join(repoRoot(t), "build", "release", relative)
	}
	if info, err := os.Stat(path); err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		t.Fatalf("%s is not an executable: build with scripts/build.sh or set %s", path, variable)
	}
	return path
}

// kv is a key and its value.
type kv struct{ key, value []byte }

// keysAndValues is n keys, some binary, each with its own value; prefix
// tells versions apart.
func keysAndValues(n int, prefix string) []kv {
	var out []kv
	for i := 0; i < n; i++ {
		out = append(out, kv{[]byte(fmt.Sprintf("key%05d", i)),
			[]byte(strings.Repeat(fmt.Sprintf("%svalue of key %d", prefix, i), 1+i%3))})
	}
	out = append(out,
		kv{[]byte(""), []byte(prefix + "the empty key's value")},
		kv{[]byte("\x00\xff\x00"), []byte("\x00binary\xff" + prefix)},
		kv{[]byte("tab\tnew\nline"), []byte(prefix)}) // "": an empty value is a value
	return out
}

type testServer struct {
	t       testing.TB
	cmd     *exec.Cmd
	logPath string
	address string
	done    chan struct{} // closed when the process has exited
}

func (s *testServer) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *testServer) log() string {
	b, _ := os.ReadFile(s.logPath)
	return string(b)
}

func (s *testServer) describe() string {
	return fmt.Sprintf("\n--- %s ---\n%s--- end of log ---", s.logPath, s.log())
}

var listening = regexp.MustCompile(`lookup service listening on (\S+)\n`)

func (s *testServer) waitLog(pattern *regexp.Regexp) []string {
	end := time.Now().Add(waitTimeout)
	for {
		if m := pattern.FindStringSubmatch(s.log()); m != nil {
			return m
		}
		if s.exited() {
			s.t.Fatalf("roost-server exited: %v%s", s.cmd.ProcessState, s.describe())
		}
		if time.Now().After(end) {
			s.t.Fatalf("timed out waiting for %q%s", pattern, s.describe())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill SIGKILLs the server and waits for it.
func (s *testServer) kill() {
	s.cmd.Process.Kill()
	<-s.done
}

// hang SIGSTOPs the server and returns once every thread of it has
// stopped: kill(2) only starts a stop, and on a busy machine the threads
// not yet stopped went on answering (a "hung" shard answered a batch). The
// test's cleanup continues it (SIGCONT) so that it can be killed.
func (s *testServer) hang() {
	s.t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { s.cmd.Process.Signal(syscall.SIGCONT) })
	tasks := fmt.Sprintf("/proc/%d/task", s.cmd.Process.Pid)
	end := time.Now().Add(waitTimeout)
	for !allStopped(tasks) {
		if time.Now().After(end) {
			s.t.Fatalf("roost-server %d not stopped after SIGSTOP%s", s.cmd.Process.Pid, s.describe())
		}
		time.Sleep(time.Millisecond)
	}
}

// allStopped says whether every thread under `tasks` (/proc/PID/task) is
// in state T (stopped).
func allStopped(tasks string) bool {
	entries, err := os.ReadDir(tasks)
	if err != nil || len(entries) == 0 {
		return false
	}
	for _, e := range entries {
		stat, err := os.ReadFile(tasks + "/" + e.Name() + "/stat")
		if err != nil {
			return false
		}
		// The state follows the command's closing parenthesis.
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 || i+2 >= len(stat) || stat[i+2] != 'T' {
			return false
		}
	}
	return true
}

type testCluster struct {
	t       testing.TB
	dir     string
	data    string
	load    string
	server  string
	servers []*testServer
	inputs  int
}

func newCluster(t testing.TB) *testCluster {
	dir := t.TempDir()
	c := &testCluster{t: t, dir: dir, data: filepath.Join(dir, "data"),
		load:   binary(t, "ROOST_LOAD_BINARY", "loader/roost-load"),
		server: binary(t, "ROOST_SERVER_BINARY", "server/roost-server")}
	if err := os.Mkdir(c.data, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.close)
	return c
}

// build publishes the next version of table with roost-load build.
func (c *testCluster) build(table string, kvs []kv, shards int) {
	c.buildFormat(table, kvs, shards, "cuckoo")
}

// buildFormat is build with a table format: "cuckoo" or "block".
func (c *testCluster) buildFormat(table string, kvs []kv, shards int, format string) {
	c.buildAt(c.data, table, kvs, shards, format)
}

// buildAt is buildFormat into another data directory.
func (c *testCluster) buildAt(data, table string, kvs []kv, shards int, format string) {
	c.loadBuild(table, kvs, shards, format, "--data-dir", data)
}

// loadBuild runs roost-load build of kvs as the next version of table, to
// where `to` (--data-dir DIR or --repository URI) says.
func (c *testCluster) loadBuild(table string, kvs []kv, shards int, format string, to ...string) {
	c.inputs++
	var b strings.Builder
	for _, e := range kvs {
		fmt.Fprintf(&b, "%s\t%s\n", hex.EncodeToString(e.key), hex.EncodeToString(e.value))
	}
	input := filepath.Join(c.dir, fmt.Sprintf("input-%s-%d.tsv", table, c.inputs))
	if err := os.WriteFile(input, []byte(b.String()), 0o644); err != nil {
		c.t.Fatal(err)
	}
	args := append([]string{"build", "-q", "--format", format, "--key-encoding", "hex",
		"--value-encoding", "hex"}, to...)
	args = append(args, "--table", table, "--shards", fmt.Sprint(shards), "-i", input)
	out, err := exec.Command(c.load, args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("roost-load build %v failed (%v): %s", to, err, out)
	}
}

// publish builds the next version of table into the table repository
// repo (a folder; roost-load build --repository file://REPO).
func (c *testCluster) publish(repo, table string, kvs []kv, shards int, format string) {
	c.loadBuild(table, kvs, shards, format, "--repository", "file://"+repo)
}

// rollback moves table's POINTER in the repository repo back to version
// (roost-load rollback).
func (c *testCluster) rollback(repo, table, version string) {
	out, err := exec.Command(c.load, "rollback", "--repository", "file://"+repo, "--table", table,
		"--to", version).CombinedOutput()
	if err != nil {
		c.t.Fatalf("roost-load rollback failed (%v): %s", err, out)
	}
}

// startPulling starts a roost-server of shard that pulls from the table
// repository repo into a data directory of its own.
func (c *testCluster) startPulling(repo string, shard int, extra ...string) *testServer {
	data, err := os.MkdirTemp(c.dir, "pulled-")
	if err != nil {
		c.t.Fatal(err)
	}
	return c.startAt(data, shard, "127.0.0.1:0",
		append([]string{"--repository", "file://" + repo, "--repository-poll", "0.1"}, extra...)...)
}

// start starts a roost-server of shard (-1: unsharded) on listen
// ("127.0.0.1:0": any port) and waits until it is ready.
func (c *testCluster) start(shard int, listen string, extra ...string) *testServer {
	return c.startAt(c.data, shard, listen, extra...)
}

// startAt is start on another data directory.
func (c *testCluster) startAt(data string, shard int, listen string, extra ...string) *testServer {
	args := []string{"--data-dir", data, "--listen", listen, "--admin-listen", "",
		"--metrics-listen", "", "--poll-interval", "0.2", "--drain-period", "0"}
	if shard >= 0 {
		args = append(args, "--shard", fmt.Sprint(shard))
	}
	args = append(args, extra...)
	logPath := filepath.Join(c.dir, fmt.Sprintf("server%d.log", len(c.servers)))
	logFile, err := os.Create(logPath)
	if err != nil {
		c.t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(c.server, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	s := &testServer{t: c.t, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	c.servers = append(c.servers, s)
	go func() { cmd.Wait(); close(s.done) }()
	s.address = s.waitLog(listening)[1]
	s.waitLog(regexp.MustCompile(`roost-server: ready: `))
	return s
}

// startCluster starts shards x replicas servers and returns their layout.
func (c *testCluster) startCluster(shards, replicas int, extra ...string) ([][]*testServer, Layout) {
	servers := make([][]*testServer, shards)
	var layout Layout
	for s := 0; s < shards; s++ {
		var targets []string
		for r := 0; r < replicas; r++ {
			srv := c.start(s, "127.0.0.1:0", extra...)
			servers[s] = append(servers[s], srv)
			targets = append(targets, srv.address)
		}
		layout.Shards = append(layout.Shards, targets)
	}
	return servers, layout
}

func (c *testCluster) close() {
	for _, s := range c.servers {
		s.cmd.Process.Signal(syscall.SIGCONT) // a stopped one too
		s.kill()
	}
	for _, s := range c.servers {
		log := s.log()
		for _, report := range []string{"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"} {
			if strings.Contains(log, report) {
				c.t.Errorf("roost-server's log holds a sanitizer report:%s", s.describe())
			}
		}
	}
}

// servingEverywhere waits until every server serves version of table.
func waitServing(t testing.TB, client *Client, table, version string) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := client.Wait(ctx, table, version, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}
