// Command perftable measures the README's performance table in one run:
// it runs every row's benchmark, ndpack's and the Python peers'
// (BenchmarkPeers, which times numpy and msgpack_numpy against the same
// kind of baseline in Python), in a single `go test -bench` invocation,
// one package at a time so that no two benchmarks share the machine, and
// prints the table in Markdown with the range of each ratio over the
// rounds.
//
// Usage, from the module's root:
//
//	go run ./internal/cmd/perftable [-count 3] [-benchtime 40x]
//
// It needs the Python peers (/usr/bin/python3 with numpy, msgpack and
// msgpack_numpy); go test's output is copied to stderr as it arrives.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// A row of the table: what is measured, the benchmarks whose x-baseline
// ratios make up ndpack's column (several are shown side by side, split
// by " / "), ndpack's baseline, and the peer's benchmark and baseline.
type row struct {
	label    string
	benches  []string
	baseline string
	peer     string
	peerBase string
}

var rows = []row{
	{"message with an 8 MiB `<f8` array, decode and read as an array (ext 110 / msgpack-numpy)",
		[]string{"BenchmarkMessage8MiBVsMakeCopy/ext110/decode", "BenchmarkMessage8MiBVsMakeCopy/msgpack-numpy/decode"}, "make+copy",
		"BenchmarkPeers/msgpack_numpy/decode", "msgpack_numpy, a bytes copy"},
	{"the same message, decode into the last call's memory (`UnmarshalMessageReusing`; ext 110 / msgpack-numpy)",
		[]string{"BenchmarkMessage8MiBVsMakeCopy/ext110/decode-reusing", "BenchmarkMessage8MiBVsMakeCopy/msgpack-numpy/decode-reusing"}, "make+copy",
		"BenchmarkPeers/msgpack_numpy/decode", "msgpack_numpy, a bytes copy"},
	{"the same message, decode with `MessageOptions.NoCopy` (ext 110 / msgpack-numpy)",
		[]string{"BenchmarkMessage8MiBVsMakeCopy/ext110/decode-nocopy", "BenchmarkMessage8MiBVsMakeCopy/msgpack-numpy/decode-nocopy"}, "make+copy",
		"BenchmarkPeers/msgpack_numpy/decode", "msgpack_numpy, a bytes copy"},
	{"the same message, encode (ext 110 / msgpack-numpy)",
		[]string{"BenchmarkMessage8MiBVsMakeCopy/ext110/encode", "BenchmarkMessage8MiBVsMakeCopy/msgpack-numpy/encode"}, "make+copy",
		"BenchmarkPeers/msgpack_numpy/encode", "msgpack_numpy, a bytes copy"},
	{"the same message, encode into the last message's buffer (`AppendMessage`; ext 110 / msgpack-numpy)",
		[]string{"BenchmarkMessage8MiBVsMakeCopy/ext110/encode-append", "BenchmarkMessage8MiBVsMakeCopy/msgpack-numpy/encode-append"}, "make+copy",
		"BenchmarkPeers/msgpack_numpy/encode", "msgpack_numpy, a bytes copy"},
	{"read a 16 MiB `.npy` / into a reused buffer (`ReadFileInto`)",
		[]string{"BenchmarkRead16MiBVsReadFile", "BenchmarkReadFileInto16MiBVsReadFile"}, "`os.ReadFile`",
		"BenchmarkPeers/numpy/read", "`np.load`, a file read"},
	{"16 MiB Fortran-order `.npy` to a row-major array",
		[]string{"BenchmarkReadFortran16MiBVsReadFile"}, "`os.ReadFile`",
		"BenchmarkPeers/numpy/fortran", "`ascontiguousarray(np.load)`, a file read"},
	{"16 MiB big-endian `.npy` to the machine's order (`NativeOrder`)",
		[]string{"BenchmarkReadBigEndian16MiBToNativeVsReadFile"}, "`os.ReadFile`",
		"BenchmarkPeers/numpy/big-endian", "`np.load` + in-place byteswap, a file read"},
	{"the same, against numpy in the same iteration (a parallel read and swap on every core)",
		[]string{"BenchmarkReadBigEndian16MiBToNativeVsNumpy"}, "numpy's time (`np.load` + in-place byteswap)", "", ""},
	{"write 3,000 deflated `.npz` members of 32 KiB, on 2 cores",
		[]string{"BenchmarkNPZManySmallTwoCoresVsOne"}, "the same on 1 core", "", ""},
	{"write 16 MiB of a Go slice (`ndarray.View`) into a file / atomically",
		[]string{"BenchmarkWriteSlice16MiBVsOSWriteFile", "BenchmarkWriteFileSlice16MiBVsOSWriteFile"}, "`os.WriteFile`",
		"BenchmarkPeers/numpy/write", "`np.save`, a file write"},
	{"write 16 MiB atomically, against the bare atomic replacement (ndpack's own overhead)",
		[]string{"BenchmarkWriteFileSlice16MiBVsRename"}, "`os.WriteFile` of a temporary file + `os.Rename` over the target", "", ""},
	{"write 16 MiB atomically into a directory holding 100,000 files",
		[]string{"BenchmarkWriteFileSlice16MiBIn100kDirVsOSWriteFile"}, "`os.WriteFile`", "", ""},
	{"64 MiB file to file, `.npy` to ext 110 / back",
		[]string{"BenchmarkConvertNPYToExt110File64MiBVsCopy", "BenchmarkConvertExt110ToNPYFile64MiBVsCopy"}, "`io.Copy`", "", ""},
	{"80 MiB `.npz` (a 64 MiB camera-like `<i2` stack, 16 MiB of random `<f4`), deflate at level 6 / read every member of numpy's archive",
		[]string{"BenchmarkNPZCompress80MiBVsNumpy", "BenchmarkNPZDecompress80MiBVsNumpy"}, "numpy's time (`np.savez_compressed` / `np.load` of every member)", "", ""},
	{"72 MiB `.npz` of camera stacks with Gaussian noise (sigma 10, 25, 50; 16 MiB `<i2` each) and 8 MiB each of normal, uniform and ramp `<f4`, deflate at level 6 (the archive's size over numpy's in `x-numpy-size`, the largest member's in `x-numpy-member-max`)",
		[]string{"BenchmarkNPZCompressNoisyVsNumpy"}, "numpy's time (`np.savez_compressed`)", "", ""},
	{"`ndpack render` of a 512 MiB `<f4` image to PNG (the built command, its peak RSS in the benchmark's `peak-rss-MiB`)",
		[]string{"BenchmarkRender512VsPillow"}, "Pillow's time (`Image.fromarray` of the same levels, then `save` as PNG)", "", ""},
	{"32 MiB echo call reusing memory on both sides, yaqrpc / yaq",
		[]string{"BenchmarkRoundTrip32MiBReusingVsUserEcho", "BenchmarkEcho32MiBReusingVsUserEcho"}, "an echo of each whole message", "", ""},
	{"256 MiB `.npy` from an HTTP server on loopback to a local ext 110 file",
		[]string{"BenchmarkRemoteConvertVsCurl"}, "`curl -o` of the same object", "", ""},
	{"256 MiB `.npy` from a server that serves each connection at 40 MB/s, to `.npy` (8 parts of 8 MiB at once)",
		[]string{"BenchmarkRemoteCappedVsOneConnection"}, "the same with `--concurrency 1`", "", ""},
	{"the same conversion",
		[]string{"BenchmarkRemoteCappedVsAria2"}, "`aria2c -x 8 -s 8` of the same object", "", ""},
	{"256 MiB `.npy` up to / down from S3 on loopback (in-process store, 20 MB/s a request)",
		[]string{"BenchmarkS3CappedUpload", "BenchmarkS3CappedDownload"}, "the same with `--concurrency 1`", "", ""},
	{"512 MiB camera-like `<f4` stack to a Zarr store, `--compress --level 6 --chunks 1,1024,1024` (the built command; its store's size over zarr-python's in `x-zarr-size`, its peak RSS in `peak-RSS-MiB`)",
		[]string{"BenchmarkZarrWrite512VsZarrPython"}, "zarr-python's time (`zarr.array(a, chunks=(1, 1024, 1024), compressor=Zlib(level=6))` into a directory store)", "", ""},
	{"that store back to an `.npy` (the built command; its peak RSS in `peak-RSS-MiB`)",
		[]string{"BenchmarkZarrRead512VsZarrPython"}, "zarr-python's time (`[...]` of the store, then `np.save`)", "", ""},
	{"`ndpack refs --stack` over 1,000 `.npy` files on an HTTP server on loopback (requests a file in `requests-per-npy`, the largest range in `largest-range-bytes`)",
		[]string{"BenchmarkRefs1000RemoteNPY"}, "1,000 GETs of 4 KiB, 8 at a time", "", ""},
}

