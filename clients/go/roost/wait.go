package roost

import (
	"context"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	roostv1 "roost.dev/gen/go/roost/v1"
)

// DefaultWaitTimeout is Wait's deadline when its context has none.
const DefaultWaitTimeout = 60 * time.Second

// Wait returns nil once every replica of every shard serves version
// ("v000007" or "7") of table, as `roost-admin wait` checks: each
// replica's ListTables, every pollInterval (0: 200 ms). A
// "dns:///NAME:PORT" target stands for every address NAME resolves to
// (again at each round), each asked on its own. It fails
// DEADLINE_EXCEEDED when ctx's deadline (without one: 60 s) passes first,
// naming the replicas that do not serve it and what they serve (for a
// call the deadline cut short, the replica's last answer);
// FAILED_PRECONDITION at once when a replica serves another shard of the
// table than the layout says (waiting would never end).
func (c *Client) Wait(ctx context.Context, table, version string, pollInterval time.Duration) error {
	if table == "" {
		return status.Error(codes.InvalidArgument, "the table name is empty")
	}
	want, ok := versionNumber(version)
	if !ok {
		return status.Errorf(codes.InvalidArgument, "%q is not a version (\"v000007\" or \"7\")", version)
	}
	if pollInterval <= 0 {
		pollInterval = 200 * time.Millisecond
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultWaitTimeout)
		defer cancel()
	}
	ctx = withToken(ctx, c.opts.Token)
	// Connections to resolved addresses, kept between rounds.
	resolved := map[string]*grpc.ClientConn{}
	defer func() {
		for _, conn := range resolved {
			conn.Close()
		}
	}()
	type ask struct {
		shard  int
		where  string
		stub   roostv1.LookupClient
		answer string // "" when it serves the version
		stale  bool
		cut    bool // the call failed because the wait itself ended
	}
	// Each replica's answer in the last round not cut short: a round begun
	// just before the deadline has its calls cut by it, and the error then
	// reports what each of them last said rather than the deadline.
	last := map[string]string{}
	for {
		var asks []*ask
		var lagging []string
		for s, sh := range c.shards {
			for _, r := range sh.replicas {
				host, port, isDNS := dnsTarget(r.target)
				if !isDNS {
					asks = append(asks, &ask{shard: s, where: fmt.Sprintf("shard %d %s", s, r.target), stub: r.stub})
					continue
				}
				addresses, err := net.DefaultResolver.LookupHost(ctx, host)
				if err != nil {
					lagging = append(lagging, fmt.Sprintf("shard %d %s: cannot resolve: %v", s, r.target, err))
					continue
				}
				sort.Strings(addresses)
				for _, a := range addresses {
					address := net.JoinHostPort(a, port)
					conn := resolved[address]
					if conn == nil {
						var err error
						if conn, err = c.dialResolved(address, host); err != nil {
							return err
						}
						resolved[address] = conn
					}
					asks = append(asks, &ask{shard: s, where: fmt.Sprintf("shard %d %s", s, address), stub: roostv1.NewLookupClient(conn)})
				}
			}
		}
		callTimeout := time.Until(deadlineOf(ctx))
		callTimeout = max(50*time.Millisecond, min(2*time.Second, callTimeout))
		var wg sync.WaitGroup
		for _, a := range asks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cctx, cancel := context.WithTimeout(ctx, callTimeout)
				defer cancel()
				list, err := a.stub.ListTables(cctx, &roostv1.ListTablesRequest{})
				if err != nil {
					s := status.Convert(err)
					a.answer = fmt.Sprintf("%s: %s", CodeName(s.Code()), s.Message())
					a.cut = ctx.Err() != nil
					return
				}
				for _, info := range list.GetTables() {
					if info.GetName() != table {
						continue
					}
					n := uint32(len(c.shards))
					if info.GetShardCount() != 0 && (info.GetShardCount() != n || int(info.GetShard()) != a.shard) {
						a.stale = true
						a.answer = fmt.Sprintf("serves shard %d of %d of table %s; the layout has %d shards",
							info.GetShard(), info.GetShardCount(), table, n)
						return
					}
					if got, ok := versionNumber(info.GetServingVersion()); ok && got == want {
						return
					}
					serving := info.GetServingVersion()
					if serving == "" {
						serving = "no version"
					}
					a.answer = "serves " + serving
					return
				}
				a.answer = "does not serve table " + table
			}()
		}
		wg.Wait()
		for _, a := range asks {
			if previous := last[a.where]; a.cut && previous != "" {
				a.answer = previous + " (its last answer; the call after it was cut by the deadline)"
			} else if a.answer == "" {
				last[a.where] = "serves " + versionName(want)
			} else {
				last[a.where] = a.answer
			}
			if a.stale {
				return status.Errorf(codes.FailedPrecondition, "%s%s: %s", staleLayout, a.where, a.answer)
			}
			if a.answer != "" {
				lagging = append(lagging, a.where+": "+a.answer)
			}
		}
		if len(lagging) == 0 {
			return nil
		}
		pause := min(pollInterval, time.Until(deadlineOf(ctx)))
		t := time.NewTimer(max(pause, 0))
		select {
		case <-t.C:
			if time.Now().Before(deadlineOf(ctx)) && ctx.Err() == nil {
				continue
			}
		case <-ctx.Done():
			t.Stop()
		}
		code := codes.DeadlineExceeded
		if ctx.Err() == context.Canceled {
			code = codes.Canceled
		}
		return status.Errorf(code, "not every replica serves %s %s before the deadline: %s",
			table, versionName(want), strings.Join(lagging, "; "))
	}
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// dnsTarget splits "dns:///HOST:PORT" or "dns:HOST:PORT" (port 443 when
// none, as gRPC takes it; IPv6 literals in brackets); ok is false for any
// other target, and for one naming its own DNS server.
func dnsTarget(target string) (host, port string, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(target, "dns:///"):
		rest = target[len("dns:///"):]
	case strings.HasPrefix(target, "dns:") && !strings.HasPrefix(target, "dns://"):
		rest = target[len("dns:"):]
	default:
		return "", "", false
	}
	if h, p, err := net.SplitHostPort(rest); err == nil {
		return h, p, h != ""
	}
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "["), "]")
	return rest, "443", rest != ""
}

// dialResolved connects to one address of a dns: target; with TLS, the
// certificate must hold the name (unless the layout names another).
func (c *Client) dialResolved(address, name string) (*grpc.ClientConn, error) {
	if c.creds == nil || (c.layout.TLS != nil && c.layout.TLS.ServerName != "") {
		return c.dial(address, false)
	}
	creds, err := transportCredentials(&TLSConfig{CA: c.layout.TLS.CA, Cert: c.layout.TLS.Cert, Key: c.layout.TLS.Key, ServerName: name})
	if err != nil {
		return nil, err
	}
	c2 := *c
	c2.creds = creds
	return c2.dial(address, false)
}

// CodeName is the canonical name of a gRPC code, as the conformance
// suite and the other clients write it: "UNAVAILABLE", "DEADLINE_EXCEEDED".
func CodeName(code codes.Code) string {
	if code == codes.OK {
		return "OK"
	}
	name := code.String()
	var out strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			out.WriteByte('_')
		}
		out.WriteRune(r)
	}
	return strings.ToUpper(out.String())
}
