package npybridge

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// TestDataAt: a stored member's data lies in the archive at the offset
// DataAt gives, byte for byte; a deflated one is
// refused with ErrCompressed.
func TestDataAt(t *testing.T) {
	a, _ := ndarray.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	f, _ := ndarray.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	dir := t.TempDir()
	name := filepath.Join(dir, "run.npz")
	if err := WriteNPZFile(name, []NamedArray{{Name: "a", Array: a}, {Name: "f", Array: f}}, false); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(name)
	z, err := OpenNPZFile(name)
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	for _, c := range []struct {
		name string
		data []byte
	}{{"a", a.Data}, {"f", f.Data}} {
		h, off, err := z.DataAt(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := raw[off : off+h.DataLen()]; !bytes.Equal(got, c.data) {
			t.Errorf("%s: the bytes at %d are % x, want % x", c.name, off, got, c.data)
		}
	}
	if _, _, err := z.DataAt("nope"); !errors.Is(err, ErrNoMember) {
		t.Errorf("a missing member: %v", err)
	}
	var buf bytes.Buffer
	if err := WriteNPZ(&buf, []NamedArray{{Name: "a", Array: a}}, true); err != nil {
		t.Fatal(err)
	}
	zc, err := OpenNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := zc.DataAt("a"); !errors.Is(err, ErrCompressed) {
		t.Errorf("a deflated member: %v", err)
	}
}
