package roost

import (
	"reflect"
	"testing"
)

func TestVersionNumber(t *testing.T) {
	for v, want := range map[string]int64{"v000007": 7, "7": 7, "v1": 1, "": -1, "v": -1, "x7": -1, "v-1": -1, "12345678901234567890": -1} {
		n, ok := versionNumber(v)
		if (want < 0 && ok) || (want >= 0 && (!ok || n != uint64(want))) {
			t.Errorf("versionNumber(%q) = %d, %v", v, n, ok)
		}
	}
	if !sameVersion("v000007", "7") || sameVersion("v000007", "8") || sameVersion("", "v0") {
		t.Error("sameVersion")
	}
}

// The four steps of the algorithm: agree; pin the newer parts to the
// oldest; after a refusal, move the older ones forward to the newest.
func TestConsensus(t *testing.T) {
	c := newConsensus(3)
	c.answered(0, "v000001")
	c.answered(1, "v000002")
	c.answered(2, "v000001")
	if c.agreed() {
		t.Fatal("agreed on two versions")
	}
	if pin, parts := c.next(); pin != "v000001" || !reflect.DeepEqual(parts, []int{1}) {
		t.Fatalf("next: %q %v", pin, parts)
	}
	c.pinRefused()
	if pin, parts := c.next(); pin != "v000002" || !reflect.DeepEqual(parts, []int{0, 2}) {
		t.Fatalf("next after a refusal: %q %v", pin, parts)
	}
	c.answered(0, "2")
	c.answered(2, "v000002")
	if !c.agreed() || c.version() != "2" && c.version() != "v000002" {
		t.Fatalf("agreed %v on %q", c.agreed(), c.version())
	}
	if c.seenList() != "v000001, v000002" {
		t.Fatalf("seen %q", c.seenList())
	}

	// A server too old to name its version is taken as it answered.
	old := newConsensus(2)
	old.answered(0, "")
	old.answered(1, "v000003")
	if !old.agreed() || old.version() != "v000003" {
		t.Fatalf("an empty version: agreed %v on %q", old.agreed(), old.version())
	}
}

// Partial answers: a part dropped in a later round (its shard could not
// answer the pinned re-send) loses its earlier answer; the batch agrees on
// the versions the others answered, and the dropped part is never re-sent.
func TestConsensusDropped(t *testing.T) {
	c := newConsensus(3)
	c.answered(0, "v000001")
	c.answered(1, "v000002")
	c.answered(2, "v000001")
	if pin, parts := c.next(); pin != "v000001" || !reflect.DeepEqual(parts, []int{1}) {
		t.Fatalf("next: %q %v", pin, parts)
	}
	c.dropped(1)
	if !c.agreed() || c.version() != "v000001" {
		t.Fatalf("after the drop: agreed %v on %q", c.agreed(), c.version())
	}
	if _, parts := c.next(); len(parts) != 0 {
		t.Fatalf("a dropped part is sent again: %v", parts)
	}
	// The newest part dropped: the batch is the older version's, not a
	// version the dropped part once named.
	d := newConsensus(2)
	d.answered(0, "v000003")
	d.answered(1, "v000004")
	d.dropped(0)
	if !d.agreed() || d.version() != "v000004" {
		t.Fatalf("agreed %v on %q", d.agreed(), d.version())
	}
}
