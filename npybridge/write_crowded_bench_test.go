package npybridge

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// crowdedFiles is how many files the crowded directory holds (#35: the
// atomic write's cost must not grow with the number of files beside it).
const crowdedFiles = 100_000

// BenchmarkWriteFileSlice16MiBIn100kDirVsOSWriteFile is
// BenchmarkWriteFileSlice16MiBVsOSWriteFile in a directory that holds
// 100,000 other (empty) files, both sides writing there: WriteFile's look
// for dead writers' temporary files reads the whole directory, which
// os.WriteFile does not.
func BenchmarkWriteFileSlice16MiBIn100kDirVsOSWriteFile(b *testing.B) {
	dir := b.TempDir()
	for i := range crowdedFiles {
		f, err := os.Create(filepath.Join(dir, "f"+strconv.Itoa(i)))
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
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
