package roost

import (
	"sort"
	"strings"
)

// The client consistency algorithm (docs/operations/cluster.md, "Routing
// client (C++)"; client/version_consensus.h), as state: which version each
// part of a batch answered, and what to send next so that the whole batch
// is read from one table version:
//
//  1. Send every part with no version.
//  2. If every part names the same version, done.
//  3. Otherwise re-send the parts that answered a newer version, pinned to
//     the oldest one answered (servers keep the version they replaced for
//     --version-grace).
//  4. If a pinned part is refused (FAILED_PRECONDITION: that version is
//     gone there), re-send instead the parts that answered older, pinned
//     to the newest, after a short backoff, until the caller's deadline;
//     then the batch fails ABORTED naming the versions seen.
//
// A part that answered an empty version (a server too old to say) is
// accepted as it is: it is never compared nor re-sent.
//
// With monotonic reads (Options.Monotonic, monotonic.go) a call that names
// no version settles instead on the table's target R (never older than a
// version the client already read, and the oldest of what the shards
// heard from have shown): the parts that did not answer R are re-sent
// pinned to R; after a refusal, to the newest version answered that is not
// withdrawn, never below R. Once they agree, the floor rises.

// versionNumber returns the number of a version as a server names it:
// "v000007" and "7" are both 7; ok is false for "" and anything else.
func versionNumber(v string) (n uint64, ok bool) {
	v = strings.TrimPrefix(v, "v")
	if v == "" || len(v) > 19 {
		return 0, false
	}
	for _, c := range []byte(v) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + uint64(c-'0')
	}
	return n, true
}

// sameVersion reports whether a and b name the same version ("v000007"
// and "7" do).
func sameVersion(a, b string) bool {
	if a == b {
		return true
	}
	x, ok := versionNumber(a)
	y, ok2 := versionNumber(b)
	return ok && ok2 && x == y
}

// older orders versions by number; one that is not a number (no roost
// server sends one) sorts before every number, by its text.
func older(a, b string) bool {
	x, okA := versionNumber(a)
	y, okB := versionNumber(b)
	if okA != okB {
		return !okA
	}
	if okA && x != y {
		return x < y
	}
	return !okA && a < b
}

type consensus struct {
	answers []string
	lost    []bool
	seen    []string // distinct, in the order answered
	forward bool

	// With Options.Monotonic, in a call that names no version: the
	// table's state (monotonic.go), which every answer updates and whose
	// target the parts are pinned to; nil otherwise.
	mono   *monoTable
	shards []int  // part -> its shard
	target string // the target agreed and next use ("": none, as without mono)
}

func newConsensus(parts int) *consensus {
	return &consensus{answers: make([]string, parts), lost: make([]bool, parts)}
}

// newConsensus is a consensus of a call of table whose parts go to
// shards: with Options.Monotonic and no version named by the caller
// (callerPin), one that keeps and reads the table's monotonic state.
func (c *Client) newConsensus(table, callerPin string, shards []int) *consensus {
	cons := newConsensus(len(shards))
	if c.monotonic != nil && callerPin == "" {
		cons.mono = c.monotonic.table(table)
		cons.shards = shards
	}
	return cons
}

// answered records that part answered from version ("" from a server too
// old to say).
func (c *consensus) answered(part int, version string) {
	c.answeredFrom(part, version, "")
}

// answeredFrom records that part answered from version, naming
// withdrawnThrough ("" when it named none); with monotonic reads, the
// answer updates the table's state (rules 1 and 2).
func (c *consensus) answeredFrom(part int, version, withdrawnThrough string) {
	if c.mono != nil {
		if v, ok := versionNumber(version); ok {
			x, _ := versionNumber(withdrawnThrough) // 0: none
			c.mono.answered(c.shards[part], v, x)
		}
	}
	if version != "" {
		known := false
		for _, v := range c.seen {
			if sameVersion(v, version) {
				known = true
				break
			}
		}
		if !known {
			c.seen = append(c.seen, version)
		}
	}
	c.answers[part] = version
	c.lost[part] = false
}

// dropped: part is left out of the batch (its shard could not answer, and
// the caller takes partial answers): never compared nor re-sent, and an
// answer it gave in an earlier round is forgotten.
func (c *consensus) dropped(part int) {
	c.answers[part] = ""
	c.lost[part] = false
}

// extreme returns the oldest (newest when newest) version the parts name.
func (c *consensus) extreme(newest bool) string {
	best := ""
	for i, v := range c.answers {
		if v == "" || c.lost[i] {
			continue
		}
		if best == "" || (newest && older(best, v)) || (!newest && older(v, best)) {
			best = v
		}
	}
	return best
}

// agreed reports whether every part has an answer and every one that named
// a version named the same one; with monotonic reads, the call's target
// (monoTarget) when it has one.
func (c *consensus) agreed() bool {
	for _, l := range c.lost {
		if l {
			return false
		}
	}
	if c.mono != nil {
		c.target = ""
		if t := c.monoTarget(); t != 0 {
			c.target = versionName(t)
			for _, v := range c.answers {
				if v != "" && !sameVersion(v, c.target) {
					return false
				}
			}
			return true
		}
	}
	oldest := c.extreme(false)
	for _, v := range c.answers {
		if v != "" && !sameVersion(v, oldest) {
			return false
		}
	}
	return true
}

// version is the version the batch was read from, once agreed: "" when no
// part named one.
func (c *consensus) version() string { return c.extreme(false) }

// next returns the parts to re-send and the version to pin them to: before
// any refusal, the parts newer than the oldest, pinned to the oldest; after
// one, the parts older than the newest, pinned to the newest; and the lost
// parts.
//
// With monotonic reads and a target (set by agreed), the parts that did
// not answer the target, pinned to it.
func (c *consensus) next() (pin string, parts []int) {
	pin = c.extreme(c.forward)
	if c.mono != nil && c.target != "" {
		pin = c.target
	}
	for i, v := range c.answers {
		if c.lost[i] || (v != "" && !sameVersion(v, pin)) {
			parts = append(parts, i)
		}
	}
	return pin, parts
}

// pinRefused: a part pinned by next was refused; from now on the batch
// moves forward to the newest version instead.
func (c *consensus) pinRefused() { c.forward = true }

// monoTarget is the version a monotonic call settles on: the table's
// target R; after a refused pin, the newest version its parts answered
// that is not withdrawn, never below R. 0 when there is none (no floor,
// no shard heard from, no version answered that may be read): then the
// call agrees as without monotonic reads.
func (c *consensus) monoTarget() uint64 {
	t := c.mono.target()
	if !c.forward {
		return t
	}
	for i, a := range c.answers {
		if v, ok := versionNumber(a); ok && !c.lost[i] && v > t && c.mono.readable(v) {
			t = v
		}
	}
	return t
}

// settled: the call agreed on its version; with monotonic reads the
// table's floor rises to it.
func (c *consensus) settled() {
	if c.mono == nil {
		return
	}
	if v, ok := versionNumber(c.version()); ok {
		c.mono.settled(v)
	}
}

// seenList is every version answered so far, oldest first, for the
// ABORTED message: "v000001, v000002".
func (c *consensus) seenList() string {
	sorted := append([]string(nil), c.seen...)
	sort.SliceStable(sorted, func(i, j int) bool { return older(sorted[i], sorted[j]) })
	return strings.Join(sorted, ", ")
}
