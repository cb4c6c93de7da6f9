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
	// Records and a plain void in msgpack-numpy's descr form.
	inner, _ := ndarray.NewRecord([]ndarray.Field{{Name: "c", DType: ndarray.MustParseDType(">u2")}, {Name: "d", Title: "t", DType: ndarray.MustParseDType("|S3"), Offset: 4}}, 8)
	sub, _ := ndarray.NewSubarray(ndarray.MustParseDType("<f4"), []int{2})
	rec, _ := ndarray.NewRecord([]ndarray.Field{{Name: "x", DType: ndarray.MustParseDType("<i4")}, {Name: "b", DType: inner, Shape: []int{2}, Offset: 8},
		{Name: "s", DType: sub, Shape: []int{2}, Offset: 24}}, 48)
	for _, dt := range []ndarray.DType{rec, inner, ndarray.MustParseDType("|V3")} {
		r, _ := ndarray.New(dt, []int{2}, make([]byte, 2*dt.ItemSize))
		b, _ := MsgpackNumpy.Marshal(r)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, d, err := Unmarshal(in)
		if err != nil {
			if _, ok := err.(*ndarray.Error); !ok {
				t.Fatalf("error is not a *ndarray.Error: %v", err)
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
