package roost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	roostv1 "roost.dev/gen/go/roost/v1"
)

// monoTracker checks one client's calls against monotonic reads: a call
// never answers from a version older than one a call of the client had
// answered from before it started.
type monoTracker struct {
	newest atomic.Uint64
	counts [4]atomic.Int64 // calls answered from v1, v2, v3
}

// check takes a call's version and the tracker's newest when it started.
func (m *monoTracker) check(what, version string, before uint64) error {
	v, ok := versionNumber(version)
	if !ok || v == 0 || v > 3 {
		return fmt.Errorf("%s answered from version %q", what, version)
	}
	if v < before {
		return fmt.Errorf("%s answered from %s after a call had answered from v%06d", what, version, before)
	}
	m.counts[v].Add(1)
	for {
		n := m.newest.Load()
		if v <= n || m.newest.CompareAndSwap(n, v) {
			return nil
		}
	}
}

// bounds returns the floor and the withdrawn range (after, through] of
// the client's state of the table users (0: none).
func bounds(c *Client) (floor, after, through uint64) {
	t := c.monotonic.table("users")
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.floor, t.withdrawnAfter, t.withdrawn
}

// A rollout and a rollback against 3 shards x 2 real servers that pull
// from a table repository, one replica of shard 2 from a repository of its
// own that gets v2 only later (so that it lags behind the others).
//
// Rollout: while the lagging replica still serves v1, the monotonic
// clients (plain and coalescing Gets) never answer v1 again once they
// answered v2, every answer whole from its version; a client without the
// option flips between v2 and v1 on Gets of shard 2 in the same window
// (what the option prevents is there to prevent).
//
// Rollback to v1: the servers name v2 in withdrawn_through, and the
// monotonic clients, whose floor was v2, answer v1 (MultiGet, a Get on
// each shard, Scan): their floor went back to v1 and v2 is withdrawn. A
// client that ignored the signal would have stayed on its floor. A fresh
// v3 is read again.
func TestMonotonicRolloutAndRollback(t *testing.T) {
	c := newCluster(t)
	repo, lagging := filepath.Join(c.dir, "repo"), filepath.Join(c.dir, "repo-lagging")
	for _, dir := range []string{repo, lagging} {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	versions := map[int][]kv{}
	byVersion := map[string]map[string][]byte{}
	for v := 1; v <= 3; v++ {
		versions[v] = keysAndValues(150, fmt.Sprintf("v%d ", v))
		byVersion[versionName(uint64(v))] = valueMap(versions[v])
	}
	for _, r := range []string{repo, lagging} {
		c.publish(r, "users", versions[1], 3, "block")
	}
	var layout Layout
	for s := 0; s < 3; s++ {
		var targets []string
		for r := 0; r < 2; r++ {
			from := repo
			if s == 2 && r == 1 {
				from = lagging
			}
			targets = append(targets, c.startPulling(from, s, "--version-grace", "120").address)
		}
		layout.Shards = append(layout.Shards, targets)
	}
	mono := mustClient(t, layout, Options{Monotonic: true})
	coalescing := mustClient(t, layout, Options{Monotonic: true, CoalesceGets: true})
	plain := mustClient(t, layout, Options{})
	var keys [][]byte
	keysOf := make([][][]byte, 3) // per shard
	for _, e := range versions[1] {
		keys = append(keys, e.key)
		keysOf[mono.ShardOf(e.key)] = append(keysOf[mono.ShardOf(e.key)], e.key)
	}
	ctx := context.Background()

	// getOK and multiGetOK: one call, its values those of the version it
	// names.
	getOK := func(client *Client, key []byte, opts ...CallOption) (string, error) {
		r, err := client.Get(ctx, "users", key, opts...)
		if err != nil {
			return "", err
		}
		if want, ok := byVersion[r.Version][string(key)]; !r.Found || !ok || !bytes.Equal(r.Value, want) {
			return "", fmt.Errorf("Get(%q) of %s: %+v", key, r.Version, r)
		}
		return r.Version, nil
	}
	multiGetOK := func(client *Client, opts ...CallOption) (string, error) {
		r, err := client.MultiGet(ctx, "users", keys, opts...)
		if err != nil {
			return "", err
		}
		values, ok := byVersion[r.Version]
		if !ok {
			return "", fmt.Errorf("a batch names version %q", r.Version)
		}
		if _, err := checkBatch(keys, r, values); err != nil {
			return "", fmt.Errorf("a batch of %s: %v", r.Version, err)
		}
		return r.Version, nil
	}

	// The rollout.
	trackers := map[*Client]*monoTracker{mono: {}, coalescing: {}}
	stop := make(chan struct{})
	errs := make(chan error, 16)
	var plainFlips atomic.Int64
	var wg sync.WaitGroup
	worker := func(body func(i int) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := body(i); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for w := 0; w < 2; w++ {
		worker(func(i int) error { // batches and Gets of the lagging shard
			tr := trackers[mono]
			before := tr.newest.Load()
			if i%2 == 0 {
				v, err := multiGetOK(mono)
				if err != nil {
					return err
				}
				return tr.check("a MultiGet", v, before)
			}
			key := keysOf[2][(w*7+i)%len(keysOf[2])]
			v, err := getOK(mono, key)
			if err != nil {
				return err
			}
			return tr.check("a Get of shard 2", v, before)
		})
	}
	for w := 0; w < 4; w++ {
		worker(func(i int) error { // coalesced Gets of every shard
			tr := trackers[coalescing]
			before := tr.newest.Load()
			key := keys[(w*37+i*11)%len(keys)]
			v, err := getOK(coalescing, key)
			if err != nil {
				return err
			}
			return tr.check(fmt.Sprintf("a coalesced Get of shard %d", coalescing.ShardOf(key)), v, before)
		})
	}
	var plainNewest atomic.Uint64
	worker(func(i int) error { // the control: Gets of shard 2 without the option
		v, err := getOK(plain, keysOf[2][i%len(keysOf[2])])
		if err != nil {
			return err
		}
		n, _ := versionNumber(v)
		if n < plainNewest.Load() {
			plainFlips.Add(1)
		}
		if n > plainNewest.Load() {
			plainNewest.Store(n)
		}
		return nil
	})
	time.Sleep(200 * time.Millisecond)
	c.publish(repo, "users", versions[2], 3, "block")
	// The window: five replicas serve v2, shard 2's second one v1. It
	// lasts until the monotonic clients have read v2 and the control
	// flipped, and then a while more.
	end := time.Now().Add(waitTimeout)
	for trackers[mono].newest.Load() < 2 || trackers[coalescing].newest.Load() < 2 || plainFlips.Load() == 0 {
		if time.Now().After(end) {
			t.Fatalf("in %v, the monotonic clients did not read v2 (%d, %d) or the control never flipped (%d)",
				waitTimeout, trackers[mono].newest.Load(), trackers[coalescing].newest.Load(), plainFlips.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	c.publish(lagging, "users", versions[2], 3, "block")
	waitServing(t, plain, "users", "2")
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for name, client := range map[string]*Client{"plain": mono, "coalescing": coalescing} {
		tr := trackers[client]
		t.Logf("monotonic client (%s): %d calls answered from v1, %d from v2", name, tr.counts[1].Load(), tr.counts[2].Load())
		if tr.counts[1].Load() == 0 || tr.counts[2].Load() == 0 {
			t.Fatalf("the %s monotonic client did not answer from both versions", name)
		}
	}
	t.Logf("the control client went back from v2 to v1 %d times", plainFlips.Load())

	// The rollback. Each client's floor is v2: without the servers'
	// signal, its calls would stay pinned there (read from v2 while the
	// servers keep it, ABORTED once they do not).
	for name, client := range map[string]*Client{"plain": mono, "coalescing": coalescing} {
		if floor, _, _ := bounds(client); floor != 2 {
			t.Fatalf("the %s monotonic client's floor is %d before the rollback; want 2", name, floor)
		}
	}
	for _, r := range []string{repo, lagging} {
		c.rollback(r, "users", "v000001")
	}
	waitServing(t, plain, "users", "1")
	raw, err := mono.shards[0].replicas[0].stub.Get(ctx, &roostv1.GetRequest{Table: "users", Key: keysOf[0][0]})
	if err != nil {
		t.Fatal(err)
	}
	if raw.GetVersion() != "v000001" || raw.GetWithdrawnThrough() != "v000002" {
		t.Fatalf("after the rollback a server answers from %q, withdrawn_through %q; want v000001 and v000002 (a server without the signal?)",
			raw.GetVersion(), raw.GetWithdrawnThrough())
	}
	for name, client := range map[string]*Client{"plain": mono, "coalescing": coalescing} {
		if v, err := multiGetOK(client); err != nil || v != "v000001" {
			t.Fatalf("%s monotonic client after the rollback: a MultiGet answered %q, %v; want v000001", name, v, err)
		}
		for s := range 3 {
			if v, err := getOK(client, keysOf[s][0]); err != nil || v != "v000001" {
				t.Fatalf("%s monotonic client after the rollback: a Get of shard %d answered %q, %v; want v000001", name, s, v, err)
			}
		}
	}
	for name, client := range map[string]*Client{"plain": mono, "coalescing": coalescing} {
		if floor, after, through := bounds(client); floor != 1 || after != 1 || through != 2 {
			t.Fatalf("the %s monotonic client's floor %d and withdrawn range (%d, %d] after the rollback; want 1 and (1, 2]", name, floor, after, through)
		}
	}
	scan, err := mono.Scan(ctx, "users", ScanOptions{})
	if err != nil || scan.Version != "v000001" || len(scan.Entries) != len(versions[1]) {
		t.Fatalf("a Scan after the rollback: %v; want all %d entries of v000001", err, len(versions[1]))
	}
	sorted := append([]kv(nil), versions[1]...)
	sort.Slice(sorted, func(i, j int) bool { return bytes.Compare(sorted[i].key, sorted[j].key) < 0 })
	for i, e := range scan.Entries {
		if !bytes.Equal(e.Key, sorted[i].key) || !bytes.Equal(e.Value, sorted[i].value) {
			t.Fatalf("the Scan's entry %d: %q=%q", i, e.Key, e.Value)
		}
	}

	// A version published after the withdrawn one is read again.
	for _, r := range []string{repo, lagging} {
		c.publish(r, "users", versions[3], 3, "block")
	}
	waitServing(t, plain, "users", "3")
	for name, client := range map[string]*Client{"plain": mono, "coalescing": coalescing} {
		if v, err := multiGetOK(client); err != nil || v != "v000003" {
			t.Fatalf("%s monotonic client after v3: a MultiGet answered %q, %v; want v000003", name, v, err)
		}
		if v, err := getOK(client, keysOf[1][0]); err != nil || v != "v000003" {
			t.Fatalf("%s monotonic client after v3: a Get answered %q, %v; want v000003", name, v, err)
		}
	}
}
