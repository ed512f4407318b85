package roost

import (
	"bytes"
	"context"
	"io"
	"sort"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	roostv1 "roost.dev/gen/go/roost/v1"
)

// ScanOptions is the range of a Scan.
type ScanOptions struct {
	Start  []byte // the first key, inclusive; empty: the table's first
	End    []byte // the bound, exclusive; empty: none
	Prefix []byte // only keys that begin with it; empty: any
	// At most this many entries over all shards; 0: each server's
	// --max-scan-keys (the result then holds every key up to where the
	// first shard that stopped stopped).
	Limit uint32
}

// Entry is a key and its value.
type Entry struct {
	Key, Value []byte
}

// ScanResult is a Scan's answer.
type ScanResult struct {
	Entries []Entry // in key order over all shards
	// Keys are left in the range after the last entry (scan again from
	// just after it).
	More    bool
	Version string // as MultiGetResult.Version
}

// One shard's stream (client/cluster_scan.cc's, in Go).
type scanStream struct {
	shard   int
	request *roostv1.ScanRequest
	first   int // the replica of the first try
	tries   int
	target  string
	cancel  context.CancelFunc
	stream  interface {
		Recv() (*roostv1.ScanResponse, error)
	}
	open    bool
	message *roostv1.ScanResponse
	next    int  // the next entry of message to merge
	more    bool // the last message's More
	version string
	// The first message's withdrawn_through (monotonic reads).
	withdrawnThrough string
	last             []byte // the key of the last entry taken from it
	taken            bool
}

type scanRun struct {
	c       *Client
	ctx     context.Context
	p       policy
	streams []*scanStream
}

func (r *scanRun) close(s *scanStream) {
	if s.open {
		s.cancel()
		s.open = false
	}
}

func (r *scanRun) start(s *scanStream) {
	sh := r.c.shards[s.shard]
	rep := sh.replicas[(s.first+s.tries)%len(sh.replicas)]
	s.tries++
	s.target = rep.target
	ctx, cancel := context.WithCancel(r.ctx)
	s.cancel = cancel
	s.open = true
	s.message, s.next, s.more, s.version, s.withdrawnThrough = &roostv1.ScanResponse{}, 0, false, "", ""
	stream, err := rep.stub.Scan(ctx, s.request)
	if err != nil {
		s.stream = failedStream{err}
		return
	}
	s.stream = stream
}

// first reads the first message of s, moving to another replica while the
// stream fails retryably before one.
func (r *scanRun) first(s *scanStream) error {
	n := len(r.c.shards[s.shard].replicas)
	backoff := r.p.backoff
	for {
		m, err := s.stream.Recv()
		if err == nil {
			s.message, s.version, s.more = m, m.GetVersion(), m.GetMore()
			s.withdrawnThrough = m.GetWithdrawnThrough()
			return nil
		}
		r.close(s)
		s.message = &roostv1.ScanResponse{}
		if err == io.EOF {
			return nil // no entries, no version
		}
		if !isRetryable(status.Code(err)) || !time.Now().Before(r.p.deadline) {
			return shardError(s.shard, s.target, err)
		}
		if s.tries%n == 0 {
			if !time.Now().Add(backoff).Before(r.p.deadline) {
				return shardError(s.shard, s.target, err)
			}
			time.Sleep(backoff)
			backoff = min(backoff*2, r.p.maxBackoff)
		}
		r.c.opts.Metrics.retried()
		r.start(s)
	}
}

// send opens the streams which (pinned to pin) and reads their first
// messages; every one is read, even after one failed, so that the
// consensus knows what each answers; a failed one is lost.
func (r *scanRun) send(which []int, pin string, cons *consensus) error {
	for _, i := range which {
		s := r.streams[i]
		r.close(s)
		s.request.Version = pin
		s.tries = 0
		s.first = r.c.shards[s.shard].pick()
		r.start(s)
	}
	var firstErr error
	for _, i := range which {
		if err := r.first(r.streams[i]); err != nil {
			cons.lost[i] = true
			if firstErr == nil {
				firstErr = err
			}
		} else {
			cons.answeredFrom(i, r.streams[i].version, r.streams[i].withdrawnThrough)
		}
	}
	return firstErr
}

