// Package roost is the Go routing client of a sharded roost cluster: it
// routes each key to its shard by the partition function
// (docs/format/partitioning.md), splits a MultiGet per shard and sends the
// parts at once, spreads calls over each shard's replicas, retries a part
// on another replica, optionally hedges, and reads every batch from one
// table version. The same contract as the C++ client (client/) and the
// Python one (clients/python).
//
// The guarantee: every result of one call comes from the one table version
// the result names, on every shard, or the call fails (ABORTED when no
// version could be agreed on before the deadline). A layout that does not
// match the table (shards listed in another order, or another count) fails
// FAILED_PRECONDITION "stale cluster layout: shard I (TARGET): key J
// belongs to shard K of N; ...", never a silent miss.
//
// Every error a call returns is a gRPC status error: status.Code(err) is
// its code, and its message names the shard and replica that gave it.
//
// A Client is safe for concurrent use; make one per cluster and share it.
package roost

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	roostv1 "roost.dev/gen/go/roost/v1"
)

// Options are a Client's settings; the zero value is the defaults.
type Options struct {
	// Timeout is the deadline of a call whose context has none: every
	// attempt, retry and version round of it. 0: 10 seconds. A context
	// with a deadline is the call's deadline.
	Timeout time.Duration
	// HedgeDelay: when a shard's part has not answered after this long, a
	// second call goes to another replica and the first answer wins. 0
	// turns hedging off.
	HedgeDelay time.Duration
	// Backoff is the wait before a shard all of whose replicas failed is
	// tried again, doubling each round up to MaxBackoff; also the first
	// wait before a batch re-reads a newer version. 0: 20 ms and 500 ms.
	Backoff, MaxBackoff time.Duration
	// Token is sent as "authorization: Bearer TOKEN" with every call
	// (roost-server's --access-policy). Never in the layout file.
	Token string
	// DialOptions are appended to the client's own for every connection.
	DialOptions []grpc.DialOption
	// CoalesceGets sends concurrent Gets of one shard together as
	// MultiGets: a Get goes out at once while fewer than
	// CoalesceMaxInFlight MultiGets of its table are on the wire, else it
	// waits for one of them to answer and goes out with the others that
	// waited (at most CoalesceMaxBatch keys, the servers' --max-batch or
	// less). Such a Get's version is the one that answered its key (a
	// single key is read from one shard). A Get with AtVersion is never
	// coalesced. Defaults: off, 4, 1000.
	CoalesceGets        bool
	CoalesceMaxInFlight int
	CoalesceMaxBatch    int
	// PartialAnswers: a MultiGet whose shard could not answer (its
	// retries ended UNAVAILABLE or RESOURCE_EXHAUSTED at the deadline, or
	// the deadline itself) answers the keys of the other shards, all from
	// one version, and gives each key of that shard its error
	// (Result.Err). The call fails only when no shard answered, or for any
	// other error (a stale layout, no such table, a bad request), as
	// without it. A Get (one shard) and Scan are never partial. Default:
	// off.
	PartialAnswers bool
	// Monotonic reads (client/README.md, "Monotonic reads"): no call
	// answers from a version of a table older than one this client
	// already answered a call of that table from, unless that newer
	// version was withdrawn (roost-admin rollback, or the repository's
	// POINTER moved back; the servers say so in withdrawn_through); and a
	// new version is read only once every shard this client has heard from
	// has shown it, so that a rollout is seen as one switch. The state is
	// per client and table, shared by every call; a call with AtVersion
	// neither reads nor changes it; a Get, coalesced or not, is a call of
	// one part. It may cost a call one more round trip during a rollout,
	// and a shard whose every replica lags behind a version already read
	// makes its calls wait until one catches up or the deadline passes
	// (then ABORTED). Default: off.
	Monotonic bool
	// MaxBatch is the servers' --max-batch: a shard's part of a MultiGet
	// with more keys goes as several calls of at most MaxBatch keys, sent
	// at once with the rest and read from the same version. Default: 10000
	// (the servers' default).
	MaxBatch int
	// Metrics, when not nil, counts this client's calls (NewMetrics);
	// several clients may share one.
	Metrics *Metrics
	// TracerProvider, when not nil, gives a span to every Get, MultiGet
	// and Scan ("roost.Get", "roost.MultiGet", "roost.Scan"), a child of
	// the span in the call's context. Nil: no spans.
	TracerProvider trace.TracerProvider
}

// DefaultTimeout is a call's deadline when neither its context nor
// Options.Timeout gives one.
const DefaultTimeout = 10 * time.Second

