package npybridge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// objects1M is np.save of an object array of a million short strings
// ("s0" ... "s999999").
func objects1M(b *testing.B) []byte {
	values := make([]any, 1000000)
	for i := range values {
		values[i] = "s" + strconv.Itoa(i)
	}
	file, err := AppendObjects(nil, &ObjectArray{Shape: []int{len(values)}, Values: values})
	if err != nil {
		b.Fatal(err)
	}
	return file
}

// numpyLoadSeconds times np.load(allow_pickle=True) of the file in
// numpy, the best of five, so that the ratio is measured in the same run.
func numpyLoadSeconds(b *testing.B, file []byte) float64 {
	p := filepath.Join(b.TempDir(), "objects.npy")
	if err := os.WriteFile(p, file, 0o644); err != nil {
		b.Fatal(err)
	}
	out := pypeer.Run(b, `
import sys, time, numpy as np
best = None
for _ in range(5):
    t = time.perf_counter()
    a = np.load(sys.argv[1], allow_pickle=True)
    d = time.perf_counter() - t
    best = d if best is None else min(best, d)
assert a.shape == (1000000,) and a[999999] == 's999999'
print(best)
`, nil, p)
	s, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkReadObjects1M reads an object array of a million short strings
// from memory, and reports numpy's np.load(allow_pickle=True) of the same
// file from a file in the page cache (numpy-ns/op, best of five) and our
// time over numpy's (x-numpy): the target is 2 or less.
func BenchmarkReadObjects1M(b *testing.B) {
	file := objects1M(b)
	numpy := numpyLoadSeconds(b, file)
	b.SetBytes(int64(len(file)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a, err := ReadOptions{AllowObjects: true}.ReadObjects(bytes.NewReader(file))
		if err != nil {
			b.Fatal(err)
		}
		if len(a.Values) != 1000000 {
			b.Fatal(fmt.Sprint(len(a.Values)))
		}
	}
	b.StopTimer()
	ours := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(numpy*1e9, "numpy-ns/op")
	b.ReportMetric(ours/numpy, "x-numpy")
}
