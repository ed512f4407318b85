package roost

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	roostv1 "roost.dev/gen/go/roost/v1"
)

// coalescer sends the single-key Gets of many concurrent callers to one
// shard as MultiGets (client/get_coalescer.h's scheme). A gRPC call costs
// the server about as much as looking a thousand keys up, so many
// concurrent Gets are bounded by the per-call cost, not by lookups. A Get
// goes out at once while fewer than maxInFlight MultiGets of its table are
// on the wire; otherwise it waits in the table's queue, and when one of
// those answers, everything queued (up to maxBatch keys) goes out as the
// next one. No timer: under light load a Get is a MultiGet of one key sent
// at once, under load it waits at most one round trip. Each MultiGet is
// sent, retried and hedged as a MultiGet's part is, within Timeout of its
// oldest Get's arrival.
type coalescer struct {
	c       *Client
	shard   int
	mu      sync.Mutex
	queues  map[string]*getQueue
	batches atomic.Uint64 // MultiGets sent
	gets    atomic.Uint64 // Gets asked for
}

type getQueue struct {
	inFlight int
	waiting  []*waiter
	oldest   time.Time // when the first waiting Get came
}

type waiter struct {
	key    []byte
	result chan coalesced // buffered: the sender never blocks
}

type coalesced struct {
	r   GetResult
	err error
}

func (q *coalescer) get(ctx context.Context, table string, key []byte) (GetResult, error) {
	q.gets.Add(1)
	w := &waiter{key: key, result: make(chan coalesced, 1)}
	q.mu.Lock()
	queue := q.queues[table]
	if queue == nil {
		queue = &getQueue{}
		q.queues[table] = queue
	}
	if queue.inFlight < q.c.opts.CoalesceMaxInFlight {
		queue.inFlight++
		q.mu.Unlock()
		go q.send(table, []*waiter{w}, time.Now())
	} else {
		if len(queue.waiting) == 0 {
			queue.oldest = time.Now()
		}
		queue.waiting = append(queue.waiting, w)
		q.mu.Unlock()
	}
	select {
	case res := <-w.result:
		return res.r, res.err
	case <-ctx.Done():
		return GetResult{}, status.FromContextError(ctx.Err()).Err()
	}
}

// send sends batches of table until its queue is empty: first waiters,
// then what queued meanwhile.
func (q *coalescer) send(table string, waiters []*waiter, since time.Time) {
	for {
		q.sendOne(table, waiters, since)
		q.mu.Lock()
		queue := q.queues[table]
		if len(queue.waiting) == 0 {
			queue.inFlight--
			q.mu.Unlock()
			return
		}
		n := min(len(queue.waiting), q.c.opts.CoalesceMaxBatch)
		waiters, since = queue.waiting[:n:n], queue.oldest
		queue.waiting = append([]*waiter(nil), queue.waiting[n:]...)
		queue.oldest = time.Now()
		q.mu.Unlock()
	}
}

func (q *coalescer) sendOne(table string, waiters []*waiter, since time.Time) {
	q.batches.Add(1)
	keys := make([][]byte, len(waiters))
	for i, w := range waiters {
		keys[i] = w.key
	}
	deadline := since.Add(q.c.opts.Timeout)
	ctx, cancel := context.WithDeadline(withToken(context.Background(), q.c.opts.Token), deadline)
	defer cancel()
	pt := &part{shard: q.shard, request: &roostv1.MultiGetRequest{Table: table, Keys: keys, Packed: true}}
	p := policy{deadline: deadline, hedgeDelay: q.c.opts.HedgeDelay,
		backoff: q.c.opts.Backoff, maxBackoff: q.c.opts.MaxBackoff}
	var response *roostv1.MultiGetResponse
	var err error
	if q.c.monotonic == nil {
		var perr *partError
		if response, perr = q.c.runPart(ctx, pt, p); perr != nil {
			err = perr.err
		}
	} else {
		response, err = q.monotonicPart(ctx, table, pt, p)
	}
	results := make([]coalesced, len(waiters))
	if err == nil {
		err = readMultiGetAnswer(response, len(keys), func(i int, found bool, value []byte) {
			r := &results[i].r
			r.Found, r.Version = found, response.GetVersion()
			if found {
				r.Value = nonNil(value)
			}
		})
		if err != nil {
			s := status.Convert(err)
			err = status.Errorf(s.Code(), "shard %d: %s", q.shard, s.Message())
		}
	}
	for i, w := range waiters {
		if err != nil {
			results[i] = coalesced{err: err}
		}
		w.result <- results[i]
	}
}

// monotonicPart reads pt as a call of one part with monotonic reads: the
// table's target, pinned re-sends and its floor, as MultiGet's parts.
func (q *coalescer) monotonicPart(ctx context.Context, table string, pt *part, p policy) (*roostv1.MultiGetResponse, error) {
	parts := []*part{pt}
	cons := q.c.newConsensus(table, "", []int{q.shard})
	err := q.c.readOneVersion(ctx, table, 1, "", p, func(which []int, pin string) error {
		// A new request per round, as MultiGet's.
		pt.request = &roostv1.MultiGetRequest{Table: table, Keys: pt.request.Keys, Packed: true, Version: pin}
		err := q.c.run(ctx, parts, which, p)
		if pt.answered {
			cons.answeredFrom(0, pt.response.GetVersion(), pt.response.GetWithdrawnThrough())
		}
		return err
	}, cons)
	if err != nil {
		return nil, err
	}
	return pt.response, nil
}

func (c *Client) checkCoalescing() error {
	if c.opts.CoalesceMaxInFlight < 0 || c.opts.CoalesceMaxBatch < 0 {
		return status.Error(codes.InvalidArgument, "roost.Options: coalescing needs at least 1 batch in flight of at least 1 key")
	}
	if c.opts.CoalesceMaxInFlight == 0 {
		c.opts.CoalesceMaxInFlight = 4
	}
	if c.opts.CoalesceMaxBatch == 0 {
		c.opts.CoalesceMaxBatch = 1000
	}
	for s := range c.shards {
		c.coalescers = append(c.coalescers, &coalescer{c: c, shard: s, queues: map[string]*getQueue{}})
	}
	return nil
}
