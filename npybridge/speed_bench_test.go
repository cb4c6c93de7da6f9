package npybridge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// speedFile writes a 16 MiB .npy of <f8 (2048, 1024) in the layout asked
// for and returns its path.
func speedFile(b *testing.B, fortran bool, order byte) string {
	v := make([]float64, 2048*1024)
	for i := range v {
		v[i] = float64(i)
	}
	a, _ := ndarray.FromSlice(v, 2048, 1024)
	a, _ = a.ToOrder(order)
	data := a.Data
	if fortran {
		data, _ = a.ColumnMajorData()
	}
	text := "{'descr': '" + a.DType.String() + "', 'fortran_order': False, 'shape': (2048, 1024), }"
	if fortran {
		text = "{'descr': '" + a.DType.String() + "', 'fortran_order': True, 'shape': (2048, 1024), }"
	}
	for (10+len(text)+1)%64 != 0 {
		text += " "
	}
	p := filepath.Join(b.TempDir(), "a.npy")
	if err := os.WriteFile(p, npyWith(1, text+"\n", data), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// The read rows of the performance table, each against os.ReadFile of the
// same file in the same iteration (x-baseline, the median ratio).
func BenchmarkReadFortran16MiBVsReadFile(b *testing.B) {
	benchReadVsReadFile(b, speedFile(b, true, '<'), ReadOptions{}.ReadFile)
}

func BenchmarkReadBigEndian16MiBToNativeVsReadFile(b *testing.B) {
	benchReadVsReadFile(b, speedFile(b, false, '>'), func(name string) (*ndarray.Array, error) {
		return ReadOptions{NativeOrder: true}.ReadFile(name)
	})
}

func BenchmarkRead16MiBVsReadFile(b *testing.B) {
	benchReadVsReadFile(b, speedFile(b, false, '<'), ReadOptions{}.ReadFile)
}

func BenchmarkReadFileInto16MiBVsReadFile(b *testing.B) {
	var buf []byte
	benchReadVsReadFile(b, speedFile(b, false, '<'), func(name string) (*ndarray.Array, error) {
		a, err := ReadOptions{}.ReadFileInto(name, buf)
		if err == nil {
			buf = a.Data[:cap(a.Data)]
		}
		return a, err
	})
}

func benchReadVsReadFile(b *testing.B, p string, read func(string) (*ndarray.Array, error)) {
	b.SetBytes(16 << 20)
	b.ReportAllocs()
	benchbase.Versus(b, func() {
		a, err := read(p)
		if err != nil {
			b.Fatal(err)
		}
		benchbase.Sink = a.Data
	}, func() {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		benchbase.Sink = d
	})
}