// packages holds every row's benchmark; they run one after another (-p 1).
var packages = []string{".", "./npybridge", "./yaqrpc", "./yaq", "./cmd/ndpack"}

// slow are the benchmarks whose iteration takes seconds (numpy's side
// included), with the -benchtime they run at instead of the flag's: at
// 40x, the .npz and render rows alone would take most of an hour.
var slow = map[string]string{
	"BenchmarkNPZCompress80MiBVsNumpy":   "4x",
	"BenchmarkNPZCompressNoisyVsNumpy":   "4x",
	"BenchmarkNPZDecompress80MiBVsNumpy": "10x",
	"BenchmarkRender512VsPillow":         "3x",
	// Capped at 40 or 20 MB/s a connection, a baseline on one connection
	// takes 7 to 14 s.
	"BenchmarkRemoteCappedVsOneConnection": "3x",
	"BenchmarkRemoteCappedVsAria2":         "3x",
	"BenchmarkS3CappedUpload":              "2x",
	"BenchmarkS3CappedDownload":            "2x",
	"BenchmarkRemoteConvertVsCurl":         "5x",
	// zarr-python takes 20 to 40 s to compress the 512 MiB stack.
	"BenchmarkZarrWrite512VsZarrPython": "2x",
	"BenchmarkZarrRead512VsZarrPython":  "3x",
	"BenchmarkRefs1000RemoteNPY":        "5x",
}

