package roost

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	roostv1 "roost.dev/gen/go/roost/v1"
)

type emitted struct {
	found bool
	value string
}

func read(t *testing.T, r *roostv1.MultiGetResponse, keys int) ([]emitted, error) {
	var out []emitted
	err := readMultiGetAnswer(r, keys, func(i int, found bool, value []byte) {
		if i != len(out) {
			t.Fatalf("emit(%d) after %d", i, len(out))
		}
		out = append(out, emitted{found, string(value)})
	})
	if err != nil && out != nil {
		t.Fatalf("emitted %v before failing %v", out, err)
	}
	return out, err
}

// lookup.proto's examples of the packed form, and the classic form.
func TestReadMultiGetAnswer(t *testing.T) {
	want := []emitted{{true, "xy"}, {false, ""}, {true, "z"}}
	got, err := read(t, &roostv1.MultiGetResponse{PackedValues: []byte("xyz"), PackedSizes: []uint32{2, 0, 1}, Missing: []uint32{1}}, 3)
	if err != nil || len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("sizes: %v %v", got, err)
	}
	got, err = read(t, &roostv1.MultiGetResponse{PackedValues: []byte("xyzw"), PackedWidth: 2, Missing: []uint32{1}}, 3)
	if err != nil || got[0] != want[0] || got[1] != want[1] || got[2] != (emitted{true, "zw"}) {
		t.Fatalf("width: %v %v", got, err)
	}
	got, err = read(t, &roostv1.MultiGetResponse{Results: []*roostv1.GetResponse{{Found: true, Value: []byte("a")}, {}}}, 2)
	if err != nil || got[0] != (emitted{true, "a"}) || got[1] != (emitted{false, ""}) {
		t.Fatalf("classic: %v %v", got, err)
	}
}

// Every inconsistency is DataLoss naming it, and nothing is emitted.
func TestReadMultiGetAnswerRefuses(t *testing.T) {
	for _, c := range []struct {
		r    *roostv1.MultiGetResponse
		want string
	}{
		{&roostv1.MultiGetResponse{Results: []*roostv1.GetResponse{{}}}, "1 results for 2 keys"},
		{&roostv1.MultiGetResponse{Results: []*roostv1.GetResponse{{}, {}}, Missing: []uint32{0}}, "results in both forms at once"},
		{&roostv1.MultiGetResponse{PackedSizes: []uint32{0, 0}, Missing: []uint32{1, 0}}, "key 0 missing, out of order"},
		{&roostv1.MultiGetResponse{PackedSizes: []uint32{0, 0}, Missing: []uint32{2}}, "key 2 missing, of 2 keys"},
		{&roostv1.MultiGetResponse{PackedValues: []byte("abc"), PackedWidth: 2}, "3 bytes, where 2 values of 2 were expected"},
		{&roostv1.MultiGetResponse{PackedValues: []byte("abc"), PackedSizes: []uint32{1}}, "1 sizes for 2 keys"},
		{&roostv1.MultiGetResponse{PackedValues: []byte("abc"), PackedSizes: []uint32{1, 1}}, "3 bytes, their sizes add up to 2"},
		{&roostv1.MultiGetResponse{PackedValues: []byte("ab"), PackedSizes: []uint32{1, 1}, Missing: []uint32{1}}, "key 1 is missing with a value"},
	} {
		_, err := read(t, c.r, 2)
		if status.Code(err) != codes.DataLoss || !strings.Contains(err.Error(), "malformed MultiGet answer: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.r, err, c.want)
		}
	}
}
