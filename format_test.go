package ndpack_test

import (
	"archive/zip"
	"bytes"
	"fmt"
	"testing"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// DetectFormat tells what each writer wrote by its first bytes, whole or
// cut to DetectLen, and takes whatever else for msgpack.
func TestDetectFormat(t *testing.T) {
	a, _ := ndarray.FromSlice([]int32{1, 2})
	var npy, npz, empty bytes.Buffer
	if err := npybridge.Write(&npy, a); err != nil {
		t.Fatal(err)
	}
	if err := npybridge.WriteNPZ(&npz, []npybridge.NamedArray{{Name: "a", Array: a}}, true); err != nil {
		t.Fatal(err)
	}
	if err := zip.NewWriter(&empty).Close(); err != nil {
		t.Fatal(err)
	}
	ext, _ := ext110.Marshal(a)
	msg, _ := ndpack.MessageOptions{}.MarshalMessage(map[string]any{"a": a})
	for _, c := range []struct {
		name string
		in   []byte
		want ndpack.Format
	}{
		{"npy", npy.Bytes(), ndpack.FormatNPY},
		{"npz", npz.Bytes(), ndpack.FormatNPZ},
		{"an empty npz", empty.Bytes(), ndpack.FormatNPZ},
		{"ext 110", ext, ndpack.FormatMsgpack},
		{"a message", msg, ndpack.FormatMsgpack},
		{"the NPY magic cut short", npy.Bytes()[:5], ndpack.FormatMsgpack},
		{"nothing", nil, ndpack.FormatMsgpack},
		{"text", []byte("hello, world"), ndpack.FormatMsgpack},
	} {
		if got := ndpack.DetectFormat(c.in); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		if got := ndpack.DetectFormat(c.in[:min(len(c.in), ndpack.DetectLen)]); got != c.want {
			t.Errorf("%s, its first %d bytes: %q, want %q", c.name, ndpack.DetectLen, got, c.want)
		}
	}
}

func ExampleDetectFormat() {
	a, _ := ndarray.FromSlice([]uint8{1, 2, 3})
	var npy bytes.Buffer
	_ = npybridge.Write(&npy, a)
	blob, _ := ext110.Marshal(a)
	fmt.Println(ndpack.DetectFormat(npy.Bytes()), ndpack.DetectFormat(blob))
	// Output: npy msgpack
}