// DefaultMaxBatch is Options.MaxBatch when it is 0: roost-server's default
// --max-batch.
const DefaultMaxBatch = 10000

// Client is the routing client of one cluster.
type Client struct {
	layout Layout
	opts   Options
	creds  credentials.TransportCredentials
	shards []*shard
	// One per shard, with Options.CoalesceGets.
	coalescers []*coalescer
	tracer     trace.Tracer // nil: no spans
	// The version of each table's last answer, for the metric of version
	// switches.
	lastVersion *tableVersions
	monotonic   *monotonic // with Options.Monotonic; nil otherwise
}

// Result is one key's answer.
type Result struct {
	Found bool
	Value []byte // nil when not found; may be empty when found
	// With Options.PartialAnswers: the error of the key's shard when it
	// could not answer (then Found is false); nil otherwise.
	Err error
}

// GetResult is a Get's answer.
type GetResult struct {
	Found   bool
	Value   []byte
	Version string // the version that answered: "v000007"
}

// MultiGetResult is a MultiGet's answer.
type MultiGetResult struct {
	Results []Result // one per key, in request order
	// The one version every shard answered from ("v000007"; with partial
	// answers, every shard that answered); "" for an empty batch or
	// servers too old to name their version.
	Version string
	// With Options.PartialAnswers: how many keys' shards could not answer
	// (each such Result holds its Err).
	FailedKeys int
}

// CallOption changes one call.
type CallOption func(*callConfig)

type callConfig struct {
	version string
}

// AtVersion reads version ("v000007" or "7") on every shard, as the
// servers take it (the serving one, or the one it replaced within
// --version-grace); a server without it fails the call FAILED_PRECONDITION.
// Without it the consistency algorithm chooses.
func AtVersion(version string) CallOption {
	return func(c *callConfig) { c.version = version }
}

// Open is New of the layout file at path (ReadLayout).
func Open(path string, opts Options) (*Client, error) {
	layout, err := ReadLayout(path)
	if err != nil {
		return nil, err
	}
	return New(layout, opts)
}

// New returns a client of the cluster layout describes. Connections are
// made lazily, at the first call to each replica; TLS files are read now
// (an error names the one that cannot be used).
func New(layout Layout, opts Options) (*Client, error) {
	if err := layout.Check(); err != nil {
		return nil, err
	}
	if opts.Timeout < 0 || opts.HedgeDelay < 0 || opts.Backoff < 0 || opts.MaxBackoff < 0 {
		return nil, status.Error(codes.InvalidArgument, "roost.Options: durations must not be negative")
	}
	if opts.MaxBatch < 0 {
		return nil, status.Error(codes.InvalidArgument, "roost.Options: MaxBatch must not be negative")
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Backoff == 0 {
		opts.Backoff = 20 * time.Millisecond
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 500 * time.Millisecond
	}
	c := &Client{layout: layout, opts: opts, lastVersion: &tableVersions{last: map[string]string{}}}
	if opts.Monotonic {
		c.monotonic = &monotonic{tables: map[string]*monoTable{}}
	}
	if opts.TracerProvider != nil {
		c.tracer = opts.TracerProvider.Tracer(tracerName)
	}
	if layout.TLS != nil {
		creds, err := transportCredentials(layout.TLS)
		if err != nil {
			return nil, err
		}
		c.creds = creds
	}
	for _, targets := range layout.Shards {
		sh := &shard{}
		for _, target := range targets {
			conn, err := c.dial(target, strings.HasPrefix(target, "dns:"))
			if err != nil {
				c.Close()
				return nil, err
			}
			sh.replicas = append(sh.replicas, replica{target, conn, roostv1.NewLookupClient(conn)})
		}
		c.shards = append(c.shards, sh)
	}
	if opts.CoalesceGets {
		if err := c.checkCoalescing(); err != nil {
			c.Close()
			return nil, err
		}
	}
	return c, nil
}

func (c *Client) dial(target string, roundRobin bool) (*grpc.ClientConn, error) {
	options := []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32)),
	}
	if c.creds != nil {
		options = append(options, grpc.WithTransportCredentials(c.creds))
	} else {
		options = append(options, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if roundRobin {
		options = append(options, grpc.WithDefaultServiceConfig(`{"loadBalancingConfig": [{"round_robin": {}}]}`))
	}
	options = append(options, c.opts.DialOptions...)
	conn, err := grpc.NewClient(target, options...)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "bad cluster layout: target %q: %v", target, err)
	}
	return conn, nil
}

