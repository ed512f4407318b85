// roost-conformance-runner drives the Go client for the client conformance
// suite (tests/conformance/README.md has the protocol): one JSON request
// per line on stdin, one JSON answer per line on stdout, in order.
//
//	python3 tests/conformance/run_conformance.py --runner go -- \
//	    clients/go/roost-conformance-runner
//
// Ops: partition, open, get, multi_get, scan, wait, metrics (the client's
// Prometheus metrics since open, gathered from a registry of its own and
// summed over their labels). Options: timeout_s, hedge_s, token, coalesce,
// partial, monotonic; any other is refused with a USAGE error, as the
// protocol asks.
package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc/status"

	"roost.dev/roost"
)

type usageError struct{ message string }

func (e usageError) Error() string { return e.message }

func usage(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

type layoutError struct{ err error }

func (e layoutError) Error() string { return e.err.Error() }

type request map[string]json.RawMessage

// members refuses members other than allowed (and "op").
func (r request) members(op string, allowed ...string) error {
	var unknown []string
	for name := range r {
		if name == "op" {
			continue
		}
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return usage("unknown members %v of %s", unknown, op)
	}
	return nil
}

// get decodes member name into out; a missing one is an error unless
// optional.
func (r request) get(name string, out any, optional bool) error {
	raw, ok := r[name]
	if !ok {
		if optional {
			return nil
		}
		return usage("no member %q", name)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return usage("member %q: %v", name, err)
	}
	return nil
}

func (r request) bytes(name string) ([]byte, error) {
	var text string
	if err := r.get(name, &text, false); err != nil {
		return nil, err
	}
	return unb64(name, text)
}

func unb64(name, text string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(text)
	if err != nil {
		return nil, usage("member %q is not base64: %v", name, err)
	}
	return b, nil
}

type runner struct {
	client   *roost.Client
	registry *prometheus.Registry // the client's metrics
}

func (r *runner) handle(req request) (any, error) {
	var op string
	if err := req.get("op", &op, false); err != nil {
		return nil, err
	}
	switch op {
	case "partition":
		if err := req.members(op, "key", "shards"); err != nil {
			return nil, err
		}
		key, err := req.bytes("key")
		if err != nil {
			return nil, err
		}
		var shards int
		if err := req.get("shards", &shards, false); err != nil {
			return nil, err
		}
		if shards < 1 || shards > roost.MaxShards {
			return nil, usage("shards %d is not in 1..%d", shards, roost.MaxShards)
		}
		return map[string]any{"shard": roost.PartitionOf(key, uint32(shards))}, nil
	case "open":
		return r.open(req)
	}
	if r.client == nil {
		return nil, usage("%s before open", op)
	}
	var table, version string
	switch op {
	case "get":
		if err := req.members(op, "table", "key", "version"); err != nil {
			return nil, err
		}
		key, err := req.bytes("key")
		if err != nil {
			return nil, err
		}
		if err := req.get("table", &table, false); err != nil {
			return nil, err
		}
		if err := req.get("version", &version, true); err != nil {
			return nil, err
		}
		g, err := r.client.Get(context.Background(), table, key, pin(version)...)
		if err != nil {
			return nil, err
		}
		return map[string]any{"found": g.Found, "value": base64.StdEncoding.EncodeToString(g.Value), "version": g.Version}, nil
	case "multi_get":
		if err := req.members(op, "table", "keys", "version"); err != nil {
			return nil, err
		}
		var texts []string
		if err := req.get("keys", &texts, false); err != nil {
			return nil, err
		}
		keys := make([][]byte, len(texts))
		for i, t := range texts {
			var err error
			if keys[i], err = unb64(fmt.Sprintf("keys[%d]", i), t); err != nil {
				return nil, err
			}
		}
		if err := req.get("table", &table, false); err != nil {
			return nil, err
		}
		if err := req.get("version", &version, true); err != nil {
			return nil, err
		}
		m, err := r.client.MultiGet(context.Background(), table, keys, pin(version)...)
		if err != nil {
			return nil, err
		}
		results := make([]map[string]any, len(m.Results))
		for i, res := range m.Results {
			if res.Err != nil {
				s := status.Convert(res.Err)
				results[i] = map[string]any{"error": map[string]any{"code": roost.CodeName(s.Code()),
					"message": s.Message(), "shard": r.client.ShardOf(keys[i])}}
				continue
			}
			results[i] = map[string]any{"found": res.Found, "value": base64.StdEncoding.EncodeToString(res.Value)}
		}
		return map[string]any{"results": results, "version": m.Version}, nil
	case "wait":
		if err := req.members(op, "table", "version", "timeout_s"); err != nil {
			return nil, err
		}
		var timeout float64
		if err := req.get("table", &table, false); err != nil {
			return nil, err
		}
		if err := req.get("version", &version, false); err != nil {
			return nil, err
		}
		if err := req.get("timeout_s", &timeout, false); err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), seconds(timeout))
		defer cancel()
		if err := r.client.Wait(ctx, table, version, 50*time.Millisecond); err != nil {
			return nil, err
		}
		return map[string]any{}, nil
	case "scan":
		if err := req.members(op, "table", "start", "end", "prefix", "limit"); err != nil {
			return nil, err
		}
		if err := req.get("table", &table, false); err != nil {
			return nil, err
		}
		var scan roost.ScanOptions
		for name, out := range map[string]*[]byte{"start": &scan.Start, "end": &scan.End, "prefix": &scan.Prefix} {
			if _, ok := req[name]; ok {
				var err error
				if *out, err = req.bytes(name); err != nil {
					return nil, err
				}
			}
		}
		if err := req.get("limit", &scan.Limit, true); err != nil {
			return nil, err
		}
		s, err := r.client.Scan(context.Background(), table, scan)
		if err != nil {
			return nil, err
		}
		entries := make([][2]string, len(s.Entries))
		for i, e := range s.Entries {
			entries[i] = [2]string{base64.StdEncoding.EncodeToString(e.Key), base64.StdEncoding.EncodeToString(e.Value)}
		}
		return map[string]any{"entries": entries, "more": s.More, "version": s.Version}, nil
	case "metrics":
		if err := req.members(op); err != nil {
			return nil, err
		}
		return r.metrics()
	}
	return nil, usage("the Go runner has no op %q", op)
}

