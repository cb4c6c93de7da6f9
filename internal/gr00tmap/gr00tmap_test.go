package gr00tmap

import (
	"bytes"
	"errors"
	"testing"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// wrap is GR00T's map around npy, as MsgSerializer packs it.
func wrap(npy []byte) []byte {
	return append(mpwire.AppendBinHeader(append([]byte{}, prefix...), len(npy)), npy...)
}

// TestAppendIsSizeAndEncodeFrom: Append writes Size bytes, EncodeFrom the
// same bytes from a reader, and DecodeHeader reads them back; an array
// np.save cannot write leaves dst and the writer untouched.
func TestAppendIsSizeAndEncodeFrom(t *testing.T) {
	a, _ := ndarray.FromSlice([]int16{1, -2, 3, 4, 5, 6}, 3, 2)
	b, err := Append([]byte("x"), a)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := Size(a)
	if len(b) != 1+n {
		t.Fatalf("Append wrote %d bytes, Size says %d", len(b)-1, n)
	}
	var w bytes.Buffer
	if err := EncodeFrom(&w, a.DType, a.Shape, bytes.NewReader(a.Data)); err != nil || !bytes.Equal(w.Bytes(), b[1:]) {
		t.Fatalf("EncodeFrom: %v\n% x\n% x", err, w.Bytes(), b[1:])
	}
	h, err := DecodeHeader(b[1:])
	if err != nil || h.Len != n {
		t.Fatalf("DecodeHeader: %+v, %v", h, err)
	}
	back, _ := h.Array(b[1:], false)
	if !back.Equal(a) {
		t.Fatalf("read back %v", back)
	}
	sub, _ := ndarray.NewSubarray(ndarray.MustParseDType("<f4"), []int{2})
	bad := &ndarray.Array{DType: sub, Shape: []int{1}, Data: make([]byte, 8)}
	if out, err := Append([]byte("x"), bad); !errors.Is(err, npybridge.ErrInvalidArray) || string(out) != "x" {
		t.Fatalf("a subarray dtype: %q, %v", out, err)
	}
	w.Reset()
	if err := EncodeFrom(&w, sub, []int{1}, bytes.NewReader(make([]byte, 8))); err == nil || w.Len() != 0 {
		t.Fatalf("EncodeFrom of a subarray dtype wrote %d bytes: %v", w.Len(), err)
	}
}

// FuzzDecodeHeader: no input makes DecodeHeader panic or claim bytes
// that are not there; what it accepts, Array reads, and Append of that
// array is read back equal.
func FuzzDecodeHeader(f *testing.F) {
	for _, npy := range conformance.Seeds("npy") {
		f.Add(wrap(npy))
	}
	a, _ := ndarray.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	b, _ := Append(nil, a)
	f.Add(b)
	f.Add([]byte{0x81, 0xb1, '_'})
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := DecodeHeader(in)
		if err != nil {
			var e *ndarray.Error
			if !errors.As(err, &e) {
				t.Fatalf("%T: %v", err, err)
			}
			return
		}
		if h.Len > len(in) || h.DataOffset+h.DataLen > h.Len || h.DataOffset < 0 {
			t.Fatalf("%+v of %d bytes", h, len(in))
		}
		arr, err := h.Array(in, true)
		if err != nil {
			t.Fatal(err)
		}
		again, err := Append(nil, arr)
		if err != nil {
			return // a dtype np.save cannot write (a subarray's)
		}
		h2, err := DecodeHeader(again)
		if err != nil {
			t.Fatal(err)
		}
		if back, _ := h2.Array(again, false); !back.Equal(arr) && !hasNaN(arr) {
			t.Fatalf("%v read back as %v", arr, back)
		}
	})
}

// hasNaN reports whether comparing a with itself may fail: floats.
func hasNaN(a *ndarray.Array) bool { return !a.Equal(a) }
