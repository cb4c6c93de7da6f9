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

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
)

// BenchmarkRemoteConvertVsCurl converts a 256 MiB .npy from an HTTP server
// on loopback to a local ext 110 file (ndpack convert URL OUT.msgpack),
// against curl -o of the same object from the same server: x-baseline is
// ndpack's time over curl's (the goal: at most 1.25, 0.8x curl's speed).
// peak-RSS-MiB is ndpack's largest resident set (the goal: under 64).
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
