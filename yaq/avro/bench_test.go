package avro

import (
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// A 2048x2048 <u2 image, as fake-camera's get_measured sends it. Decoding
// aliases the input (its cost does not grow with the image); encoding into
// a reused buffer compares with BenchmarkBaselineCopy8MiB.
func image(b *testing.B) *ndarray.Array {
	a, err := ndarray.New(ndarray.MustParseDType("<u2"), []int{2048, 2048}, benchbase.Data(8<<20))
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func BenchmarkDecodeArray8MiB(b *testing.B) {
	rec, _ := ArrayOptions{}.AppendArray(nil, image(b))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeArray(rec); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendArray8MiB(b *testing.B) {
	a := image(b)
	dst := make([]byte, 0, 8<<20+64)
	b.SetBytes(8 << 20)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := (ArrayOptions{}).AppendArray(dst[:0], a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaselineCopy8MiB(b *testing.B) { benchbase.Copy(b, benchbase.Data(8<<20)) }
