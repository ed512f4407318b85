package roost

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The service of README.md's "A service in 20 lines", as written there:
// extracted, built in a module of its own that requires roost.dev (this
// checkout's, by a replace), and run against 3 real servers; a key found,
// a key missing.
func TestReadmeService(t *testing.T) {
	module := filepath.Join(repoRoot(t), "clients", "go")
	readme, err := os.ReadFile(filepath.Join(module, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## A service in 20 lines")
	_, code, ok2 := strings.Cut(section, "```go\n")
	code, _, ok3 := strings.Cut(code, "```\n")
	if !ok || !ok2 || !ok3 || !strings.Contains(code, "package main") {
		t.Fatal("README.md has no ```go block under \"## A service in 20 lines\"")
	}

	dir := t.TempDir()
	gomod := fmt.Sprintf("module example.com/service\n\ngo 1.26\n\nrequire roost.dev v0.0.0\n\nreplace roost.dev => %s\n", module)
	sum, err := os.ReadFile(filepath.Join(module, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string][]byte{"main.go": []byte(code), "go.mod": []byte(gomod), "go.sum": sum} {
		if err := os.WriteFile(filepath.Join(dir, name), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"mod", "tidy"}, {"build", "-buildvcs=false", "-o", "service", "."}} {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s in the README's service: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	c := newCluster(t)
	c.build("users", []kv{{[]byte("42"), []byte(`{"name": "Ada"}`)}, {[]byte("7"), []byte("x")}}, 3)
	_, layout := c.startCluster(3, 1)
	layoutPath := filepath.Join(dir, "cluster.json")
	text := `{"shards": [["` + layout.Shards[0][0] + `"], ["` + layout.Shards[1][0] + `"], ["` + layout.Shards[2][0] + `"]]}`
	if err := os.WriteFile(layoutPath, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address := listener.Addr().String()
	listener.Close()
	service := exec.Command(filepath.Join(dir, "service"))
	service.Env = append(os.Environ(), "ROOST_LAYOUT="+layoutPath, "LISTEN="+address)
	var log strings.Builder
	service.Stdout, service.Stderr = &log, &log
	if err := service.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { service.Process.Kill(); service.Wait() }()

	get := func(path string) (int, string) {
		end := time.Now().Add(waitTimeout)
		for {
			r, err := http.Get("http://" + address + path)
			if err == nil {
				body, _ := io.ReadAll(r.Body)
				r.Body.Close()
				return r.StatusCode, string(body)
			}
			if time.Now().After(end) {
				t.Fatalf("the README's service does not answer: %v\n%s", err, log.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if code, body := get("/users/42"); code != 200 || body != `{"name": "Ada"}` {
		t.Fatalf("/users/42: %d %q", code, body)
	}
	if code, _ := get("/users/43"); code != 404 {
		t.Fatalf("/users/43: %d, want 404", code)
	}
}
