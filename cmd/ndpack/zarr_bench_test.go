package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// cameraStack writes a (frames, h, w) <f4 .npy of camera-like frames (a
// smooth pattern that drifts from frame to frame, under noise) a row at a
// time.
func cameraStack(b *testing.B, p string, frames, h, w int) {
	b.Helper()
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.Write(npybridge.AppendHeader(nil, ndarray.DTypeOf[float32](), []int{frames, h, w}))
	rng := rand.New(rand.NewPCG(4, 6))
	row := make([]byte, 4*w)
	for k := range frames {
		for i := range h {
			s := math.Sin(float64(i+3*k) / 300)
			for j := range w {
				v := float32(1000*s*math.Cos(float64(j)/200) + 30*rng.NormFloat64())
				binary.LittleEndian.PutUint32(row[4*j:], math.Float32bits(v))
			}
			bw.Write(row)
		}
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// zarrWorker is zarr-python, the stack loaded once: "save" writes it as
// zarr.array(a, chunks=(1, 1024, 1024), compressor=Zlib(level=6)) into a
// directory store; "read" reads that store's [...] and np.save's it.
const zarrWorker = `
import sys, time, numpy as np, zarr, numcodecs
src, store, npy = sys.argv[1], sys.argv[2], sys.argv[3]
a = np.load(src)
print('ready', flush=True)
for line in sys.stdin:
    cpu = time.process_time()
    if line.strip() == 'save':
        zarr.array(a, chunks=(1, 1024, 1024), compressor=numcodecs.Zlib(level=6), store=zarr.DirectoryStore(store), overwrite=True)
    else:
        np.save(npy, zarr.open(zarr.DirectoryStore(store), mode='r')[...])
    print('done', time.process_time() - cpu, flush=True)
`

// cpuTimes adds up the CPU seconds of both sides, for cpu-x-baseline:
// on a machine whose cores other work keeps busy, the wall-clock ratio
// says little of what either side costs.
type cpuTimes struct{ ours, theirs float64 }

// zarrDo sends cmd to zarr-python's worker and adds the CPU seconds it
// answers with.
func (c *cpuTimes) zarrDo(b *testing.B, w *pypeer.Worker, cmd string) {
	answer := w.Do(cmd)
	done, secs, ok := strings.Cut(answer, " ")
	s, err := strconv.ParseFloat(secs, 64)
	if done != "done" || !ok || err != nil {
		b.Fatalf("zarr-python answered %q to %s", answer, cmd)
	}
	c.theirs += s
}

func (c *cpuTimes) report(b *testing.B) {
	b.ReportMetric(c.ours/c.theirs, "cpu-x-baseline")
}

// timedRSS runs ndpack with args under GNU time and returns its peak RSS
// in KiB, adding its CPU seconds (user and system) to c.
func timedRSS(b *testing.B, c *cpuTimes, rssFile string, args ...string) int64 {
	cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M %U %S", "-o", rssFile, ndpackBin}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	text, err := os.ReadFile(rssFile)
	if err != nil {
		b.Fatal(err)
	}
	var kib int64
	var user, sys float64
	if _, err := fmt.Sscanf(string(text), "%d %f %f", &kib, &user, &sys); err != nil {
		b.Fatalf("GNU time wrote %q", text)
	}
	c.ours += user + sys
	return kib
}

// dirSize is the bytes of the files under dir.
func dirSize(b *testing.B, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		n += fi.Size()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return n
}

// zarrBench writes the 512 MiB stack (128 x 1024 x 1024 <f4) and starts
// zarr-python's worker on it.
func zarrBench(b *testing.B) (dir, src string, w *pypeer.Worker) {
	pypeer.RequireModule(b, "zarr", "python3-zarr")
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		b.Skip("no /usr/bin/time to measure the peak resident set")
	}
	dir = b.TempDir()
	src = filepath.Join(dir, "stack.npy")
	cameraStack(b, src, 128, 1024, 1024)
	w, first := pypeer.StartWorker(b, zarrWorker, src, filepath.Join(dir, "py.zarr"), filepath.Join(dir, "py.npy"))
	if first != "ready" {
		b.Fatalf("zarr-python's worker began with %q", first)
	}
	return dir, src, w
}

// BenchmarkZarrWrite512VsZarrPython converts a 512 MiB camera-like <f4
// stack (128 x 1024 x 1024) from an .npy into a Zarr store with
// --compress --level 6 --chunks 1,1024,1024 (the built command, run
// whole), against zarr-python's zarr.array(a, chunks=(1, 1024, 1024),
// compressor=Zlib(level=6)) into a directory store of the array already
// in memory, taking turns. x-baseline is ndpack's time over zarr-python's
// (the goal: at most 0.33), x-zarr-size its store's bytes over
// zarr-python's (at most 1.02), peak-RSS-MiB its largest resident set
// (under 64), cpu-x-baseline its CPU seconds over zarr-python's (what
// either costs, whatever else keeps the cores busy).
func BenchmarkZarrWrite512VsZarrPython(b *testing.B) {
	dir, src, w := zarrBench(b)
	out := filepath.Join(dir, "ndpack.zarr")
	rss := filepath.Join(dir, "rss")
	var peak int64
	var cpu cpuTimes
	b.SetBytes(512 << 20)
	benchbase.Versus(b, func() {
		os.RemoveAll(out)
		peak = max(peak, timedRSS(b, &cpu, rss, "convert", "--quiet", "--compress", "--level", "6", "--chunks", "1,1024,1024", src, out))
	}, func() { cpu.zarrDo(b, w, "save") })
	b.ReportMetric(float64(dirSize(b, out))/float64(dirSize(b, filepath.Join(dir, "py.zarr"))), "x-zarr-size")
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	cpu.report(b)
}

// BenchmarkZarrRead512VsZarrPython converts zarr-python's store of that
// stack back into an .npy (ndpack convert STORE OUT.npy), against
// zarr-python's [...] of it and np.save, taking turns. x-baseline is
// ndpack's time over zarr-python's (the goal: at most 1), peak-RSS-MiB
// its largest resident set (under 64), cpu-x-baseline its CPU seconds
// over zarr-python's.
func BenchmarkZarrRead512VsZarrPython(b *testing.B) {
	dir, _, w := zarrBench(b)
	var cpu cpuTimes
	cpu.zarrDo(b, w, "save")
	cpu = cpuTimes{}
	store, out := filepath.Join(dir, "py.zarr"), filepath.Join(dir, "ndpack.npy")
	rss := filepath.Join(dir, "rss")
	var peak int64
	b.SetBytes(512 << 20)
	benchbase.Versus(b, func() {
		peak = max(peak, timedRSS(b, &cpu, rss, "convert", "--quiet", store, out))
	}, func() { cpu.zarrDo(b, w, "read") })
	ours, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	theirs, err := os.ReadFile(filepath.Join(dir, "py.npy"))
	if err != nil || !bytes.Equal(ours, theirs) {
		b.Fatal("ndpack's .npy differs from zarr-python's np.save")
	}
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MiB")
	cpu.report(b)
}

// BenchmarkRefs1000RemoteNPY makes references to 1,000 .npy files (4 MiB
// each) on an HTTP server on loopback (ndpack refs --stack, the built
// command), against 1,000 GETs of their first 4 KiB, 8 at a time, from
// the same process as the server (the requests alone). It reports the
// requests a file (the goal: at most 1) and the largest range asked
// (at most 4 KiB).
func BenchmarkRefs1000RemoteNPY(b *testing.B) {
	dir := b.TempDir()
	frame := make([]byte, 4<<20)
	for i := range frame {
		frame[i] = byte(i * 7)
	}
	hdr := npybridge.AppendHeader(nil, ndarray.DTypeOf[float32](), []int{1024, 1024})
	body := append(hdr, frame...)
	var urls []string
	var requests, largest atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Baseline") == "" { // ndpack's
			requests.Add(1)
			var first, last int64
			n := int64(math.MaxInt64) // a whole object asked for
			if _, err := fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last); err == nil {
				n = last - first + 1
			}
			for old := largest.Load(); n > old && !largest.CompareAndSwap(old, n); old = largest.Load() {
			}
		}
		http.ServeContent(w, r, "f.npy", time.Unix(1700000000, 0), bytes.NewReader(body))
	}))
	defer srv.Close()
	for i := range 1000 {
		urls = append(urls, fmt.Sprintf("%s/shot%04d.npy", srv.URL, i))
	}
	args := append([]string{"refs", "--stack", "shots", "--output", filepath.Join(dir, "refs.json")}, urls...)
	get := func(url string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Range", "bytes=0-4095")
		req.Header.Set("X-Baseline", "1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var buf [4096]byte
		n, _ := resp.Body.Read(buf[:])
		for n > 0 {
			n, _ = resp.Body.Read(buf[:])
		}
		resp.Body.Close()
	}
	requests.Store(0)
	benchbase.Versus(b, func() {
		if out, err := exec.Command(ndpackBin, args...).CombinedOutput(); err != nil {
			b.Fatalf("refs: %v\n%s", err, out)
		}
	}, func() {
		next := make(chan string)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for u := range next {
					get(u)
				}
			}()
		}
		for _, u := range urls {
			next <- u
		}
		close(next)
		wg.Wait()
	})
	// Versus runs ndpack once before its b.N turns.
	b.ReportMetric(float64(requests.Load())/float64((b.N+1)*1000), "requests-per-npy")
	b.ReportMetric(float64(largest.Load()), "largest-range-bytes")
}
