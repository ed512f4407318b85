package roost

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func mustClient(t *testing.T, layout Layout, opts Options) *Client {
	t.Helper()
	c, err := New(layout, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func wantCode(t *testing.T, err error, code codes.Code, text string) {
	t.Helper()
	if status.Code(err) != code || !strings.Contains(status.Convert(err).Message(), text) {
		t.Fatalf("got %v, want %v with %q", err, code, text)
	}
}

// checkBatch checks that r answers keys with values (keys not in it
// missing) and returns how many were found.
func checkBatch(keys [][]byte, r *MultiGetResult, values map[string][]byte) (int, error) {
	if len(r.Results) != len(keys) {
		return 0, fmt.Errorf("%d results for %d keys", len(r.Results), len(keys))
	}
	found := 0
	for i, k := range keys {
		want, ok := values[string(k)]
		got := r.Results[i]
		if got.Found != ok || !bytes.Equal(got.Value, want) || (ok && got.Value == nil) {
			return 0, fmt.Errorf("key %q (position %d): got found=%v %q, want found=%v %q", k, i, got.Found, got.Value, ok, want)
		}
		if ok {
			found++
		}
	}
	return found, nil
}

func valueMap(kvs []kv) map[string][]byte {
	m := map[string][]byte{}
	for _, e := range kvs {
		m[string(e.key)] = e.value
	}
	return m
}

// 3 shards x 2 replicas: every key found with its value, in request order,
// misses, duplicates, binary keys, an empty value, an empty batch, Get.
func TestGetAndMultiGet(t *testing.T) {
	c := newCluster(t)
	kvs := keysAndValues(300, "")
	c.build("users", kvs, 3)
	_, layout := c.startCluster(3, 2)
	client := mustClient(t, layout, Options{})
	ctx := context.Background()
	values := valueMap(kvs)

	var keys [][]byte
	for i, e := range kvs {
		keys = append(keys, e.key)
		if i%7 == 0 {
			keys = append(keys, []byte(fmt.Sprintf("missing %d", i)), e.key) // a miss, a duplicate
		}
	}
	r, err := client.MultiGet(ctx, "users", keys)
	if err != nil {
		t.Fatal(err)
	}
	if found, err := checkBatch(keys, r, values); err != nil || found != len(kvs)+len(kvs)/7+1 {
		t.Fatalf("%d found: %v", found, err)
	}
	if r.Version != "v000001" {
		t.Fatalf("version %q, want v000001", r.Version)
	}
	shardsUsed := map[int]bool{}
	for _, k := range keys {
		shardsUsed[client.ShardOf(k)] = true
	}
	if len(shardsUsed) != 3 {
		t.Fatalf("the keys fell in %d shards", len(shardsUsed))
	}

	for _, e := range kvs[len(kvs)-3:] { // the empty key, a binary one, an empty value
		g, err := client.Get(ctx, "users", e.key)
		if err != nil {
			t.Fatal(err)
		}
		if !g.Found || !bytes.Equal(g.Value, e.value) || g.Value == nil || g.Version != "v000001" {
			t.Fatalf("Get(%q) = %+v, want %q", e.key, g, e.value)
		}
	}
	g, err := client.Get(ctx, "users", []byte("nobody"))
	if err != nil || g.Found || g.Value != nil {
		t.Fatalf("Get(nobody) = %+v, %v", g, err)
	}
	empty, err := client.MultiGet(ctx, "users", nil)
	if err != nil || len(empty.Results) != 0 {
		t.Fatalf("empty batch: %+v, %v", empty, err)
	}

	_, err = client.Get(ctx, "nosuchtable", []byte("k"))
	wantCode(t, err, codes.NotFound, "nosuchtable")
	if !strings.Contains(err.Error(), "shard ") {
		t.Fatalf("the error names no shard: %v", err)
	}

	// The shards listed in another order: a stale layout, never a miss.
	reversed := Layout{Shards: [][]string{layout.Shards[2], layout.Shards[1], layout.Shards[0]}}
	stale := mustClient(t, reversed, Options{})
	_, err = stale.MultiGet(ctx, "users", keys)
	wantCode(t, err, codes.FailedPrecondition, "stale cluster layout: shard ")
	// Two shards where there are three.
	_, err = mustClient(t, Layout{Shards: layout.Shards[:2]}, Options{}).MultiGet(ctx, "users", keys)
	wantCode(t, err, codes.FailedPrecondition, "stale cluster layout")

	// A context's deadline is the call's.
	past, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	_, err = client.MultiGet(past, "users", keys)
	wantCode(t, err, codes.DeadlineExceeded, "")
}

// A replica of each shard SIGKILLed while batches run: every batch still
// answers every key; then a shard with no replica left is UNAVAILABLE,
// naming the shard, the replica and the attempts.
func TestReplicaKilledMidBatch(t *testing.T) {
	c := newCluster(t)
	kvs := keysAndValues(200, "")
	c.build("users", kvs, 3)
	servers, layout := c.startCluster(3, 2)
	client := mustClient(t, layout, Options{})
	values := valueMap(kvs)
	var keys [][]byte
	for _, e := range kvs {
		keys = append(keys, e.key)
	}

	var batches atomic.Int64
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := client.MultiGet(context.Background(), "users", keys)
				if err != nil {
					errs <- err
					return
				}
				if _, err := checkBatch(keys, r, values); err != nil {
					errs <- err
					return
				}
				batches.Add(1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	before := batches.Load()
	for s := 0; s < 3; s++ {
		servers[s][s%2].kill()
	}
	// Until 20 more batches have run, or one failed.
	for end := time.Now().Add(waitTimeout); batches.Load()-before < 20 && len(errs) == 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("a batch failed after a replica was killed: %v", err)
	}
	t.Logf("%d batches before the kills, %d after", before, batches.Load()-before)
	if batches.Load()-before < 20 {
		t.Fatalf("only %d batches after the kills", batches.Load()-before)
	}

	servers[1][0].kill() // shard 1 has no replica left (1 was killed above)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := client.MultiGet(ctx, "users", keys)
	wantCode(t, err, codes.Unavailable, "shard 1 (")
	wantCode(t, err, codes.Unavailable, "; no replica answered before the deadline)")
	t.Log(err)
}

// A replica that hangs (SIGSTOP): without hedging, calls sent to it wait
// for the deadline; with hedging, another replica answers them.
func TestHedging(t *testing.T) {
	c := newCluster(t)
	kvs := keysAndValues(50, "")
	c.build("users", kvs, 1)
	servers, layout := c.startCluster(1, 2)
	servers[0][0].hang()
	key := kvs[0].key

	plain := mustClient(t, layout, Options{Timeout: time.Second})
	failed := 0
	for i := 0; i < 4; i++ { // round-robin: half go to the stopped one
		if _, err := plain.Get(context.Background(), "users", key); status.Code(err) == codes.DeadlineExceeded {
			failed++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if failed != 2 {
		t.Fatalf("%d of 4 calls without hedging failed, want the 2 sent to the stopped replica", failed)
	}

	hedged := mustClient(t, layout, Options{Timeout: 5 * time.Second, HedgeDelay: 30 * time.Millisecond})
	for i := 0; i < 4; i++ {
		start := time.Now()
		g, err := hedged.Get(context.Background(), "users", key)
		if err != nil || !g.Found {
			t.Fatalf("hedged Get: %+v, %v", g, err)
		}
		if d := time.Since(start); d > 4*time.Second {
			t.Fatalf("a hedged Get took %v", d)
		}
	}
}

// A rollout: v2 published while batches run. Every batch is all-v1 or
// all-v2 and names the version it read; then Wait, and a pinned read of
// the replaced version within --version-grace.
func TestRollout(t *testing.T) {
	c := newCluster(t)
	v1 := keysAndValues(200, "v1 ")
	v2 := keysAndValues(200, "v2 ")
	c.build("users", v1, 3)
	_, layout := c.startCluster(3, 2)
	client := mustClient(t, layout, Options{})
	byVersion := map[string]map[string][]byte{"v000001": valueMap(v1), "v000002": valueMap(v2)}
	var keys [][]byte
	for _, e := range v1 {
		keys = append(keys, e.key)
	}

	seen := map[string]*atomic.Int64{"v000001": {}, "v000002": {}}
	stop := make(chan struct{})
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				r, err := client.MultiGet(context.Background(), "users", keys)
				if err != nil {
					errs <- err
					return
				}
				values, ok := byVersion[r.Version]
				if !ok {
					errs <- fmt.Errorf("a batch names version %q", r.Version)
					return
				}
				if _, err := checkBatch(keys, r, values); err != nil { // every value of that version
					errs <- fmt.Errorf("a batch of %s: %v", r.Version, err)
					return
				}
				seen[r.Version].Add(1)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	c.build("users", v2, 3)
	waitServing(t, client, "users", "2")
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("batches: %d of v1, %d of v2", seen["v000001"].Load(), seen["v000002"].Load())
	if seen["v000001"].Load() == 0 || seen["v000002"].Load() == 0 {
		t.Fatal("the batches did not see both versions")
	}

	ctx := context.Background()
	r, err := client.MultiGet(ctx, "users", keys, AtVersion("1"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkBatch(keys, r, byVersion["v000001"]); err != nil {
		t.Fatal(err)
	}
	g, err := client.Get(ctx, "users", v1[0].key, AtVersion("v000001"))
	if err != nil || !bytes.Equal(g.Value, v1[0].value) || g.Version != "v000001" {
		t.Fatalf("pinned Get: %+v, %v", g, err)
	}
	_, err = client.Get(ctx, "users", v1[0].key, AtVersion("v000009"))
	wantCode(t, err, codes.FailedPrecondition, "shard ")

	short, cancel := context.WithTimeout(ctx, 2*time.Second) // the calls are answered well before
	defer cancel()
	err = client.Wait(short, "users", "v000009", 50*time.Millisecond)
	wantCode(t, err, codes.DeadlineExceeded, "serves v000002")
	wantCode(t, client.Wait(ctx, "users", "x7", 0), codes.InvalidArgument, "not a version")
}

// A Wait whose last round is cut by its own deadline still says what each
// replica served: the replica that stopped answering is reported with its
// last answer, not with the deadline that cut the call (CI once saw every
// replica reported "DEADLINE_EXCEEDED" when a round began just before the
// deadline, and the message lost "serves v000001").
func TestWaitKeepsTheLastAnswerOfACallCutByTheDeadline(t *testing.T) {
	c := newCluster(t)
	c.build("users", keysAndValues(20, "v1 "), 1)
	servers, layout := c.startCluster(1, 2)
	client := mustClient(t, layout, Options{})
	waitServing(t, client, "users", "1")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- client.Wait(ctx, "users", "v000009", 50*time.Millisecond) }()
	time.Sleep(time.Second) // rounds every 50 ms, answered by both
	servers[0][0].hang()    // every later call to it ends with the wait
	err := <-done
	wantCode(t, err, codes.DeadlineExceeded, servers[0][0].address+": serves v000001 (its last answer")
	wantCode(t, err, codes.DeadlineExceeded, servers[0][1].address+": serves v000001")
	if strings.Contains(status.Convert(err).Message(), "context deadline exceeded") {
		t.Fatalf("the deadline stands in for an answer: %v", err)
	}
}

// Scan of a block table over 3 shards: merged in key order, a prefix, a
// range with a limit (more), the whole table; a cuckoo table refused.
func TestScan(t *testing.T) {
	c := newCluster(t)
	var kvs []kv
	for i := 0; i < 120; i++ {
		kvs = append(kvs, kv{[]byte(fmt.Sprintf("b%03d", i)), []byte(fmt.Sprintf("value %d", i))})
	}
	c.buildFormat("b", kvs, 3, "block")
	c.build("t", kvs, 3)
	_, layout := c.startCluster(3, 2)
	client := mustClient(t, layout, Options{})
	ctx := context.Background()
	keysOf := func(r *ScanResult) string {
		var keys []string
		for _, e := range r.Entries {
			keys = append(keys, string(e.Key))
		}
		return strings.Join(keys, " ")
	}

	r, err := client.Scan(ctx, "b", ScanOptions{Prefix: []byte("b01")})
	if err != nil {
		t.Fatal(err)
	}
	if keysOf(r) != "b010 b011 b012 b013 b014 b015 b016 b017 b018 b019" || r.More || r.Version != "v000001" {
		t.Fatalf("prefix b01: %q more=%v %q", keysOf(r), r.More, r.Version)
	}
	if string(r.Entries[3].Value) != "value 13" {
		t.Fatalf("b013's value %q", r.Entries[3].Value)
	}
	r, err = client.Scan(ctx, "b", ScanOptions{Start: []byte("b100"), End: []byte("b110"), Limit: 4})
	if err != nil || keysOf(r) != "b100 b101 b102 b103" || !r.More {
		t.Fatalf("b100..b110 limit 4: %q more=%v %v", keysOf(r), r.More, err)
	}
	r, err = client.Scan(ctx, "b", ScanOptions{Start: []byte("b117")})
	if err != nil || keysOf(r) != "b117 b118 b119" || r.More {
		t.Fatalf("from b117: %q more=%v %v", keysOf(r), r.More, err)
	}
	r, err = client.Scan(ctx, "b", ScanOptions{})
	if err != nil || len(r.Entries) != 120 || r.More {
		t.Fatalf("the whole table: %d entries, more=%v, %v", len(r.Entries), r.More, err)
	}
	for i, e := range r.Entries {
		if !bytes.Equal(e.Key, kvs[i].key) || !bytes.Equal(e.Value, kvs[i].value) {
			t.Fatalf("entry %d: %q=%q", i, e.Key, e.Value)
		}
	}
	_, err = client.Scan(ctx, "t", ScanOptions{})
	wantCode(t, err, codes.FailedPrecondition, "shard ")
}

// Concurrent Gets coalesced into MultiGets: every answer right, far fewer
// calls than Gets; a Get that names a version goes on its own.
func TestCoalescedGets(t *testing.T) {
	c := newCluster(t)
	kvs := keysAndValues(300, "")
	c.build("users", kvs, 3)
	_, layout := c.startCluster(3, 2)
	client := mustClient(t, layout, Options{CoalesceGets: true, CoalesceMaxInFlight: 1})
	values := valueMap(kvs)
	errs := make(chan error, 64)
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				key := kvs[(g*31+i*7)%len(kvs)].key
				if i%5 == 0 {
					key = []byte(fmt.Sprintf("missing %d %d", g, i))
				}
				r, err := client.Get(context.Background(), "users", key)
				want, ok := values[string(key)]
				if err != nil || r.Found != ok || !bytes.Equal(r.Value, want) || r.Version != "v000001" {
					errs <- fmt.Errorf("Get(%q) = %+v, %v; want %q", key, r, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var batches, gets uint64
	for _, q := range client.coalescers {
		batches += q.batches.Load()
		gets += q.gets.Load()
	}
	t.Logf("%d Gets in %d MultiGets", gets, batches)
	if gets != 64*30 || batches >= gets/2 {
		t.Fatalf("%d Gets in %d MultiGets", gets, batches)
	}
	g, err := client.Get(context.Background(), "users", kvs[0].key, AtVersion("1"))
	if err != nil || !bytes.Equal(g.Value, kvs[0].value) {
		t.Fatalf("a pinned Get: %+v, %v", g, err)
	}
	_, err = client.Get(context.Background(), "nosuchtable", kvs[0].key)
	wantCode(t, err, codes.NotFound, "shard ")
}

// Shards that serve different versions and keep no other (--version-grace
// 0): the batch pins the newer part to the older version (refused), then
// moves forward to the newer (refused too) until the deadline: ABORTED,
// naming both. Once the lagging shard has the newer version, the same
// batch is read from it, all of it.
func TestNoVersionAgreedIsAborted(t *testing.T) {
	c := newCluster(t)
	v1 := keysAndValues(100, "v1 ")
	v2 := keysAndValues(100, "v2 ")
	behind := filepath.Join(c.dir, "behind")
	if err := os.Mkdir(behind, 0o755); err != nil {
		t.Fatal(err)
	}
	c.build("users", v1, 2)
	c.build("users", v2, 2)
	c.buildAt(behind, "users", v1, 2, "cuckoo")
	ahead := c.start(0, "127.0.0.1:0", "--version-grace", "0")
	late := c.startAt(behind, 1, "127.0.0.1:0", "--version-grace", "0")
	client := mustClient(t, Layout{Shards: [][]string{{ahead.address}, {late.address}}}, Options{})
	var keys [][]byte
	for _, e := range v1 {
		keys = append(keys, e.key)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := client.MultiGet(ctx, "users", keys)
	wantCode(t, err, codes.Aborted, "versions seen: v000001, v000002")
	t.Log(err)

	c.buildAt(behind, "users", v2, 2, "cuckoo") // shard 1 catches up
	r, err := client.MultiGet(context.Background(), "users", keys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := checkBatch(keys, r, valueMap(v2)); err != nil || r.Version != "v000002" {
		t.Fatalf("after the catch-up: %q, %v", r.Version, err)
	}
}

// A batch larger than the servers' --max-batch goes as several calls per
// shard (Options.MaxBatch), read from one version: every key answered in
// request order, through a rollout too; with MaxBatch above the servers'
// limit the same batch is refused, and a negative MaxBatch is refused by
// New.
func TestBatchesOverMaxBatchGoInParts(t *testing.T) {
	c := newCluster(t)
	v1 := keysAndValues(1000, "v1 ")
	v2 := keysAndValues(1000, "v2 ")
	c.build("users", v1, 2)
	_, layout := c.startCluster(2, 2, "--max-batch", "70")
	client := mustClient(t, layout, Options{MaxBatch: 70})
	var keys [][]byte
	for _, e := range v1 {
		keys = append(keys, e.key)
	}
	keys = append(keys, []byte("no such key"), v1[3].key) // a miss, a duplicate
	ctx := context.Background()
	r, err := client.MultiGet(ctx, "users", keys)
	if err != nil {
		t.Fatal(err)
	}
	if found, err := checkBatch(keys, r, valueMap(v1)); err != nil || found != len(keys)-1 {
		t.Fatalf("found %d of %d: %v", found, len(keys)-1, err)
	}
	if r.Version != "v000001" {
		t.Fatalf("version %q", r.Version)
	}
	_, err = mustClient(t, layout, Options{}).MultiGet(ctx, "users", keys)
	wantCode(t, err, codes.InvalidArgument, "exceeds --max-batch 70")
	if _, err := New(layout, Options{MaxBatch: -1}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("MaxBatch -1: %v", err)
	}

	// Through a rollout, each batch's parts (15 per shard) agree.
	byVersion := map[string]map[string][]byte{"v000001": valueMap(v1), "v000002": valueMap(v2)}
	seen := map[string]int{}
	done := make(chan error)
	go func() {
		for {
			r, err := client.MultiGet(ctx, "users", keys[:1000])
			if err != nil {
				done <- err
				return
			}
			values, ok := byVersion[r.Version]
			if !ok {
				done <- fmt.Errorf("a batch names version %q", r.Version)
				return
			}
			if _, err := checkBatch(keys[:1000], r, values); err != nil {
				done <- fmt.Errorf("a batch of %s: %v", r.Version, err)
				return
			}
			seen[r.Version]++
			if seen["v000002"] >= 3 {
				done <- nil
				return
			}
		}
	}()
	time.Sleep(100 * time.Millisecond)
	c.build("users", v2, 2)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("batches: %d of v1, %d of v2", seen["v000001"], seen["v000002"])
}

// With partial answers, a live shard's parts answer while a dead shard's
// retry until the deadline: the parts go out at once, not one after the
// other (the Python client once sent them in turn, and the dead shard's
// first part took the whole deadline from the live shard's later ones).
func TestAPartialBatchInPartsAnswersTheLiveShard(t *testing.T) {
	c := newCluster(t)
	kvs := keysAndValues(2000, "")
	c.build("users", kvs, 2)
	servers, layout := c.startCluster(2, 1, "--max-batch", "70")
	client := mustClient(t, layout, Options{MaxBatch: 70, PartialAnswers: true, Timeout: 3 * time.Second})
	var keys [][]byte
	for _, e := range kvs {
		keys = append(keys, e.key)
	}
	servers[0][0].kill()
	r, err := client.MultiGet(context.Background(), "users", keys)
	if err != nil {
		t.Fatal(err)
	}
	if n := checkPartial(t, client, keys, r, valueMap(kvs), map[int]codes.Code{0: codes.Unavailable}); n == 0 || n == len(keys) {
		t.Fatalf("%d of %d keys marked", n, len(keys))
	}
	if r.Version != "v000001" {
		t.Fatalf("version %q", r.Version)
	}
}
