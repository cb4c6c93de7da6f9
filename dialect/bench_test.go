package dialect

import (
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

const benchLen = 64 << 20

func benchMap(b *testing.B, d Dialect, n int) []byte {
	a, err := ndarray.New(ndarray.DTypeOf[float64](), []int{n / 8}, benchbase.Data(n))
	if err != nil {
		b.Fatal(err)
	}
	m, err := d.Marshal(a)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// Decoding 64 MiB from a byte slice: compare with BenchmarkBaselineMakeCopy.
func BenchmarkUnmarshal64MiB(b *testing.B) {
	for _, d := range []Dialect{MsgpackNumpy, OpenPI} {
		b.Run(d.String(), func(b *testing.B) {
			m := benchMap(b, d, benchLen)
			b.SetBytes(benchLen)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Unmarshal(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// The no-copy form costs the same at 64 MiB as at 10 elements.
func BenchmarkUnmarshalNoCopy(b *testing.B) {
	for _, n := range []int{80, benchLen} {
		for _, d := range []Dialect{MsgpackNumpy, OpenPI} {
			b.Run(d.String()+"/"+map[int]string{80: "10 elements", benchLen: "64 MiB"}[n], func(b *testing.B) {
				m := benchMap(b, d, n)
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := UnmarshalNoCopy(m); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkMarshal64MiB(b *testing.B) {
	a, _ := ndarray.New(ndarray.DTypeOf[float64](), []int{benchLen / 8}, benchbase.Data(benchLen))
	dst := make([]byte, 0, benchLen+128)
	b.SetBytes(benchLen)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := OpenPI.Append(dst[:0], a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBaselineMakeCopy(b *testing.B) { benchbase.MakeCopy(b, benchbase.Data(benchLen)) }
func BenchmarkBaselineCopy(b *testing.B)     { benchbase.Copy(b, benchbase.Data(benchLen)) }
