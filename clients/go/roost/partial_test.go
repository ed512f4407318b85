package roost

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// checkPartial checks that every key of a shard in down carries an error
// of that shard with its code, and every other key its value; it returns
// how many keys were marked.
func checkPartial(t *testing.T, client *Client, keys [][]byte, r *MultiGetResult, values map[string][]byte, down map[int]codes.Code) int {
	t.Helper()
	if len(r.Results) != len(keys) {
		t.Fatalf("%d results for %d keys", len(r.Results), len(keys))
	}
	marked := 0
	for i, k := range keys {
		got := r.Results[i]
		s := client.ShardOf(k)
		if code, ok := down[s]; ok {
			marked++
			if status.Code(got.Err) != code || got.Found || got.Value != nil ||
				!strings.Contains(status.Convert(got.Err).Message(), "shard "+string(rune('0'+s))+" (") {
				t.Fatalf("key %q of shard %d (down): got found=%v %q, error %v; want %v naming the shard", k, s, got.Found, got.Value, got.Err, code)
			}
			continue
		}
		want := values[string(k)]
		if got.Err != nil || !got.Found || !bytes.Equal(got.Value, want) {
			t.Fatalf("key %q of shard %d: got found=%v %q, error %v; want %q", k, s, got.Found, got.Value, got.Err, want)
		}
	}
	if marked != r.FailedKeys {
		t.Fatalf("%d keys marked, FailedKeys %d", marked, r.FailedKeys)
	}
	return marked
}

// Partial answers against 3 x 2 servers: a shard with both replicas killed
// marks only its keys UNAVAILABLE, a shard whose replicas hang (SIGSTOP)
// marks its keys DEADLINE_EXCEEDED, the others answer from one version; a
// stale layout, an unknown table, a Get of a dead shard and a batch of
// dead shards only still fail; without the option the batch fails.
func TestPartialAnswers(t *testing.T) {
	c := newCluster(t)
	kvs := keysAndValues(300, "")
	c.build("users", kvs, 3)
	servers, layout := c.startCluster(3, 2)
	reg := prometheus.NewRegistry()
	metrics, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Timeout: 2 * time.Second, PartialAnswers: true, Metrics: metrics}
	client := mustClient(t, layout, opts)
	plain := mustClient(t, layout, Options{Timeout: 2 * time.Second})
	ctx := context.Background()
	values := valueMap(kvs)
	var keys, shard1Keys [][]byte
	var shard0Key []byte
	for _, e := range kvs {
		keys = append(keys, e.key)
		switch client.ShardOf(e.key) {
		case 0:
			shard0Key = e.key
		case 1:
			shard1Keys = append(shard1Keys, e.key)
		}
	}

	r, err := client.MultiGet(ctx, "users", keys)
	if err != nil {
		t.Fatal(err)
	}
	if checkPartial(t, client, keys, r, values, nil) != 0 {
		t.Fatal("keys marked with every shard up")
	}

	servers[1][0].kill()
	servers[1][1].kill()
	r, err = client.MultiGet(ctx, "users", keys)
	if err != nil {
		t.Fatal(err)
	}
	if n := checkPartial(t, client, keys, r, values, map[int]codes.Code{1: codes.Unavailable}); n != len(shard1Keys) || n == 0 {
		t.Fatalf("%d keys marked, shard 1 has %d", n, len(shard1Keys))
	}
	if r.Version != "v000001" {
		t.Fatalf("version %q", r.Version)
	}
	// The call succeeded: its marked keys are counted, not an error.
	wantSample(t, reg, float64(len(shard1Keys)), "roost_client_partial_keys_total", "code=UNAVAILABLE")
	wantSample(t, reg, 0, "roost_client_errors_total")
	t.Logf("shard 1's keys: %v", r.Results[indexOf(keys, shard1Keys[0])].Err)

	_, err = plain.MultiGet(ctx, "users", keys)
	wantCode(t, err, codes.Unavailable, "shard 1 (")
	// No shard answered: nothing partial about it.
	_, err = client.Get(ctx, "users", shard1Keys[0])
	wantCode(t, err, codes.Unavailable, "shard 1 (")
	_, err = client.MultiGet(ctx, "users", shard1Keys)
	wantCode(t, err, codes.Unavailable, "shard 1 (")
	if g, err := client.Get(ctx, "users", shard0Key); err != nil || !g.Found {
		t.Fatalf("Get of a live shard: %+v, %v", g, err)
	}
	// Other failures fail the call.
	_, err = client.MultiGet(ctx, "nosuchtable", keys)
	wantCode(t, err, codes.NotFound, "nosuchtable")
	reversed := Layout{Shards: [][]string{layout.Shards[2], layout.Shards[1], layout.Shards[0]}}
	_, err = mustClient(t, reversed, opts).MultiGet(ctx, "users", keys)
	wantCode(t, err, codes.FailedPrecondition, "stale cluster layout: shard ")

	// Shard 2 hangs: its keys end at the deadline.
	for _, s := range servers[2] {
		s.hang()
	}
	start := time.Now()
	r, err = client.MultiGet(ctx, "users", keys)
	if err != nil {
		t.Fatal(err)
	}
	checkPartial(t, client, keys, r, values, map[int]codes.Code{1: codes.Unavailable, 2: codes.DeadlineExceeded})
	if d := time.Since(start); d > 4*time.Second {
		t.Fatalf("the partial batch took %v, its deadline is 2 s", d)
	}
	// Shard 0 down too: no shard answered.
	servers[0][0].kill()
	servers[0][1].kill()
	_, err = client.MultiGet(ctx, "users", keys)
	if code := status.Code(err); code != codes.Unavailable && code != codes.DeadlineExceeded {
		t.Fatalf("every shard down: %v", err)
	}
}

func indexOf(keys [][]byte, key []byte) int {
	for i, k := range keys {
		if bytes.Equal(k, key) {
			return i
		}
	}
	return -1
}
