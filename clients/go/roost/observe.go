package roost

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/status"
)

// What a client tells about each call: Options.Metrics' counts and
// Options.TracerProvider's span, both ended when the call returns.

// tracerName is the instrumentation scope of the client's spans.
const tracerName = "roost.dev/roost"

// The spans' attributes.
const (
	attrTable      = attribute.Key("roost.table")
	attrKeys       = attribute.Key("roost.keys")        // keys asked for
	attrVersion    = attribute.Key("roost.version")     // the version answered
	attrFailedKeys = attribute.Key("roost.failed_keys") // partial answers' marked keys
	attrCode       = attribute.Key("rpc.grpc.status_code")
)

var spanNames = map[string]string{methodGet: "roost.Get", methodMultiGet: "roost.MultiGet", methodScan: "roost.Scan"}

type observation struct {
	c      *Client
	method string
	table  string
	keys   int
	start  time.Time
	span   trace.Span // nil: no tracer
}

// observe starts a call of method: its span (a child of ctx's), when the
// client has a tracer, in the context it returns.
func (c *Client) observe(ctx context.Context, method, table string, keys int) (context.Context, *observation) {
	o := &observation{c: c, method: method, table: table, keys: keys, start: time.Now()}
	if c.tracer != nil {
		attrs := []attribute.KeyValue{attrTable.String(table)}
		if method != methodScan {
			attrs = append(attrs, attrKeys.Int(keys))
		}
		ctx, o.span = c.tracer.Start(ctx, spanNames[method],
			trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	return ctx, o
}

// end records the call's end: the version it answered from ("" when it
// failed or cannot know), the keys partial answers marked, its error.
func (o *observation) end(version string, failedKeys int, err error) {
	code := status.Code(err)
	o.c.opts.Metrics.call(o.method, o.keys, time.Since(o.start).Seconds(), err, code)
	if err == nil && version != "" {
		o.c.sawVersion(o.table, version)
	}
	if o.span == nil {
		return
	}
	if version != "" {
		o.span.SetAttributes(attrVersion.String(version))
	}
	if failedKeys > 0 {
		o.span.SetAttributes(attrFailedKeys.Int(failedKeys))
	}
	o.span.SetAttributes(attrCode.Int(int(code)))
	if err != nil {
		o.span.RecordError(err)
		o.span.SetStatus(otelcodes.Error, CodeName(code)+": "+status.Convert(err).Message())
	}
	o.span.End()
}

// sawVersion notes that table answered from version, and counts a version
// switch when the client's previous answer of table was from another.
func (c *Client) sawVersion(table, version string) {
	v := c.lastVersion
	v.mu.Lock()
	previous, ok := v.last[table]
	v.last[table] = version
	v.mu.Unlock()
	if ok && !sameVersion(previous, version) {
		c.opts.Metrics.versionSwitched()
	}
}

type tableVersions struct {
	mu   sync.Mutex
	last map[string]string // table: the version of its last answer
}
