package dialect

import "testing"

// Marker names the dialect of each marker key, and no other key's, without
// allocating.
func TestMarker(t *testing.T) {
	for _, c := range []struct {
		key  string
		want Dialect
	}{
		{"nd", MsgpackNumpy},
		{"__ndarray__", OpenPI},
		{"__npgeneric__", OpenPI},
		{"ND", 0},
		{"data", 0},
		{"", 0},
		{"__ndarray", 0},
	} {
		d, ok := Marker([]byte(c.key))
		if d != c.want || ok != (c.want != 0) {
			t.Errorf("Marker(%q) = %v, %v, want %v", c.key, d, ok, c.want)
		}
	}
	key := []byte("__npgeneric__")
	if n := testing.AllocsPerRun(100, func() { Marker(key) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}
