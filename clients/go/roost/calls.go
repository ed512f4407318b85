package roost

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	roostv1 "roost.dev/gen/go/roost/v1"
)

// The replicas of each shard and the parallel MultiGet calls a client
// makes to them (client/shard_calls.h's, in goroutines): the parts of one
// batch sent at once, each retried on another replica when it fails with a
// retryable code, optionally hedged, all within the call's deadline.
//
// One connection per listed target, and a part's first call goes to the
// next replica in round-robin order, so that a retry or a hedge goes to a
// *different* replica. A "dns:///NAME:PORT" target is one connection with
// gRPC's round_robin policy over every address NAME resolves to.
//
// Retryable: UNAVAILABLE (down, unreachable, shutting down, or serving no
// version of the table yet) and RESOURCE_EXHAUSTED (its --max-in-flight is
// full). Each retry goes to the next replica; after every replica of the
// shard failed once, the next round waits a backoff (doubling up to
// MaxBackoff). Anything else, DEADLINE_EXCEEDED included, is final. A part
// that the deadline cuts short after a retryable failure ends with that
// failure, "(last of N attempts; no replica answered before the
// deadline)", not with the DEADLINE_EXCEEDED of an attempt still
// connecting.

type replica struct {
	target string
	conn   *grpc.ClientConn
	stub   roostv1.LookupClient
}

type shard struct {
	replicas []replica
	next     atomic.Uint64
}

// pick returns the replica a part's first call goes to.
func (s *shard) pick() int {
	return int((s.next.Add(1) - 1) % uint64(len(s.replicas)))
}

// isRetryable reports whether a call that failed with code is tried again
// on another replica.
func isRetryable(code codes.Code) bool {
	return code == codes.Unavailable || code == codes.ResourceExhausted
}

// shardError is err as a status error whose message names the shard and
// the replica; a stale layout (FAILED_PRECONDITION "... belongs to shard
// ...") says so.
func shardError(shard int, target string, err error) error {
	s := status.Convert(err)
	prefix := ""
	if s.Code() == codes.FailedPrecondition && strings.Contains(s.Message(), "belongs to shard") {
		prefix = staleLayout
	}
	return status.Error(s.Code(), fmt.Sprintf("%sshard %d (%s): %s", prefix, shard, target, s.Message()))
}

const staleLayout = "stale cluster layout: "

// policy is how the calls of one client call are made.
type policy struct {
	deadline   time.Time
	hedgeDelay time.Duration // 0: no hedging
	backoff    time.Duration
	maxBackoff time.Duration
	// Options.PartialAnswers: a part whose shard could not answer (see
	// couldNotAnswer) ends with its failure and the others go on.
	partial bool
}

// part is one shard's part of a batch.
type part struct {
	shard    int
	indices  []int // indices[j]: the batch position of request.Keys[j]
	request  *roostv1.MultiGetRequest
	response *roostv1.MultiGetResponse // its answer (kept when a run fails)
	answered bool                      // run got it a new answer
	// With policy.partial: why its shard could not answer in the last run
	// that sent it (shardError); nil otherwise.
	failure error
}

// partError is runPart's failure, and whether it means the shard could not
// answer: its retries ended UNAVAILABLE or RESOURCE_EXHAUSTED at the
// deadline, or the deadline itself. Partial answers drop such a part; any
// other failure fails the call.
type partError struct {
	err            error
	couldNotAnswer bool
}

type attemptResult struct {
	response *roostv1.MultiGetResponse
	err      error
	replica  int
}

// run sends parts[i] for each i in which at once and returns when every
// one has answered (response replaced, answered set) or one has failed for
// good: then the others are cancelled (keeping the response they had,
// answered false) and its error (shardError) is returned. With
// policy.partial, a part whose shard could not answer ends with its
// failure instead, and the others go on.
func (c *Client) run(ctx context.Context, parts []*part, which []int, p policy) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var failure error
	for _, i := range which {
		pt := parts[i]
		pt.answered = false
		pt.failure = nil
		wg.Add(1)
		go func() {
			defer wg.Done()
			response, perr := c.runPart(ctx, pt, p)
			if perr != nil {
				if p.partial && perr.couldNotAnswer {
					pt.failure = perr.err
					return
				}
				once.Do(func() { failure = perr.err; cancel() })
				return
			}
			pt.response = response
			pt.answered = true
		}()
	}
	wg.Wait()
	return failure
}

