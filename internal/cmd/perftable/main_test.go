package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// go test's result lines become ratios by name, and the table shows each
// row's range, its peer's, and "not run" for what is missing.
func TestParseAndTable(t *testing.T) {
	out := `goos: linux
BenchmarkPeers/numpy/fortran-2      	      20	        36.55 ns/op	         1.744 x-baseline
BenchmarkReadFortran16MiBVsReadFile-2   	      30	  10403143 ns/op	1612.71 MB/s	   7337749 subject-ns/op	         2.422 x-baseline	34612714 B/op	      18 allocs/op
BenchmarkReadFortran16MiBVsReadFile-2   	      30	  10512852 ns/op	1595.88 MB/s	   8037452 subject-ns/op	         2.801 x-baseline	34612706 B/op	      18 allocs/op
BenchmarkMessage8MiBVsMakeCopy/ext110/decode-2   	      40	  1 ns/op	         1.020 x-baseline
PASS
`
	ratios, err := parse(strings.NewReader(out))
	require.NoError(t, err)
	assert.Equal(t, map[string][]float64{
		"BenchmarkPeers/numpy/fortran":                 {1.744},
		"BenchmarkReadFortran16MiBVsReadFile":          {2.422, 2.801},
		"BenchmarkMessage8MiBVsMakeCopy/ext110/decode": {1.02},
	}, ratios)
	got := table(ratios)
	assert.Contains(t, got, "| 16 MiB Fortran-order `.npy` to a row-major array | `BenchmarkReadFortran16MiBVsReadFile` | 2.42-2.80x `os.ReadFile` | 1.74x `ascontiguousarray(np.load)`, a file read |\n")
	assert.Contains(t, got, "| 1.02x / not run make+copy | not run msgpack_numpy, a bytes copy |\n")
	assert.Equal(t, len(rows)+2, strings.Count(got, "\n"))
	assert.Contains(t, notRun(ratios), "BenchmarkPeers/numpy/read")
	assert.NotContains(t, notRun(ratios), "BenchmarkReadFortran16MiBVsReadFile")
}

// The pattern handed to go test picks every row's benchmark and no other.
func TestBenchPattern(t *testing.T) {
	p := regexp.MustCompile(benchPattern())
	for _, r := range rows {
		for _, name := range append(r.benches, r.peer) {
			if name == "" {
				continue
			}
			top, _, _ := strings.Cut(name, "/")
			assert.True(t, p.MatchString(top), name)
		}
	}
	assert.False(t, p.MatchString("BenchmarkRead16MiB"), "an unrelated benchmark with a shared prefix")
	assert.False(t, p.MatchString("BenchmarkMapFill1GiB2Procs"))
	assert.False(t, p.MatchString("Read16MiBVsReadFile"), "go test matches names with Benchmark")
}