// metrics answers the metrics op from the client's registry: each metric
// summed over its labels, errors by code.
func (r *runner) metrics() (any, error) {
	families, err := r.registry.Gather()
	if err != nil {
		return nil, err
	}
	out := map[string]any{"requests": 0.0, "keys": 0.0, "errors": map[string]float64{}, "partial_keys": 0.0,
		"hedges": 0.0, "retries": 0.0, "version_switches": 0.0}
	names := map[string]string{
		"roost_client_requests_total": "requests", "roost_client_keys_total": "keys",
		"roost_client_partial_keys_total": "partial_keys", "roost_client_hedges_total": "hedges",
		"roost_client_retries_total": "retries", "roost_client_version_switches_total": "version_switches",
	}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if f.GetName() == "roost_client_errors_total" {
				for _, l := range m.GetLabel() {
					if l.GetName() == "code" {
						out["errors"].(map[string]float64)[l.GetValue()] += m.GetCounter().GetValue()
					}
				}
			} else if name, ok := names[f.GetName()]; ok {
				out[name] = out[name].(float64) + m.GetCounter().GetValue()
			}
		}
	}
	return out, nil
}

func (r *runner) open(req request) (any, error) {
	if err := req.members("open", "layout", "options"); err != nil {
		return nil, err
	}
	var path string
	if err := req.get("layout", &path, false); err != nil {
		return nil, err
	}
	var options map[string]json.RawMessage
	if err := req.get("options", &options, true); err != nil {
		return nil, err
	}
	var opts roost.Options
	for name, raw := range options {
		var err error
		switch name {
		case "timeout_s", "hedge_s":
			var s float64
			if err = json.Unmarshal(raw, &s); err == nil && s < 0 {
				err = fmt.Errorf("negative")
			}
			if name == "timeout_s" {
				opts.Timeout = seconds(s)
			} else {
				opts.HedgeDelay = seconds(s)
			}
		case "token":
			err = json.Unmarshal(raw, &opts.Token)
		case "coalesce":
			err = json.Unmarshal(raw, &opts.CoalesceGets)
		case "partial":
			err = json.Unmarshal(raw, &opts.PartialAnswers)
		case "monotonic":
			err = json.Unmarshal(raw, &opts.Monotonic)
		default:
			return nil, usage("the Go client has no option %s", name)
		}
		if err != nil {
			return nil, usage("option %s: %v", name, err)
		}
	}
	if r.client != nil {
		r.client.Close()
		r.client = nil
	}
	registry := prometheus.NewRegistry()
	metrics, err := roost.NewMetrics(registry)
	if err != nil {
		return nil, err
	}
	opts.Metrics = metrics
	client, err := roost.Open(path, opts)
	if err != nil {
		return nil, layoutError{err}
	}
	r.client, r.registry = client, registry
	return map[string]any{}, nil
}

func pin(version string) []roost.CallOption {
	if version == "" {
		return nil
	}
	return []roost.CallOption{roost.AtVersion(version)}
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func answerOf(result any, err error) any {
	if err == nil {
		return result
	}
	code, message := "", err.Error()
	switch e := err.(type) {
	case usageError:
		code = "USAGE"
	case layoutError:
		code, message = "LAYOUT", status.Convert(e.err).Message()
	default:
		s := status.Convert(err)
		code, message = roost.CodeName(s.Code()), s.Message()
	}
	return map[string]any{"error": map[string]string{"code": code, "message": message}}
}

func main() {
	r := &runner{}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for {
		line, readErr := in.ReadString('\n')
		if strings.TrimSpace(line) != "" {
			var req request
			var answer any
			if err := json.Unmarshal([]byte(line), &req); err != nil || req == nil {
				answer = answerOf(nil, usage("not a JSON object: %.100q", line))
			} else {
				answer = answerOf(r.handle(req))
			}
			text, err := json.Marshal(answer)
			if err != nil {
				text, _ = json.Marshal(answerOf(nil, usage("cannot encode the answer: %v", err)))
			}
			out.Write(append(text, '\n'))
			out.Flush()
		}
		if readErr != nil {
			break
		}
	}
	if r.client != nil {
		r.client.Close()
	}
}
