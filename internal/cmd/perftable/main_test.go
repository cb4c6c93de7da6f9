package main

import (
	"os"
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
	p := regexp.MustCompile(benchPattern(func(string) bool { return true }))
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

	// The slow rows run on their own, with their own -benchtime.
	fast := regexp.MustCompile(benchPattern(func(name string) bool { return slow[name] == "" }))
	for name := range slow {
		assert.False(t, fast.MatchString(name), name)
		assert.True(t, p.MatchString(name), name)
	}
	assert.True(t, fast.MatchString("BenchmarkRead16MiBVsReadFile"))
}

// readmeRow is a row of the README's performance table: a label, the
// benchmarks in backquotes, ndpack's ratios (or "not run") split by " / "
// then the baseline, and the peer's ratio and baseline or nothing.
var readmeRow = func() *regexp.Regexp {
	ratio := `(?:\d+\.\d\d(?:-\d+\.\d\d)?x|not run)`
	bench := "`Benchmark[A-Za-z0-9_]+`"
	return regexp.MustCompile(`^\| [^|]*[^| ] \| ` + bench + `(?:, ` + bench + `)* \| ` +
		ratio + `(?: / ` + ratio + `)* [^|]*[^| ] \| (?:` + ratio + ` [^|]*[^| ])? \|$`)
}()

// Every line perftable prints is in the format of the README's table, so
// that the lead can paste it there: the same header, and rows of the form
// the README's rows have (which the pattern is checked against first).
func TestTableInReadmeFormat(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	require.NoError(t, err)
	_, perf, ok := strings.Cut(string(readme), "\n## Performance\n")
	require.True(t, ok, "README.md has no Performance section")
	start := strings.Index(perf, "\n| ")
	require.GreaterOrEqual(t, start, 0, "no table in README's Performance section")
	tableText, _, _ := strings.Cut(perf[start+1:], "\n\n")
	readmeLines := strings.Split(tableText, "\n")
	require.Greater(t, len(readmeLines), 2)
	for _, line := range readmeLines[2:] {
		assert.Regexp(t, readmeRow, line, "a README row the pattern does not describe")
	}

	all, labels := map[string][]float64{}, map[string]bool{}
	for i, r := range rows {
		assert.False(t, labels[r.label], "row label used twice: %s", r.label)
		labels[r.label] = true
		assert.Equal(t, r.peer == "", r.peerBase == "", "row %q: a peer needs its baseline and a baseline its peer", r.label)
		for _, name := range append(r.benches, r.peer) {
			if name != "" {
				all[name] = []float64{1 + float64(i)/100, 1.5}
			}
		}
	}
	for _, ratios := range []map[string][]float64{all, {}} {
		lines := strings.Split(strings.TrimSuffix(table(ratios), "\n"), "\n")
		require.Len(t, lines, len(rows)+2)
		assert.Equal(t, readmeLines[:2], lines[:2], "the header differs from README's")
		for i, line := range lines[2:] {
			assert.Regexp(t, readmeRow, line)
			assert.Equal(t, len(rows[i].benches)-1, strings.Count(line, "x / ")+strings.Count(line, "run / "),
				"row %q: one value per benchmark", rows[i].label)
		}
	}
}
