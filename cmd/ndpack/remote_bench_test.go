package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/internal/testutil/s3fake"
)

// BenchmarkRemoteConvertVsCurl converts a 256 MiB .npy from an HTTP server
// on loopback to a local ext 110 file (ndpack convert URL OUT.msgpack),
// against curl -o of the same object from the same server: x-baseline is
// ndpack's time over curl's (the goal: at most 1.25, 0.8x curl's speed).
// peak-RSS-MiB is ndpack's largest resident set (the goal: under the 8
// parts of 8 MiB read at once and 32 MiB, 96 MiB).
func BenchmarkRemoteConvertVsCurl(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("no curl for the baseline")
	}
	src := benchFile(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, src)
	}))
	defer srv.Close()
	url := srv.URL + "/bench.npy"
	dir := b.TempDir()
	b.SetBytes(256<<20 + 128)
	var rss int64
	run := func(cmd *exec.Cmd) {
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", cmd, err, out)
		}
	}
	// The peak is measured by GNU time: a child forked from this process
	// would count the test's own memory (a 256 MiB array made the file)
	// in its peak until it execs.
	timeBin, err := exec.LookPath("/usr/bin/time")
	if err != nil {
		b.Skip("no /usr/bin/time to measure the peak resident set")
	}
	rssFile := filepath.Join(dir, "rss")
	benchbase.Versus(b, func() {
		run(exec.Command(timeBin, "-f", "%M", "-o", rssFile, ndpackBin, "convert", "--quiet", url, filepath.Join(dir, "out.msgpack")))
		text, err := os.ReadFile(rssFile)
		if err != nil {
			b.Fatal(err)
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(string(text)), 10, 64)
		if err != nil {
			b.Fatalf("GNU time wrote %q", text)
		}
		rss = max(rss, kib)
	}, func() {
		run(exec.Command(curl, "-s", "-f", "-o", filepath.Join(dir, "curl.npy"), url))
	})
	b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB")
}

// cappedServer serves the file src over HTTP on loopback with Range
// requests, each answer at most rate bytes a second, as an object store
// caps each connection.
func cappedServer(b *testing.B, src string, rate float64) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, err := os.Open(src)
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, _ := f.Stat()
		w.Header().Set("ETag", `"bench"`)
		http.ServeContent(&cappedWriter{ResponseWriter: w, rate: rate, start: time.Now()}, r, fi.Name(), fi.ModTime(), f)
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/" + filepath.Base(src)
}

// cappedWriter writes no faster than rate bytes a second.
type cappedWriter struct {
	http.ResponseWriter
	rate    float64
	start   time.Time
	written int64
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := min(len(p)-n, 64<<10)
		m, err := c.ResponseWriter.Write(p[n : n+k])
		n += m
		c.written += int64(m)
		if err != nil {
			return n, err
		}
		if due := time.Duration(float64(c.written) / c.rate * float64(time.Second)); due > time.Since(c.start) {
			time.Sleep(due - time.Since(c.start))
		}
	}
	return n, nil
}

// memDir is a directory in memory (/dev/shm) where there is one, else a
// temporary one: the outputs of the network benchmarks go there, so that
// the disk's writeback of one run's 256 MiB (which ext4 starts when a file
// is renamed over another) does not slow the next.
func memDir(b *testing.B) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "ndpack-bench-"); err == nil {
			b.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return b.TempDir()
}

// convertOnce runs ndpack convert with args, failing b on an error.
func convertOnce(b *testing.B, args ...string) {
	if out, err := exec.Command(ndpackBin, append([]string{"convert", "--quiet"}, args...)...).CombinedOutput(); err != nil {
		b.Fatalf("convert %q: %v\n%s", args, err, out)
	}
}

// BenchmarkRemoteCappedVsOneConnection converts a 256 MiB .npy from a
// loopback server that serves each connection at most 40 MB/s, with the
// default concurrency (8 parts of 8 MiB at once), against
// --concurrency 1: x-baseline is the first's time over the second's (the
// goal: at most 0.2).
func BenchmarkRemoteCappedVsOneConnection(b *testing.B) {
	url := cappedServer(b, benchFile(b), 40e6)
	dir := memDir(b)
	b.SetBytes(256<<20 + 128)
	benchbase.Versus(b, func() { convertOnce(b, url, filepath.Join(dir, "out.npy")) },
		func() { convertOnce(b, "--concurrency", "1", url, filepath.Join(dir, "one.npy")) })
}

// BenchmarkRemoteCappedVsAria2 is the same conversion against aria2c -x 8
// -s 8 (Debian's aria2: a download on the same 8 connections): the goal
// is at most 1.25.
func BenchmarkRemoteCappedVsAria2(b *testing.B) {
	aria2, err := exec.LookPath("aria2c")
	if err != nil {
		b.Skip("no aria2c (Debian's aria2) for the baseline")
	}
	url := cappedServer(b, benchFile(b), 40e6)
	dir := memDir(b)
	out := filepath.Join(dir, "out.npy")
	b.SetBytes(256<<20 + 128)
	benchbase.Versus(b, func() { convertOnce(b, url, out) }, func() {
		os.Remove(filepath.Join(dir, "aria2.npy"))
		cmd := exec.Command(aria2, "-q", "-x", "8", "-s", "8", "-k", "1M", "--allow-overwrite=true", "--auto-file-renaming=false",
			"--file-allocation=none", "-d", dir, "-o", "aria2.npy", url)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("aria2c: %v\n%s", err, out)
		}
	})
}

// BenchmarkS3CappedUpload converts a 256 MiB .npy into an S3 object on the
// in-process store, each of whose requests moves at most 20 MB/s, with the
// default concurrency (8 parts at once) against --concurrency 1: the goal
// is at most 0.33 (3 times the speed).
func BenchmarkS3CappedUpload(b *testing.B) {
	s := s3fake.Start(b, "bench")
	s.Throttle(20e6)
	src := benchFile(b)
	b.SetBytes(256<<20 + 128)
	benchbase.Versus(b, func() { convertOnce(b, src, "s3://bench/up.npy") },
		func() { convertOnce(b, "--concurrency", "1", src, "s3://bench/one.npy") })
}

// BenchmarkS3CappedDownload converts the same object back from the store,
// capped the same way, against --concurrency 1: the goal is at most 0.33.
func BenchmarkS3CappedDownload(b *testing.B) {
	s := s3fake.Start(b, "bench")
	src := benchFile(b)
	convertOnce(b, src, "s3://bench/down.npy")
	s.Throttle(20e6)
	dir := memDir(b)
	b.SetBytes(256<<20 + 128)
	benchbase.Versus(b, func() { convertOnce(b, "s3://bench/down.npy", filepath.Join(dir, "out.npy")) },
		func() { convertOnce(b, "--concurrency", "1", "s3://bench/down.npy", filepath.Join(dir, "one.npy")) })
}
