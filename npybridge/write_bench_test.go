package npybridge

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// Writing 16 MiB of a Go []float64 as an .npy, the slice viewed in place
// (ndarray.View), against os.WriteFile of the same bytes, in turn in each
// iteration (x-baseline is the median ratio): WriteFile, which writes
// through a temporary file renamed into place, and Write into a file the
// caller created, which is what np.save does.
func BenchmarkWriteFileSlice16MiBVsOSWriteFile(b *testing.B) {
	benchWriteFileVsOS(b, b.TempDir())
}

// benchWriteFileVsOS measures WriteFile of 16 MiB viewed in place against
// os.WriteFile of the same bytes, both writing into dir.
func benchWriteFileVsOS(b *testing.B, dir string) {
	v := make([]float64, 2<<20)
	for i := range v {
		v[i] = float64(i)
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	benchbase.Versus(b, func() {
		a, _ := ndarray.View(v)
		if err := WriteFile(filepath.Join(dir, "a.npy"), a); err != nil {
			b.Fatal(err)
		}
	}, func() {
		if err := os.WriteFile(filepath.Join(dir, "raw"), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkWriteSlice16MiBVsOSWriteFile(b *testing.B) {
	dir := b.TempDir()
	v := make([]float64, 2<<20)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), len(v)*8)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	benchbase.Versus(b, func() {
		f, err := os.Create(filepath.Join(dir, "a.npy"))
		if err != nil {
			b.Fatal(err)
		}
		a, _ := ndarray.View(v)
		if err := Write(f, a); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}, func() {
		if err := os.WriteFile(filepath.Join(dir, "raw"), raw, 0o644); err != nil {
			b.Fatal(err)
		}
	})
}