func transportCredentials(t *TLSConfig) (credentials.TransportCredentials, error) {
	config := &tls.Config{ServerName: t.ServerName, MinVersion: tls.VersionTLS12}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "tls.ca: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, status.Errorf(codes.InvalidArgument, "tls.ca: %s holds no PEM certificate", t.CA)
		}
		config.RootCAs = pool
	}
	if t.Cert != "" {
		cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "tls.cert %s and tls.key %s: %v", t.Cert, t.Key, err)
		}
		config.Certificates = []tls.Certificate{cert}
	}
	return credentials.NewTLS(config), nil
}

// Close closes every connection. Calls in flight fail.
func (c *Client) Close() error {
	for _, sh := range c.shards {
		for _, r := range sh.replicas {
			r.conn.Close()
		}
	}
	return nil
}

// Layout returns the layout the client was made with.
func (c *Client) Layout() Layout { return c.layout }

// ShardOf returns the shard key belongs to (PartitionOf over the layout's
// shard count).
func (c *Client) ShardOf(key []byte) int {
	return int(PartitionOf(key, uint32(len(c.shards))))
}

// call returns the context of one call (ctx with the client's timeout when
// ctx has no deadline, and the token) and its policy.
func (c *Client) call(ctx context.Context) (context.Context, context.CancelFunc, policy) {
	cancel := context.CancelFunc(func() {})
	if _, ok := ctx.Deadline(); !ok {
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
	}
	deadline, _ := ctx.Deadline()
	return withToken(ctx, c.opts.Token), cancel, policy{
		deadline: deadline, hedgeDelay: c.opts.HedgeDelay,
		backoff: c.opts.Backoff, maxBackoff: c.opts.MaxBackoff,
		partial: c.opts.PartialAnswers,
	}
}

// Get looks key up in its shard: a batch of one, retries and all, or
// with Options.CoalesceGets, together with other callers' Gets of its
// shard (then ctx bounds the wait, and the batch's deadline is Timeout
// from its first Get).
func (c *Client) Get(ctx context.Context, table string, key []byte, opts ...CallOption) (GetResult, error) {
	ctx, o := c.observe(ctx, methodGet, table, 1)
	r, err := c.get(ctx, table, key, opts)
	o.end(r.Version, 0, err)
	return r, err
}

func (c *Client) get(ctx context.Context, table string, key []byte, opts []CallOption) (GetResult, error) {
	if c.coalescers != nil && len(opts) == 0 {
		return c.coalescers[c.ShardOf(key)].get(ctx, table, key)
	}
	r, err := c.multiGet(ctx, table, [][]byte{key}, opts)
	if err != nil {
		return GetResult{}, err
	}
	return GetResult{Found: r.Results[0].Found, Value: r.Results[0].Value, Version: r.Version}, nil
}

// MultiGet looks keys up: one part per shard, sent at once, the results
// put back in request order (duplicates and an empty batch included), all
// from one version of the table (see the package's guarantee).
func (c *Client) MultiGet(ctx context.Context, table string, keys [][]byte, opts ...CallOption) (*MultiGetResult, error) {
	ctx, o := c.observe(ctx, methodMultiGet, table, len(keys))
	r, err := c.multiGet(ctx, table, keys, opts)
	if err != nil {
		o.end("", 0, err)
		return nil, err
	}
	if r.FailedKeys > 0 {
		for _, res := range r.Results {
			if res.Err != nil {
				c.opts.Metrics.partialKey(status.Code(res.Err))
			}
		}
	}
	o.end(r.Version, r.FailedKeys, nil)
	return r, nil
}

