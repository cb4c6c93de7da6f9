package dialect

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// FuzzUnmarshal: no input panics, and what is accepted re-encodes to a map
// that decodes to the same array.
func FuzzUnmarshal(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.msgpack"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<16 {
			f.Add(b)
		}
	}
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	for _, d := range []Dialect{MsgpackNumpy, OpenPI} {
		b, _ := d.Marshal(a)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, d, err := Unmarshal(in)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error is not a *dialect.Error: %v", err)
			}
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("accepted an invalid array: %v", err)
		}
		b, err := d.Marshal(a)
		if err != nil {
			return // a dtype the packer refuses to send (OpenPI complex)
		}
		back, d2, err := Unmarshal(b)
		if err != nil || d2 != d || !back.Equal(a) {
			t.Fatalf("re-encoded map does not decode to the same array: %v", err)
		}
		z, _, err := UnmarshalNoCopy(in)
		if err != nil || !z.Equal(a) {
			t.Fatalf("no-copy decode differs: %v", err)
		}
	})
}
