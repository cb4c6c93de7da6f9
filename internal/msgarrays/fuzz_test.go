package msgarrays

import (
	"testing"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// countArrays counts the arrays in a decoded message.
func countArrays(v any) int {
	switch x := v.(type) {
	case *ndarray.Array:
		return 1
	case []any:
		n := 0
		for _, e := range x {
			n += countArrays(e)
		}
		return n
	case map[string]any:
		n := 0
		for _, e := range x {
			n += countArrays(e)
		}
		return n
	}
	return 0
}

// FuzzFind: no input makes Find or Decode panic or run past its bounds;
// on a checked message Find and Decode agree on where the arrays are, and
// every array Find lists is one At reads, of the length Find says.
func FuzzFind(f *testing.F) {
	for _, seed := range conformance.Seeds("ext110") {
		f.Add(seed)
	}
	for _, in := range hostile.Inputs() {
		if len(in.Bytes) <= 1<<16 {
			f.Add(in.Bytes)
		}
	}
	a, _ := ndarray.FromSlice([]float32{1, 2, 3})
	for _, d := range []dialect.Dialect{dialect.MsgpackNumpy, dialect.OpenPI} {
		m, _ := d.Marshal(a)
		msg, _ := msgpack.Marshal(map[string]any{"obs": map[string]any{"x": msgpack.RawMessage(m), "n": 1}, "l": []any{msgpack.RawMessage(m), "s"}})
		f.Add(msg)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, s := range []Set{All, Dialects, Of(dialect.OpenPI), Ext110} {
			found, end, err := s.Find(in, 0, MaxDepth, true)
			if err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("%T error: %v", err, err)
				}
				continue
			}
			if end > len(in) {
				t.Fatalf("ends at %d of %d", end, len(in))
			}
			valid := 0
			for _, f := range found {
				h, ok, err := s.At(in[f.At:])
				if !ok {
					t.Fatalf("%s: found, and At says no array", f.Path)
				}
				if err == nil {
					valid++
					if h.Len != f.Len {
						t.Fatalf("%s: %d bytes found, %d read", f.Path, f.Len, h.Len)
					}
				}
			}
			n, werr := mpwalk.Len(in, mpwalk.Limits{MaxDepth: MaxDepth})
			if werr != nil || n != len(in) || n != end {
				continue
			}
			if _, err := s.Cost(in, 1<<40); err != nil {
				continue
			}
			v, err := s.Decode(in)
			if err != nil {
				continue
			}
			if got := countArrays(v); got != valid || valid != len(found) {
				t.Fatalf("Decode made %d arrays, Find found %d (%d valid)", got, len(found), valid)
			}
		}
	})
}
