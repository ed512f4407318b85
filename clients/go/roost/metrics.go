package roost

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/codes"
)

// Metrics are the client metrics of tests/conformance/README.md ("Client
// metrics"), the same names, labels and meanings in every roost client, as
// Prometheus collectors:
//
//	roost_client_requests_total{method}         calls made (get, multi_get, scan), one each whatever their retries
//	roost_client_keys_total{method}             keys asked for: 1 per Get, the batch's size per MultiGet, 0 per Scan
//	roost_client_errors_total{method,code}      calls that ended in an error, by its gRPC code name
//	roost_client_partial_keys_total{code}       keys that partial answers marked with their shard's error
//	roost_client_request_seconds{method}        histogram: each call's time, from the call to its answer or error
//	roost_client_hedges_total                   hedged attempts sent
//	roost_client_retries_total                  attempts sent again (another replica, or after a backoff) after a retryable failure
//	roost_client_version_switches_total         answers of a table from another version than the client's previous answer of it
//
// Make one with NewMetrics and give it to Options.Metrics; several clients
// may share one (their counts add up). A nil *Metrics counts nothing.
type Metrics struct {
	requests, keys  *prometheus.CounterVec
	errors          *prometheus.CounterVec
	partialKeys     *prometheus.CounterVec
	seconds         *prometheus.HistogramVec
	hedges, retries prometheus.Counter
	versionSwitches prometheus.Counter
}

// The method label's values.
const (
	methodGet      = "get"
	methodMultiGet = "multi_get"
	methodScan     = "scan"
)

// MetricsBuckets are roost_client_request_seconds' buckets: 0.25 ms to
// about 16 s, doubling.
var MetricsBuckets = prometheus.ExponentialBuckets(0.00025, 2, 17)

// NewMetrics makes the client metrics and registers them with reg (nil:
// registered nowhere, as promauto.With(nil) does). Registering with a reg
// that already holds them (another NewMetrics of the same reg) shares
// those: the counts of every client that uses either add up.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "roost_client_requests_total",
			Help: "Calls the application made to the roost client (Get, MultiGet, Scan), one each whatever their retries.",
		}, []string{"method"}),
		keys: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "roost_client_keys_total",
			Help: "Keys asked for: 1 per Get, the batch's size per MultiGet, 0 per Scan.",
		}, []string{"method"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "roost_client_errors_total",
			Help: "Calls that ended in an error, by its gRPC code name.",
		}, []string{"method", "code"}),
		partialKeys: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "roost_client_partial_keys_total",
			Help: "Keys that partial answers marked with their shard's error (the call itself succeeded).",
		}, []string{"code"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "roost_client_request_seconds",
			Help:    "Each call's time, from the call to its answer or error.",
			Buckets: MetricsBuckets,
		}, []string{"method"}),
		hedges: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "roost_client_hedges_total",
			Help: "Hedged attempts sent.",
		}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "roost_client_retries_total",
			Help: "Attempts sent again, to another replica or after a backoff, after a retryable failure.",
		}),
		versionSwitches: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "roost_client_version_switches_total",
			Help: "Answers of a table from another version than the client's previous answer of that table.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	m.requests, err = register(reg, m.requests, err)
	m.keys, err = register(reg, m.keys, err)
	m.errors, err = register(reg, m.errors, err)
	m.partialKeys, err = register(reg, m.partialKeys, err)
	m.seconds, err = register(reg, m.seconds, err)
	m.hedges, err = register(reg, m.hedges, err)
	m.retries, err = register(reg, m.retries, err)
	m.versionSwitches, err = register(reg, m.versionSwitches, err)
	if err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c with reg (unless an earlier one failed), or takes
// the collector reg already holds under its name.
func register[C prometheus.Collector](reg prometheus.Registerer, c C, err error) (C, error) {
	if err != nil {
		return c, err
	}
	if err := reg.Register(c); err != nil {
		var already prometheus.AlreadyRegisteredError
		if errors.As(err, &already) {
			if existing, ok := already.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}

// call counts one finished call of method.
func (m *Metrics) call(method string, keys int, seconds float64, err error, code codes.Code) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(method).Inc()
	m.keys.WithLabelValues(method).Add(float64(keys))
	m.seconds.WithLabelValues(method).Observe(seconds)
	if err != nil {
		m.errors.WithLabelValues(method, CodeName(code)).Inc()
	}
}

func (m *Metrics) partialKey(code codes.Code) {
	if m != nil {
		m.partialKeys.WithLabelValues(CodeName(code)).Inc()
	}
}

func (m *Metrics) hedged() {
	if m != nil {
		m.hedges.Inc()
	}
}

func (m *Metrics) retried() {
	if m != nil {
		m.retries.Inc()
	}
}

func (m *Metrics) versionSwitched() {
	if m != nil {
		m.versionSwitches.Inc()
	}
}