func main() {
	count := flag.Int("count", 3, "rounds of every benchmark")
	benchtime := flag.String("benchtime", "40x", "go test -benchtime (but for the slow rows')")
	flag.Parse()
	ratios := map[string][]float64{}
	run := func(pattern, benchtime string) {
		args := append([]string{"test", "-p", "1", "-run", "^$", "-bench", pattern, "-benchtime", benchtime,
			"-count", strconv.Itoa(*count)}, packages...)
		cmd := exec.Command("go", args...)
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			fail(err)
		}
		if err := cmd.Start(); err != nil {
			fail(err)
		}
		got, err := parse(io.TeeReader(out, os.Stderr))
		if err != nil {
			fail(err)
		}
		if err := cmd.Wait(); err != nil {
			fail(fmt.Errorf("go %s: %w", strings.Join(args, " "), err))
		}
		for name, v := range got {
			ratios[name] = append(ratios[name], v...)
		}
	}
	run(benchPattern(func(name string) bool { return slow[name] == "" }), *benchtime)
	for name, bt := range slow {
		run(benchPattern(func(n string) bool { return n == name }), bt)
	}
	fmt.Print(table(ratios))
	if missing := notRun(ratios); len(missing) > 0 {
		fail(fmt.Errorf("no x-baseline result for %s", strings.Join(missing, ", ")))
	}
}

// notRun lists the rows' benchmarks that reported no ratio.
func notRun(ratios map[string][]float64) []string {
	var missing []string
	for _, r := range rows {
		for _, name := range append(r.benches, r.peer) {
			if name != "" && len(ratios[name]) == 0 {
				missing = append(missing, name)
			}
		}
	}
	return missing
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "perftable:", err)
	os.Exit(1)
}

// benchPattern matches the rows' benchmarks that keep selects, by their
// whole names (Benchmark included, as go test matches them), and nothing
// else; go test splits a -bench pattern at slashes into one pattern per
// level.
func benchPattern(keep func(name string) bool) string {
	top := map[string]bool{}
	var names []string
	for _, r := range rows {
		for _, b := range append(r.benches, r.peer) {
			name, _, _ := strings.Cut(b, "/")
			if name != "" && !top[name] && keep(name) {
				top[name] = true
				names = append(names, name)
			}
		}
	}
	return "^(" + strings.Join(names, "|") + ")$"
}

// resultLine is one result of go test -bench: its name (without the
// -GOMAXPROCS suffix), then the x-baseline metric somewhere after it.
var resultLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+\d+\s.*?\s([0-9.]+) x-baseline`)

// parse collects every x-baseline ratio by benchmark name.
func parse(r io.Reader) (map[string][]float64, error) {
	ratios := map[string][]float64{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		m := resultLine.FindStringSubmatch(s.Text())
		if m == nil {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", s.Text(), err)
		}
		ratios[m[1]] = append(ratios[m[1]], v)
	}
	return ratios, s.Err()
}

// table renders the rows with the ratios measured; a benchmark that did
// not run shows as "not run".
func table(ratios map[string][]float64) string {
	var b strings.Builder
	b.WriteString("| row | benchmark | ndpack | numpy / msgpack_numpy (`BenchmarkPeers`) |\n| --- | --- | --- | --- |\n")
	for _, r := range rows {
		var names, values []string
		seen := map[string]bool{}
		for _, name := range r.benches {
			top, _, _ := strings.Cut(name, "/")
			if !seen[top] {
				seen[top] = true
				names = append(names, "`"+top+"`")
			}
			values = append(values, span(ratios[name]))
		}
		peer := ""
		if r.peer != "" {
			peer = span(ratios[r.peer]) + " " + r.peerBase
		}
		fmt.Fprintf(&b, "| %s | %s | %s %s | %s |\n", r.label, strings.Join(names, ", "), strings.Join(values, " / "), r.baseline, peer)
	}
	return b.String()
}

// span is the range of the ratios, "1.02-1.07x", or one value, "1.02x".
func span(v []float64) string {
	if len(v) == 0 {
		return "not run"
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	if fmt.Sprintf("%.2f", lo) == fmt.Sprintf("%.2f", hi) {
		return fmt.Sprintf("%.2fx", lo)
	}
	return fmt.Sprintf("%.2f-%.2fx", lo, hi)
}
