package roost

import (
	"reflect"
	"testing"
)

// The rules of monotonic reads (client/README.md, "Monotonic reads") on
// their own: the state and the consensus of calls, no server (the client's
// connections are made lazily and never are here).

// monoClient is a client of a 3-shard layout with Options.Monotonic.
func monoClient(t *testing.T) *Client {
	t.Helper()
	c, err := New(Layout{Shards: [][]string{{"127.0.0.1:1"}, {"127.0.0.1:2"}, {"127.0.0.1:3"}}}, Options{Monotonic: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

type monoAnswer struct {
	part               int
	version, withdrawn string
}

// call runs one call's first round (parts to shards, the answers given),
// and returns the consensus after it.
func call(c *Client, shards []int, answers ...monoAnswer) *consensus {
	cons := c.newConsensus("t", "", shards)
	for _, a := range answers {
		cons.answeredFrom(a.part, a.version, a.withdrawn)
	}
	return cons
}

// settle is a whole call whose parts (one per shard of shards) answered
// versions, and agreed: the floor rises.
func settle(t *testing.T, c *Client, version string, shards ...int) {
	t.Helper()
	cons := c.newConsensus("t", "", shards)
	for i := range shards {
		cons.answeredFrom(i, version, "")
	}
	if !cons.agreed() {
		pin, parts := cons.next()
		t.Fatalf("every shard answered %s and the call did not agree: re-send %v pinned to %s", version, parts, pin)
	}
	cons.settled()
}

func wantNext(t *testing.T, cons *consensus, pin string, parts []int) {
	t.Helper()
	if cons.agreed() {
		t.Fatalf("agreed on %s; want the parts %v re-sent pinned to %s", cons.version(), parts, pin)
	}
	if p, which := cons.next(); p != pin || !reflect.DeepEqual(which, parts) {
		t.Fatalf("re-send %v pinned to %q; want %v pinned to %q", which, p, parts, pin)
	}
}

func wantTarget(t *testing.T, c *Client, want string) {
	t.Helper()
	if got := versionName(c.monotonic.table("t").target()); got != want {
		t.Fatalf("target %s; want %s", got, want)
	}
}

// A rollout is seen as one switch: a shard that still shows the old
// version holds the target back, so a single Get of a shard that swapped
// is re-sent pinned to the old version, until every shard heard from has
// shown the new one.
func TestMonotonicRolloutIsOneSwitch(t *testing.T) {
	c := monoClient(t)
	settle(t, c, "v000001", 0, 1, 2)
	wantTarget(t, c, "v000001")

	// Shard 0 swapped: a Get of it answers v2, and is pinned back to v1.
	get := call(c, []int{0}, monoAnswer{0, "v000002", ""})
	wantNext(t, get, "v000001", []int{0})
	get.answeredFrom(0, "v000001", "")
	if !get.agreed() || get.version() != "v000001" {
		t.Fatalf("the pinned re-send answered v1: agreed %v on %q", get.agreed(), get.version())
	}
	get.settled()

	// A batch over shards 0 and 1, both swapped, still waits for shard 2.
	batch := call(c, []int{0, 1}, monoAnswer{0, "v000002", ""}, monoAnswer{1, "v000002", ""})
	wantNext(t, batch, "v000001", []int{0, 1})

	// Shard 2 shows v2 (in another call): now every call reads v2, even a
	// Get of shard 0 alone, and the floor rises with it.
	call(c, []int{2}, monoAnswer{0, "v000002", ""})
	wantTarget(t, c, "v000002")
	settle(t, c, "v000002", 0)
	// A replica of shard 1 that lags answers v1: pinned to v2.
	wantNext(t, call(c, []int{1}, monoAnswer{0, "v000001", ""}), "v000002", []int{0})

	// Without Options.Monotonic the same answers agree on the oldest, as
	// ever: the batch is read whole from v1, the single Get from v2.
	plain := newConsensus(2)
	plain.answered(0, "v000001")
	plain.answered(1, "v000002")
	wantNext(t, plain, "v000001", []int{1})
	single := newConsensus(1)
	single.answered(0, "v000002")
	if !single.agreed() || single.version() != "v000002" {
		t.Fatalf("without monotonic reads a Get agrees on what it answered: %v %q", single.agreed(), single.version())
	}
}

// The floor never goes back without withdrawn_through: lagging answers
// change neither the floor nor any shard's newest.
func TestMonotonicFloorNeverLoweredWithoutTheSignal(t *testing.T) {
	c := monoClient(t)
	settle(t, c, "v000003", 0, 1, 2)
	for s := range 3 {
		wantNext(t, call(c, []int{s}, monoAnswer{0, "v000002", ""}), "v000003", []int{0})
	}
	// Every part answered v2, the same version: still not agreed.
	wantNext(t, call(c, []int{0, 1, 2}, monoAnswer{0, "v000002", ""}, monoAnswer{1, "v000002", ""}, monoAnswer{2, "v000002", ""}),
		"v000003", []int{0, 1, 2})
	wantTarget(t, c, "v000003")
	// withdrawn_through not above the version is no signal.
	call(c, []int{0}, monoAnswer{0, "v000002", "v000002"})
	wantTarget(t, c, "v000003")

	// A refused pin moves forward, never below the floor: the newest
	// answered (v4) when it is newer, the floor when every part is older.
	fwd := call(c, []int{0, 1}, monoAnswer{0, "v000002", ""}, monoAnswer{1, "v000004", ""})
	wantNext(t, fwd, "v000003", []int{0, 1})
	fwd.pinRefused()
	wantNext(t, fwd, "v000004", []int{0})
	old := call(c, []int{0}, monoAnswer{0, "v000001", ""})
	old.pinRefused()
	wantNext(t, old, "v000003", []int{0})
}

// withdrawn_through lowers the floor to the version that stands in, and
// the withdrawn versions are not read again: a replica still answering one
// is pinned to the one that stands in, and moving forward skips them. A
// version published after them is read again.
func TestMonotonicWithdrawnThrough(t *testing.T) {
	c := monoClient(t)
	settle(t, c, "v000002", 0, 1, 2)
	settle(t, c, "v000003", 0, 1, 2)
	// v3 rolled back to v2: shard 1 says so.
	rolled := call(c, []int{1}, monoAnswer{0, "v000002", "v000003"})
	wantState(t, c, 2, 2, 3)
	if !rolled.agreed() || rolled.version() != "v000002" {
		t.Fatalf("the rolled back Get: agreed %v on %q", rolled.agreed(), rolled.version())
	}
	rolled.settled()
	// Every newest[t] in (2, 3] went back to 2: the target is v2 at once,
	// though shards 0 and 2 have not said it yet.
	wantTarget(t, c, "v000002")

	// Shard 0's lagging replica still answers v3 (no signal): withdrawn,
	// pinned to v2; moving forward after a refusal skips v3 too.
	lag := call(c, []int{0, 2}, monoAnswer{0, "v000003", ""}, monoAnswer{1, "v000002", "v000003"})
	wantNext(t, lag, "v000002", []int{0})
	lag.pinRefused()
	wantNext(t, lag, "v000002", []int{0})
	wantTarget(t, c, "v000002")

	// A fresh publish v4 (above W) is read again, once every shard shows it.
	call(c, []int{0, 1}, monoAnswer{0, "v000004", ""}, monoAnswer{1, "v000004", ""})
	wantTarget(t, c, "v000002")
	settle(t, c, "v000004", 2)
	wantTarget(t, c, "v000004")
	// ... and v3 stays unread: a replica answering it is pinned to v4.
	wantNext(t, call(c, []int{0}, monoAnswer{0, "v000003", ""}), "v000004", []int{0})

	// A signal for versions older than the floor leaves the floor alone,
	// and one that withdraws less than the range leaves the range.
	call(c, []int{0}, monoAnswer{0, "v000001", "v000002"})
	wantTarget(t, c, "v000004")
	wantState(t, c, 4, 2, 3)
}

// The POINTER moved further back (v3 withdrawn to v2, then to v1): the
// withdrawn range widens to (1, 3] and the floor follows; v2 is not read
// again, and a version after the range is.
func TestMonotonicWithdrawnRangeWidens(t *testing.T) {
	c := monoClient(t)
	settle(t, c, "v000003", 0, 1, 2)
	rolled := call(c, []int{0, 1, 2}, monoAnswer{0, "v000002", "v000003"}, monoAnswer{1, "v000002", "v000003"},
		monoAnswer{2, "v000002", "v000003"})
	if !rolled.agreed() || rolled.version() != "v000002" {
		t.Fatalf("rolled back to v2: agreed %v on %q", rolled.agreed(), rolled.version())
	}
	rolled.settled()
	wantState(t, c, 2, 2, 3)
	further := call(c, []int{1}, monoAnswer{0, "v000001", "v000003"})
	wantState(t, c, 1, 1, 3)
	if !further.agreed() || further.version() != "v000001" {
		t.Fatalf("rolled back to v1: agreed %v on %q", further.agreed(), further.version())
	}
	// Shards 0 and 2 went back to v1 too (their newest was in (1, 3]): a
	// replica still answering v2 is pinned to v1, even moving forward.
	lag := call(c, []int{0}, monoAnswer{0, "v000002", ""})
	wantNext(t, lag, "v000001", []int{0})
	lag.pinRefused()
	wantNext(t, lag, "v000001", []int{0})
	// A later signal of the narrower range changes nothing.
	call(c, []int{2}, monoAnswer{0, "v000002", "v000003"})
	wantState(t, c, 1, 1, 3)
}

// wantState checks the table's floor and withdrawn range (L, W].
func wantState(t *testing.T, c *Client, floor, after, through uint64) {
	t.Helper()
	st := c.monotonic.table("t")
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.floor != floor || st.withdrawnAfter != after || st.withdrawn != through {
		t.Fatalf("F %d, withdrawn (%d, %d]; want %d, (%d, %d]", st.floor, st.withdrawnAfter, st.withdrawn, floor, after, through)
	}
}

// A client that never read a withdrawn version (fresh after a rollback, or
// idle while v2 and v3 came and v3 went): the version that stands in is
// read, the withdrawn one is not (the range is (2, 3], from the answer).
func TestMonotonicFreshClientAfterARollback(t *testing.T) {
	c := monoClient(t)
	cons := call(c, []int{0, 1}, monoAnswer{0, "v000003", ""}, monoAnswer{1, "v000002", "v000003"})
	wantNext(t, cons, "v000002", []int{0})
	cons.answeredFrom(0, "v000002", "v000003")
	if !cons.agreed() || cons.version() != "v000002" {
		t.Fatalf("agreed %v on %q", cons.agreed(), cons.version())
	}
	cons.settled()
	wantTarget(t, c, "v000002")

	d := monoClient(t)
	settle(t, d, "v000001", 0, 1, 2)
	cons = call(d, []int{0, 1, 2}, monoAnswer{0, "v000002", "v000003"}, monoAnswer{1, "v000002", "v000003"}, monoAnswer{2, "v000002", "v000003"})
	if !cons.agreed() || cons.version() != "v000002" {
		t.Fatalf("idle client: agreed %v on %q", cons.agreed(), cons.version())
	}
}

// A call that names its version neither reads nor changes the state; nor
// does a client without Options.Monotonic keep any.
func TestMonotonicCallerPinnedCallsAreUntouched(t *testing.T) {
	c := monoClient(t)
	settle(t, c, "v000005", 0, 1, 2)
	pinned := c.newConsensus("t", "v000002", []int{0, 1})
	if pinned.mono != nil {
		t.Fatal("a caller-pinned call keeps the monotonic state")
	}
	pinned.answeredFrom(0, "v000002", "v000004")
	pinned.answeredFrom(1, "v000002", "v000004")
	if !pinned.agreed() || pinned.version() != "v000002" {
		t.Fatalf("caller-pinned: agreed %v on %q", pinned.agreed(), pinned.version())
	}
	pinned.settled()
	wantState(t, c, 5, 0, 0)
	if st := c.monotonic.table("t"); !reflect.DeepEqual(st.newest, map[int]uint64{0: 5, 1: 5, 2: 5}) {
		t.Fatalf("a caller-pinned call changed the shards' newest: %v", st.newest)
	}
	wantTarget(t, c, "v000005")

	plain, err := New(Layout{Shards: [][]string{{"127.0.0.1:1"}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if plain.monotonic != nil || plain.newConsensus("t", "", []int{0}).mono != nil {
		t.Fatal("a client without Options.Monotonic keeps monotonic state")
	}
}

// The state is per table.
func TestMonotonicStatePerTable(t *testing.T) {
	c := monoClient(t)
	settle(t, c, "v000005", 0, 1, 2)
	other := c.newConsensus("other", "", []int{0})
	other.answeredFrom(0, "v000001", "")
	if !other.agreed() || other.version() != "v000001" {
		t.Fatalf("another table: agreed %v on %q", other.agreed(), other.version())
	}
}
