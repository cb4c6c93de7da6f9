package dialect

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// HasMarker finds a marker key wherever the sender put it, in maps of a
// dialect's size only, and reads without allocating.
func TestHasMarker(t *testing.T) {
	pack := func(kv ...any) []byte {
		var b []byte
		b = append(b, 0x80|byte(len(kv)/2))
		for _, x := range kv {
			p, err := msgpack.Marshal(x)
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, p...)
		}
		return b
	}
	for _, c := range []struct {
		in   []byte
		want bool
	}{
		{pack("nd", true, "type", "<f8", "shape", []int{1}), true},
		{pack("shape", []int{1}, "data", []byte{1}, "__ndarray__", true), true},
		{pack("a", map[string]any{"nd": 1}, "b", 2, "__npgeneric__", true), true},
		{pack("a", 1, "b", 2, "c", 3), false},
		{pack("nd", true, "type", "<f8"), false}, // two entries: no dialect's map
		{[]byte{0x93, 1, 2, 3}, false},
		{[]byte{0x83, 0xa1}, false},
	} {
		if got := HasMarker(c.in); got != c.want {
			t.Errorf("HasMarker(% x) = %v, want %v", c.in, got, c.want)
		}
	}
	later := pack("shape", []int{1}, "data", []byte{1}, "__ndarray__", true)
	if n := testing.AllocsPerRun(100, func() { HasMarker(later) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
