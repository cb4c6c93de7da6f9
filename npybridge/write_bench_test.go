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

// BenchmarkWriteFileSlice16MiBVsRename is
// BenchmarkWriteFileSlice16MiBVsOSWriteFile against the minimal atomic
// replacement of a file by the same bytes: os.WriteFile of a temporary file
// in the same directory, then os.Rename of it over the target. Both sides
// rename over a file that exists (Versus runs each once before the loop),
// which on ext4 flushes the new file's data (auto_da_alloc), so the ratio
// is WriteFile's own overhead: its temporary name, locks, the stat of the
// target and the look for dead writers' files.
func BenchmarkWriteFileSlice16MiBVsRename(b *testing.B) {
	dir := b.TempDir()
	tmp, target := filepath.Join(dir, ".raw.tmp"), filepath.Join(dir, "raw")
	benchWriteFile(b, dir, func(raw []byte) error {
		if err := os.WriteFile(tmp, raw, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, target)
	})
	b.StopTimer()
	if got, err := os.ReadFile(target); err != nil || len(got) != 16<<20 {
		b.Fatalf("the baseline's file: %d bytes, %v", len(got), err)
	}
	if _, err := os.Lstat(tmp); err == nil {
		b.Fatal("the baseline's temporary file was left behind")
	}
}

// benchWriteFileVsOS measures WriteFile of 16 MiB viewed in place against
// os.WriteFile of the same bytes, both writing into dir.
func benchWriteFileVsOS(b *testing.B, dir string) {
	benchWriteFile(b, dir, func(raw []byte) error {
		return os.WriteFile(filepath.Join(dir, "raw"), raw, 0o644)
	})
}

// benchWriteFile measures WriteFile of 16 MiB viewed in place, into dir,
// against baseline writing the same bytes.
func benchWriteFile(b *testing.B, dir string, baseline func(raw []byte) error) {
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
		if err := baseline(raw); err != nil {
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
