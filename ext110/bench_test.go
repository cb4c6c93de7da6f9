package ext110

import (
	"io"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// The baselines (copy into an existing buffer, make+copy) run in the same
// package and the same run as the codec, so that ratios stay meaningful on a
// noisy, shared machine: compare MB/s columns, not absolute times.

const bigElems = 64 << 20 / 8 // 64 MiB of float64

func bigArray(b *testing.B) *ndarray.Array {
	a, err := ndarray.Zeros(ndarray.DTypeOf[float64](), bigElems)
	if err != nil {
		b.Fatal(err)
	}
	copy(a.Data, benchbase.Data(len(a.Data)))
	return a
}

func smallArray(b *testing.B) *ndarray.Array {
	a, err := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

var sink []byte

func BenchmarkCopy64MiB(b *testing.B)     { benchbase.Copy(b, bigArray(b).Data) }
func BenchmarkMakeCopy64MiB(b *testing.B) { benchbase.MakeCopy(b, bigArray(b).Data) }

// benchDecode measures decode on the encoding of a; setBytes reports MB/s.
func benchDecode(b *testing.B, a *ndarray.Array, decode func([]byte) (*ndarray.Array, error), setBytes bool) {
	enc, _ := Marshal(a)
	if setBytes {
		b.SetBytes(int64(len(enc)))
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := decode(enc)
		if err != nil {
			b.Fatal(err)
		}
		sink = out.Data
	}
}

// benchMarshal measures Marshal of a.
func benchMarshal(b *testing.B, a *ndarray.Array, setBytes bool) {
	if setBytes {
		b.SetBytes(int64(len(a.Data)))
	}
	b.ReportAllocs()
	for b.Loop() {
		out, err := Marshal(a)
		if err != nil {
			b.Fatal(err)
		}
		sink = out
	}
}

func BenchmarkMarshal64MiB(b *testing.B)         { benchMarshal(b, bigArray(b), true) }
func BenchmarkMarshal10(b *testing.B)            { benchMarshal(b, smallArray(b), false) }
func BenchmarkUnmarshal64MiB(b *testing.B)       { benchDecode(b, bigArray(b), Unmarshal, true) }
func BenchmarkUnmarshal10(b *testing.B)          { benchDecode(b, smallArray(b), Unmarshal, false) }
func BenchmarkUnmarshalNoCopy64MiB(b *testing.B) { benchDecode(b, bigArray(b), UnmarshalNoCopy, false) }
func BenchmarkUnmarshalNoCopy10(b *testing.B)    { benchDecode(b, smallArray(b), UnmarshalNoCopy, false) }

func BenchmarkAppendReuse64MiB(b *testing.B) {
	a := bigArray(b)
	buf, _ := Marshal(a)
	b.SetBytes(int64(len(a.Data)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		buf, err = Options{}.Append(buf[:0], a)
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalUnmarshal10(b *testing.B) {
	a := smallArray(b)
	b.ReportAllocs()
	for b.Loop() {
		out, err := Marshal(a)
		if err != nil {
			b.Fatal(err)
		}
		back, err := Unmarshal(out)
		if err != nil {
			b.Fatal(err)
		}
		sink = back.Data
	}
}

func BenchmarkDecoder64MiB(b *testing.B) {
	enc, _ := Marshal(bigArray(b))
	b.SetBytes(int64(len(enc)))
	b.ReportAllocs()
	r := &rewinder{b: enc}
	for b.Loop() {
		r.off = 0
		a, err := NewDecoder(r).Decode()
		if err != nil {
			b.Fatal(err)
		}
		sink = a.Data
	}
}

// rewinder is a bytes.Reader without Len, as a socket would be.
type rewinder struct {
	b   []byte
	off int
}

func (r *rewinder) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}
