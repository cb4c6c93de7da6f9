package npybridge

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
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
	benchWriteFileVsOS(b, dir)
}
