package roost

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
)

func spanAttrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// Options.TracerProvider against 3 x 2 servers, with the SDK's in-memory
// exporter: one span per Get, MultiGet and Scan (a coalesced Get's too),
// a child of the caller's, with the table, the keys, the version answered,
// the failed keys of a partial answer and the error status; no provider,
// no spans.
func TestTracing(t *testing.T) {
	c := newCluster(t)
	kvs := keysAndValues(60, "")
	c.build("users", kvs, 3)
	c.buildFormat("b", kvs[:20], 3, "block")
	servers, layout := c.startCluster(3, 2)
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer provider.Shutdown(context.Background())
	client := mustClient(t, layout, Options{TracerProvider: provider, PartialAnswers: true, Timeout: 2 * time.Second})
	coalescing := mustClient(t, layout, Options{TracerProvider: provider, CoalesceGets: true})
	untraced := mustClient(t, layout, Options{})
	var keys [][]byte
	for _, e := range kvs {
		keys = append(keys, e.key)
	}
	ctx, parent := provider.Tracer("test").Start(context.Background(), "the caller")

	if _, err := client.MultiGet(ctx, "users", keys); err != nil {
		t.Fatal(err)
	}
	if _, err := coalescing.Get(ctx, "users", keys[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Scan(ctx, "b", ScanOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err := client.Get(ctx, "nosuchtable", keys[0])
	wantCode(t, err, codes.NotFound, "nosuchtable")
	if _, err := untraced.MultiGet(ctx, "users", keys); err != nil {
		t.Fatal(err)
	}
	servers[2][0].kill()
	servers[2][1].kill()
	partial, err := client.MultiGet(ctx, "users", keys)
	if err != nil || partial.FailedKeys == 0 {
		t.Fatalf("partial: %+v, %v", partial, err)
	}
	parent.End()

	spans := exporter.GetSpans()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "roost.MultiGet roost.Get roost.Scan roost.Get roost.MultiGet the caller" {
		t.Fatalf("spans: %s", got)
	}
	for _, s := range spans[:5] {
		if s.Parent.SpanID() != parent.SpanContext().SpanID() || s.SpanKind != trace.SpanKindClient {
			t.Fatalf("span %s: parent %v kind %v", s.Name, s.Parent.SpanID(), s.SpanKind)
		}
		if a := spanAttrs(s); a["roost.table"].AsString() == "" {
			t.Fatalf("span %s has no table: %v", s.Name, s.Attributes)
		}
	}
	want := []struct {
		table    string
		keys     int64 // -1: none (a Scan)
		version  string
		code     codes.Code
		failed   int64
		inStatus string
	}{
		{"users", 60 + 3, "v000001", codes.OK, 0, ""},
		{"users", 1, "v000001", codes.OK, 0, ""},
		{"b", -1, "v000001", codes.OK, 0, ""},
		{"nosuchtable", 1, "", codes.NotFound, 0, "NOT_FOUND: shard "},
		{"users", 60 + 3, "v000001", codes.OK, int64(partial.FailedKeys), ""},
	}
	for i, w := range want {
		s := spans[i]
		a := spanAttrs(s)
		keys, hasKeys := a["roost.keys"]
		version, hasVersion := a["roost.version"]
		if a["roost.table"].AsString() != w.table || (w.keys < 0) == hasKeys || (hasKeys && keys.AsInt64() != w.keys) ||
			(w.version == "") == hasVersion || version.AsString() != w.version ||
			a["rpc.grpc.status_code"].AsInt64() != int64(w.code) || a["roost.failed_keys"].AsInt64() != w.failed {
			t.Fatalf("span %d %s: attributes %v, want %+v", i, s.Name, s.Attributes, w)
		}
		if w.code == codes.OK {
			if s.Status.Code != otelcodes.Unset || len(s.Events) != 0 {
				t.Fatalf("span %d %s: status %+v, events %v", i, s.Name, s.Status, s.Events)
			}
		} else if s.Status.Code != otelcodes.Error || !strings.Contains(s.Status.Description, w.inStatus) ||
			len(s.Events) != 1 || s.Events[0].Name != "exception" {
			t.Fatalf("span %d %s: status %+v, events %v; want an error with %q and its exception", i, s.Name, s.Status, s.Events, w.inStatus)
		}
	}
}
