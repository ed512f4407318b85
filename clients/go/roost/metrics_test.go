package roost

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
)

// sample is the value of metric name in reg summed over the series whose
// labels hold every one of labels ("method=get"); a histogram's count.
func sample(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for _, want := range labels {
				k, v, _ := strings.Cut(want, "=")
				if have[k] != v {
					continue series
				}
			}
			if h := m.GetHistogram(); h != nil {
				sum += float64(h.GetSampleCount())
			} else {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func wantSample(t *testing.T, reg *prometheus.Registry, want float64, name string, labels ...string) {
	t.Helper()
	if got := sample(t, reg, name, labels...); got != want {
		t.Fatalf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// The client metrics of tests/conformance/README.md against 3 x 2
// servers, two clients sharing them (NewMetrics twice on one registry):
// calls, keys, errors by code and latency per method; version switches
// through a rollout and a pinned read; retries around a killed replica;
// hedges around a hung one.
func TestMetrics(t *testing.T) {
	c := newCluster(t)
	kvs := keysAndValues(100, "v1 ")
	c.build("users", kvs, 3)
	c.buildFormat("b", kvs[:20], 3, "block")
	servers, layout := c.startCluster(3, 2)
	reg := prometheus.NewRegistry()
	m1, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := NewMetrics(reg) // the same registry: shares m1's
	if err != nil {
		t.Fatal(err)
	}
	a := mustClient(t, layout, Options{Metrics: m1})
	b := mustClient(t, layout, Options{Metrics: m2})
	ctx := context.Background()
	var keys [][]byte
	for _, e := range kvs {
		keys = append(keys, e.key)
	}

	if _, err := a.Get(ctx, "users", keys[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MultiGet(ctx, "users", keys[:10]); err != nil {
		t.Fatal(err)
	}
	_, err = a.Get(ctx, "nosuchtable", keys[0])
	wantCode(t, err, codes.NotFound, "nosuchtable")
	if _, err := a.MultiGet(ctx, "users", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Scan(ctx, "b", ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.MultiGet(ctx, "users", keys[:5]); err != nil {
		t.Fatal(err)
	}
	_, err = b.Scan(ctx, "users", ScanOptions{}) // a cuckoo table
	wantCode(t, err, codes.FailedPrecondition, "")
	wantSample(t, reg, 2, "roost_client_requests_total", "method=get")
	wantSample(t, reg, 3, "roost_client_requests_total", "method=multi_get")
	wantSample(t, reg, 2, "roost_client_requests_total", "method=scan")
	wantSample(t, reg, 2, "roost_client_keys_total", "method=get")
	wantSample(t, reg, 15, "roost_client_keys_total", "method=multi_get")
	wantSample(t, reg, 0, "roost_client_keys_total", "method=scan")
	wantSample(t, reg, 1, "roost_client_errors_total", "method=get", "code=NOT_FOUND")
	wantSample(t, reg, 1, "roost_client_errors_total", "method=scan", "code=FAILED_PRECONDITION")
	wantSample(t, reg, 2, "roost_client_errors_total")
	wantSample(t, reg, 3, "roost_client_request_seconds", "method=multi_get")
	wantSample(t, reg, 7, "roost_client_request_seconds")
	for _, name := range []string{"roost_client_retries_total", "roost_client_hedges_total",
		"roost_client_version_switches_total", "roost_client_partial_keys_total"} {
		wantSample(t, reg, 0, name)
	}

	// A rollout: each client's next answer of users is a switch; a pinned
	// read of v1 another, and back to v2 a third.
	c.build("users", keysAndValues(100, "v2 "), 3)
	waitServing(t, a, "users", "v000002")
	for _, client := range []*Client{a, b} {
		if r, err := client.MultiGet(ctx, "users", keys[:10]); err != nil || r.Version != "v000002" {
			t.Fatalf("after the rollout: %v, %v", r, err)
		}
	}
	wantSample(t, reg, 2, "roost_client_version_switches_total")
	if g, err := a.Get(ctx, "users", keys[0], AtVersion("1")); err != nil || g.Version != "v000001" {
		t.Fatalf("pinned to v1: %+v, %v", g, err)
	}
	if _, err := a.Get(ctx, "users", keys[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Scan(ctx, "b", ScanOptions{}); err != nil { // another table, the same version
		t.Fatal(err)
	}
	wantSample(t, reg, 4, "roost_client_version_switches_total")

	// A replica killed: round-robin sends every second Get of its shard to
	// it first, and each of those is tried again on the other.
	servers[0][0].kill()
	var shard0 [][]byte
	for _, k := range keys {
		if a.ShardOf(k) == 0 {
			shard0 = append(shard0, k)
		}
	}
	for _, k := range shard0[:4] {
		if g, err := a.Get(ctx, "users", k); err != nil || !g.Found {
			t.Fatalf("Get with a replica down: %+v, %v", g, err)
		}
	}
	wantSample(t, reg, 2, "roost_client_retries_total")

	// A replica hung: every second Get of its shard is hedged (after 1 s,
	// which no Get of a live replica takes, even on a loaded machine).
	servers[1][0].hang()
	hedging := mustClient(t, layout, Options{Metrics: m1, HedgeDelay: time.Second, Timeout: 10 * time.Second})
	var shard1 [][]byte
	for _, k := range keys {
		if a.ShardOf(k) == 1 {
			shard1 = append(shard1, k)
		}
	}
	for _, k := range shard1[:4] {
		if g, err := hedging.Get(ctx, "users", k); err != nil || !g.Found {
			t.Fatalf("hedged Get: %+v, %v", g, err)
		}
	}
	wantSample(t, reg, 2, "roost_client_hedges_total")
	wantSample(t, reg, 2, "roost_client_retries_total")
	wantSample(t, reg, 2, "roost_client_errors_total")

	// A Metrics of another registry counts apart; nil registers nowhere.
	other := prometheus.NewRegistry()
	m3, err := NewMetrics(other)
	if err != nil {
		t.Fatal(err)
	}
	var shard2Key []byte
	for _, k := range keys {
		if a.ShardOf(k) == 2 {
			shard2Key = k
		}
	}
	if _, err := mustClient(t, layout, Options{Metrics: m3}).Get(ctx, "users", shard2Key); err != nil {
		t.Fatal(err)
	}
	wantSample(t, other, 1, "roost_client_requests_total")
	if _, err := NewMetrics(nil); err != nil {
		t.Fatal(err)
	}
}