// head returns the next entry of s in key order, or nil when it has none
// left.
func (r *scanRun) head(s *scanStream) (*roostv1.KeyValue, error) {
	for s.next >= len(s.message.GetEntries()) {
		if !s.open {
			return nil, nil
		}
		m, err := s.stream.Recv()
		if err != nil {
			r.close(s)
			s.message, s.next = &roostv1.ScanResponse{}, 0
			if err == io.EOF {
				return nil, nil
			}
			return nil, shardError(s.shard, s.target, err)
		}
		if !sameVersion(m.GetVersion(), s.version) {
			return nil, status.Errorf(codes.Internal, "shard %d (%s) answered from %s, then from %s",
				s.shard, s.target, s.version, m.GetVersion())
		}
		s.message, s.next, s.more = m, 0, m.GetMore()
	}
	return s.message.Entries[s.next], nil
}

// Scan reads a block table in key order over every shard: one stream per
// shard, read from one version (as MultiGet's batches are), merged; Limit
// applies to the merged entries. A stream that fails before its first
// message is retried on another replica; one that fails later fails the
// call. A cuckoo table has no key order: FAILED_PRECONDITION.
func (c *Client) Scan(ctx context.Context, table string, scan ScanOptions, opts ...CallOption) (*ScanResult, error) {
	ctx, o := c.observe(ctx, methodScan, table, 0)
	r, err := c.scan(ctx, table, scan, opts)
	version := ""
	if err == nil {
		version = r.Version
	}
	o.end(version, 0, err)
	return r, err
}

func (c *Client) scan(ctx context.Context, table string, scan ScanOptions, opts []CallOption) (*ScanResult, error) {
	var config callConfig
	for _, o := range opts {
		o(&config)
	}
	ctx, cancel, p := c.call(ctx)
	defer cancel()
	p.partial = false // a Scan is never partial
	run := &scanRun{c: c, ctx: ctx, p: p}
	defer func() {
		for _, s := range run.streams {
			run.close(s)
		}
	}()
	for s := range c.shards {
		run.streams = append(run.streams, &scanStream{shard: s, message: &roostv1.ScanResponse{},
			request: &roostv1.ScanRequest{Table: table, Start: scan.Start, End: scan.End, Prefix: scan.Prefix,
				// Each shard may hold every one of the first Limit keys.
				Limit: scan.Limit}})
	}
	shards := make([]int, len(run.streams))
	for i := range shards {
		shards[i] = i
	}
	cons := c.newConsensus(table, config.version, shards)
	if err := c.readOneVersion(ctx, table, len(run.streams), config.version, p, func(which []int, pin string) error {
		return run.send(which, pin, cons)
	}, cons); err != nil {
		return nil, err
	}

	// The merge: the smallest head of all streams, each time (a table has
	// few shards: a linear look at the heads).
	out := &ScanResult{Version: cons.version()}
	heads := make([]*roostv1.KeyValue, len(run.streams))
	for i, s := range run.streams {
		var err error
		if heads[i], err = run.head(s); err != nil {
			return nil, err
		}
	}
	for scan.Limit == 0 || len(out.Entries) < int(scan.Limit) {
		best := -1
		for i, h := range heads {
			if h != nil && (best < 0 || bytes.Compare(h.Key, heads[best].Key) < 0) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		s := run.streams[best]
		if s.taken && bytes.Compare(s.last, heads[best].Key) >= 0 {
			return nil, status.Errorf(codes.Internal, "shard %d (%s) answered keys out of order", s.shard, s.target)
		}
		s.last, s.taken = heads[best].Key, true
		out.Entries = append(out.Entries, Entry{Key: nonNil(heads[best].Key), Value: nonNil(heads[best].Value)})
		s.next++
		var err error
		if heads[best], err = run.head(s); err != nil {
			return nil, err
		}
	}
	// More: an entry not taken, or a shard that stopped at its limit with
	// keys left.
	for i, s := range run.streams {
		out.More = out.More || heads[i] != nil || s.more
	}
	if scan.Limit == 0 {
		// Each server stopped at its own --max-scan-keys: the merge holds
		// every key only up to the smallest last key of a shard that
		// stopped.
		var cut []byte
		for _, s := range run.streams {
			if s.more && s.taken && (cut == nil || bytes.Compare(s.last, cut) < 0) {
				cut = s.last
			}
		}
		if cut != nil {
			n := sort.Search(len(out.Entries), func(i int) bool { return bytes.Compare(out.Entries[i].Key, cut) > 0 })
			out.Entries = out.Entries[:n]
		}
	}
	return out, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// failedStream is a stream that could not start: its Recv is the error.
type failedStream struct{ err error }

func (f failedStream) Recv() (*roostv1.ScanResponse, error) { return nil, f.err }