func (c *Client) multiGet(ctx context.Context, table string, keys [][]byte, opts []CallOption) (*MultiGetResult, error) {
	var config callConfig
	for _, o := range opts {
		o(&config)
	}
	out := &MultiGetResult{Results: make([]Result, len(keys))}
	if len(keys) == 0 {
		return out, nil
	}
	ctx, cancel, p := c.call(ctx)
	defer cancel()

	// One part per shard that has keys, or several of at most MaxBatch
	// keys each (the servers refuse a larger batch): a shard's keys fill
	// its parts in request order.
	n := uint32(len(c.shards))
	maxBatch := c.opts.MaxBatch
	shardOf := make([]uint32, len(keys))
	count := make([]int, n)
	for i, k := range keys {
		if n > 1 {
			shardOf[i] = PartitionOf(k, n)
		}
		count[shardOf[i]]++
	}
	firstPart := make([]int, n)
	var parts []*part
	for s := range count {
		firstPart[s] = len(parts)
		for left := count[s]; left > 0; left -= maxBatch {
			size := min(left, maxBatch)
			parts = append(parts, &part{
				shard:   s,
				indices: make([]int, 0, size),
				request: &roostv1.MultiGetRequest{Table: table, Packed: true, Keys: make([][]byte, 0, size)},
			})
		}
	}
	seen := make([]int, n)
	for i, k := range keys {
		s := shardOf[i]
		pt := parts[firstPart[s]+seen[s]/maxBatch]
		seen[s]++
		pt.indices = append(pt.indices, i)
		pt.request.Keys = append(pt.request.Keys, k)
	}

	shardOfPart := make([]int, len(parts))
	for i, pt := range parts {
		shardOfPart[i] = pt.shard
	}
	cons := c.newConsensus(table, config.version, shardOfPart)
	err := c.readOneVersion(ctx, table, len(parts), config.version, p, func(which []int, pin string) error {
		for _, i := range which {
			// A new request per round: an attempt of the last round may
			// still be marshalling the old one.
			r := parts[i].request
			parts[i].request = &roostv1.MultiGetRequest{Table: r.Table, Keys: r.Keys, Packed: true, Version: pin}
		}
		err := c.run(ctx, parts, which, p)
		// Parts that answered before another failed hold their new answer:
		// the consensus must know, or it could keep them at another version
		// than the batch settles on.
		for _, i := range which {
			if parts[i].answered {
				cons.answeredFrom(i, parts[i].response.GetVersion(), parts[i].response.GetWithdrawnThrough())
			} else if parts[i].failure != nil {
				cons.dropped(i)
			}
		}
		return err
	}, cons)
	if err != nil {
		return nil, err
	}
	if p.partial && allFailed(parts) {
		return nil, parts[0].failure // no shard answered: nothing partial about it
	}
	for _, pt := range parts {
		if pt.failure != nil {
			for _, i := range pt.indices {
				out.Results[i].Err = pt.failure
			}
			out.FailedKeys += len(pt.indices)
			continue
		}
		err := readMultiGetAnswer(pt.response, len(pt.indices), func(j int, found bool, value []byte) {
			slot := &out.Results[pt.indices[j]]
			slot.Found = found
			if found {
				if value == nil {
					value = []byte{}
				}
				slot.Value = value
			}
		})
		if err != nil {
			s := status.Convert(err)
			return nil, status.Errorf(s.Code(), "shard %d: %s", pt.shard, s.Message())
		}
	}
	out.Version = cons.version()
	return out, nil
}

func allFailed(parts []*part) bool {
	for _, pt := range parts {
		if pt.failure == nil {
			return false
		}
	}
	return true
}

// readOneVersion sends every one of nparts parts (pinned to callerPin when
// the caller names a version: then once, and no more), then re-sends as
// the consensus says until the parts agree. A pinned part refused with
// FAILED_PRECONDITION (not a stale layout) moves the batch forward after a
// backoff; past the deadline the call fails ABORTED naming the versions
// seen. Any other failure is returned as it is. Once the parts agree, the
// consensus has settled (monotonic reads raise their floor).
func (c *Client) readOneVersion(ctx context.Context, table string, nparts int, callerPin string, p policy,
	send func(which []int, pin string) error, cons *consensus) error {
	all := make([]int, nparts)
	for i := range all {
		all[i] = i
	}
	if err := send(all, callerPin); err != nil || callerPin != "" {
		return err
	}
	backoff := p.backoff
	aborted := func(why string) error {
		return status.Errorf(codes.Aborted,
			"table %s: no version answered by every shard before the deadline; versions seen: %s%s",
			table, cons.seenList(), why)
	}
	for !cons.agreed() {
		// A server that answers another version than the one asked for
		// would keep this loop going: the deadline ends it too.
		if !time.Now().Before(p.deadline) {
			return aborted("")
		}
		pin, which := cons.next()
		err := send(which, pin)
		if err == nil {
			continue
		}
		s := status.Convert(err)
		if s.Code() != codes.FailedPrecondition || strings.Contains(s.Message(), staleLayout) {
			return err
		}
		cons.pinRefused()
		if !time.Now().Add(backoff).Before(p.deadline) {
			return aborted("; last refusal: " + s.Message())
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return aborted("; last refusal: " + s.Message())
		}
		backoff = min(backoff*2, p.maxBackoff)
	}
	cons.settled()
	return nil
}

// versionName is the server's name of version n: "v000007".
func versionName(n uint64) string { return fmt.Sprintf("v%06d", n) }
