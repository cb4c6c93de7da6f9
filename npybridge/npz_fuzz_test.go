package npybridge

import (
	"bytes"
	"compress/flate"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
)

// npzSeeds are the archives of the external corpus (numpy's, and other
// libraries' test files) and the hostile archives of this package's
// tests.
func npzSeeds(f *testing.F) [][]byte {
	root := "../../shared/corpus/external"
	sharedfiles.ReadFile(f, filepath.Join(root, "README.md"))
	var seeds [][]byte
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".npz") {
			seeds = append(seeds, sharedfiles.ReadFile(f, p))
		}
		return nil
	})
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	npy := npyOf(f, a)
	p1, p2 := storedPart("a.npy", npy), storedPart("b.npy", npy)
	two := []zipPart{p1, deflatedPart("b.npy", npy, flate.BestCompression)}
	seeds = append(seeds,
		sameMember(f, 20),
		hugeClaim(zipStore, false), hugeClaim(zipDeflate, false), hugeClaim(zipDeflate, true),
		honest(two...),
		buildZip(two, func(offsets []int64) []zipRecord { return recordsOf(two, offsets) }, true),
		buildZip([]zipPart{p1, p2}, func(offsets []int64) []zipRecord {
			rs := recordsOf([]zipPart{p1, p2}, offsets)
			rs[1].offset = 100
			return rs
		}, false))
	return seeds
}

// FuzzNPZ opens an archive and reads the header and the array of every
// member: no panic, what is read is valid, and memory stays within what
// deflate can make of the input (members do not overlap, so their
// compressed bytes add up to at most the input).
func FuzzNPZ(f *testing.F) {
	for _, s := range npzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		before := allocatedSoFar()
		z, err := OpenNPZ(bytes.NewReader(in), int64(len(in)))
		if err == nil {
			for _, name := range z.Names() {
				h, herr := z.Header(name)
				a, rerr := z.Read(name)
				if rerr != nil {
					continue
				}
				if herr != nil {
					t.Fatalf("member %q reads but its header does not: %v", name, herr)
				}
				if err := a.Validate(); err != nil {
					t.Fatalf("member %q: invalid array: %v", name, err)
				}
				if ndarray.FormatShape(a.Shape) != ndarray.FormatShape(h.Shape) || a.DType != h.DType {
					t.Fatalf("member %q: read %s %s, its header says %s %s", name, a.DType, ndarray.FormatShape(a.Shape), h.DType, ndarray.FormatShape(h.Shape))
				}
				if rows, err := z.ReadRows(name, 1, -1); err == nil {
					first, count := rowSpan(a.Shape[0], 1, -1)
					rowBytes := 0
					if a.Shape[0] > 0 {
						rowBytes = len(a.Data) / a.Shape[0]
					}
					if rows.Shape[0] != count || !bytes.Equal(rows.Data, a.Data[first*rowBytes:(first+count)*rowBytes]) {
						t.Fatalf("member %q: rows 1:-1 differ from the array's", name)
					}
				}
			}
		}
		if got, most := allocatedSoFar()-before, uint64(4<<20+3*maxInflateRatio*len(in)); got > most {
			t.Fatalf("%d bytes allocated for a %d-byte archive (at most %d)", got, len(in), most)
		}
	})
}

// allocatedSoFar returns the bytes the heap has allocated since the start,
// as runtime.MemStats.TotalAlloc does, without stopping the world.
func allocatedSoFar() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
