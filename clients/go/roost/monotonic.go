package roost

import "sync"

// Monotonic reads (Options.Monotonic; client/README.md, "Monotonic reads",
// the rules every client runs): per client and table, shared by all its
// calls,
//
//   - the floor F: the newest version a call of the table was answered
//     from (none at first);
//   - the withdrawn bound W: versions after F, up to and including W, were
//     withdrawn and are not read (none at first);
//   - per shard, newest[s]: the newest version not withdrawn that a replica
//     of shard s has answered from.
//
// On every answer from version V of shard s (monoTable.answered):
//
//  1. if it names withdrawn_through X > V: W becomes max(W, X); F becomes
//     V if it was in (V, X]; every newest[t] in (V, X] becomes V;
//  2. if V is not withdrawn, newest[s] becomes max(newest[s], V).
//
// A call settles on the target R = max(F, the oldest newest[s] over the
// shards heard from) (monoTable.target; the consensus re-sends the parts
// that did not answer R pinned to R), moves forward after a refused pin
// (consensus.monoTarget), and raises F to the version every part answered
// (monoTable.settled).
//
// Two readings the rules leave open, taken so that a client never refuses
// the version the servers serve:
//
//   - With no floor yet, the withdrawn versions are those up to W (the
//     client has read none of them).
//   - An answer that itself names withdrawn_through X > V stands in for the
//     withdrawn versions and is never one of them, even when F is before V
//     (the client read nothing between F and X, e.g. a fresh client after
//     a rollback, or one idle while vN+1 and vN+2 came and vN+2 was rolled
//     back): (F, W] would otherwise hold V itself, and nothing the servers
//     serve would be acceptable.
type monotonic struct {
	mu     sync.Mutex
	tables map[string]*monoTable
}

// table returns the state of table, made at its first call.
func (m *monotonic) table(name string) *monoTable {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.tables[name]
	if t == nil {
		t = &monoTable{newest: map[int]uint64{}}
		m.tables[name] = t
	}
	return t
}

// monoTable is one table's state; its methods are safe for concurrent use.
type monoTable struct {
	mu           sync.Mutex
	floor        uint64 // F, when hasFloor
	hasFloor     bool
	withdrawn    uint64 // W, when hasWithdrawn
	hasWithdrawn bool
	newest       map[int]uint64 // shard -> newest[s]; absent: not heard from
}

// isWithdrawn reports whether v is in (F, W] (t.mu held).
func (t *monoTable) isWithdrawn(v uint64) bool {
	return t.hasWithdrawn && v <= t.withdrawn && (!t.hasFloor || v > t.floor)
}

// answered applies rules 1 and 2 to an answer of shard from version v
// that named withdrawn_through x (hasX: x > v was named).
func (t *monoTable) answered(shard int, v, x uint64, hasX bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if hasX {
		if !t.hasWithdrawn || x > t.withdrawn {
			t.withdrawn, t.hasWithdrawn = x, true
		}
		if t.hasFloor && t.floor > v && t.floor <= x {
			t.floor = v
		}
		for s, n := range t.newest {
			if n > v && n <= x {
				t.newest[s] = v
			}
		}
	}
	if hasX || !t.isWithdrawn(v) {
		if n, ok := t.newest[shard]; !ok || v > n {
			t.newest[shard] = v
		}
	}
}

// acceptable reports whether an answer from v (standsIn: it named
// withdrawn_through above v) may be read: not a withdrawn version.
func (t *monoTable) acceptable(v uint64, standsIn bool) bool {
	if standsIn {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.isWithdrawn(v)
}

// target returns R = max(F, the oldest newest[s] over the shards heard
// from); ok is false when there is neither.
func (t *monoTable) target() (r uint64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := true
	for _, n := range t.newest {
		if first || n < r {
			r, first = n, false
		}
	}
	ok = !first
	if t.hasFloor && (!ok || t.floor > r) {
		r, ok = t.floor, true
	}
	return r, ok
}

// settled: every part of a call answered v; F becomes max(F, v).
func (t *monoTable) settled(v uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.hasFloor || v > t.floor {
		t.floor, t.hasFloor = v, true
	}
}