// runPart calls replicas of the part's shard until one answers, as the
// policy says.
func (c *Client) runPart(ctx context.Context, pt *part, p policy) (*roostv1.MultiGetResponse, *partError) {
	sh := c.shards[pt.shard]
	n := len(sh.replicas)
	first := sh.pick()
	results := make(chan attemptResult, 2) // never more than 2 in flight
	var cancels []context.CancelFunc
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	tries, inFlight := 0, 0
	hedged, hedging := false, false
	var hedge *time.Timer
	var hedgeC <-chan time.Time
	start := func() {
		r := (first + tries) % n
		if tries > 0 && !hedging {
			c.opts.Metrics.retried()
		}
		tries++
		inFlight++
		actx, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
		go func() {
			response, err := sh.replicas[r].stub.MultiGet(actx, pt.request, grpc.WaitForReady(false))
			results <- attemptResult{response, err, r}
		}()
		if p.hedgeDelay > 0 && !hedged {
			if hedge == nil {
				hedge = time.NewTimer(p.hedgeDelay)
			} else {
				hedge.Reset(p.hedgeDelay)
			}
			hedgeC = hedge.C
		}
	}
	defer func() {
		if hedge != nil {
			hedge.Stop()
		}
	}()
	var lastFailure error
	lastReplica := 0
	start()
	for {
		select {
		case <-hedgeC:
			hedgeC = nil
			if !hedged && inFlight == 1 {
				hedged = true
				c.opts.Metrics.hedged()
				hedging = true
				start()
				hedging = false
			}
			continue
		case res := <-results:
			inFlight--
			if res.err == nil {
				return res.response, nil
			}
			if inFlight > 0 {
				continue // its hedge may still answer
			}
			hedgeC = nil
			code := status.Code(res.err)
			retryable := isRetryable(code)
			if retryable {
				lastFailure, lastReplica = res.err, res.replica
			}
			if retryable && time.Now().Before(p.deadline) && ctx.Err() == nil {
				if tries%n != 0 {
					start() // the next replica, at once
					continue
				}
				wait := p.backoff
				for round := 1; round < tries/n && wait < p.maxBackoff; round++ {
					wait *= 2
				}
				wait = min(wait, p.maxBackoff)
				if time.Now().Add(wait).Before(p.deadline) {
					t := time.NewTimer(wait)
					select {
					case <-t.C:
						start()
						continue
					case <-ctx.Done():
						t.Stop()
					}
				}
			}
			if ctx.Err() == context.Canceled {
				// Another part failed (its error is the run's), or the
				// caller cancelled.
				return nil, &partError{err: status.Error(codes.Canceled, fmt.Sprintf("shard %d: the call was cancelled", pt.shard))}
			}
			if lastFailure != nil && (retryable || code == codes.DeadlineExceeded) {
				s := status.Convert(lastFailure)
				attempts := "attempts"
				if tries == 1 {
					attempts = "attempt"
				}
				return nil, &partError{err: shardError(pt.shard, sh.replicas[lastReplica].target, status.Error(s.Code(),
					fmt.Sprintf("%s (last of %d %s; no replica answered before the deadline)", s.Message(), tries, attempts))),
					couldNotAnswer: true}
			}
			return nil, &partError{err: shardError(pt.shard, sh.replicas[res.replica].target, res.err),
				couldNotAnswer: code == codes.DeadlineExceeded}
		}
	}
}

// withToken returns ctx carrying the bearer token, if any.
func withToken(ctx context.Context, token string) context.Context {
	if token == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}
