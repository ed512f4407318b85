package roost

import "sync"

// Monotonic reads (Options.Monotonic; client/README.md, "Monotonic reads",
// the rules every client runs): per client and table, shared by all its
// calls,
//
//   - the floor F: the newest version a call of the table was answered
//     from (0: none yet);
//   - the withdrawn range (L, W]: versions after L up to W were withdrawn
//     (a rollback: an answer from L named W in withdrawn_through) and are
//     not read (empty at first);
//   - per shard, newest[s]: the newest version not withdrawn that a replica
//     of shard s has answered from.
//
// On every answer from version V of shard s (monoTable.answered):
//
//  1. if it names withdrawn_through X > V: if X > W, or X = W and V < L,
//     the withdrawn range becomes (V, X]; F becomes V if it was in
//     (V, X]; every newest[t] in (V, X] becomes V;
//  2. if V is not withdrawn, newest[s] becomes max(newest[s], V).
//
// A call settles on the target R = max(F, the oldest newest[s] over the
// shards heard from) (monoTable.target; the consensus re-sends the parts
// that did not answer R pinned to R), moves forward after a refused pin
// (consensus.monoTarget), and raises F to the version every part answered
// (monoTable.settled). Versions are numbers from 1 ("v000001").
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
	mu             sync.Mutex
	floor          uint64         // F; 0: none
	withdrawnAfter uint64         // L
	withdrawn      uint64         // W
	newest         map[int]uint64 // shard -> newest[s]; absent: not heard from
}

// isWithdrawn reports whether v is in (L, W] (t.mu held).
func (t *monoTable) isWithdrawn(v uint64) bool {
	return v > t.withdrawnAfter && v <= t.withdrawn
}

// answered applies rules 1 and 2 to an answer of shard from version v
// that named withdrawn_through x (0: none).
func (t *monoTable) answered(shard int, v, x uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if x > v {
		if x > t.withdrawn || (x == t.withdrawn && v < t.withdrawnAfter) {
			t.withdrawnAfter, t.withdrawn = v, x
		}
		if t.floor > v && t.floor <= x {
			t.floor = v
		}
		for s, n := range t.newest {
			if n > v && n <= x {
				t.newest[s] = v
			}
		}
	}
	if !t.isWithdrawn(v) {
		if n, ok := t.newest[shard]; !ok || v > n {
			t.newest[shard] = v
		}
	}
}

// readable reports whether an answer from v may be read: not withdrawn.
func (t *monoTable) readable(v uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.isWithdrawn(v)
}

// target returns R = max(F, the oldest newest[s] over the shards heard
// from); 0 when there is neither.
func (t *monoTable) target() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	oldest, first := uint64(0), true
	for _, n := range t.newest {
		if first || n < oldest {
			oldest, first = n, false
		}
	}
	return max(t.floor, oldest)
}

// settled: every part of a call answered v; F becomes max(F, v).
func (t *monoTable) settled(v uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.floor = max(t.floor, v)
}
