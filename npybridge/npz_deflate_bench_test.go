package npybridge

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// The .npz deflate benchmarks of issue #35: a camera-like int16 stack of
// 64 MiB and 16 MiB of random float32, compressed and decompressed by
// ndpack and by numpy (np.savez_compressed, np.load of every member) in
// turn in every iteration (benchbase.Versus), so that both meet the same
// load of the shared machine: x-baseline is the median over iterations of
// ndpack's time over numpy's.
//
// Numpy's side is one long-running /usr/bin/python3 worker per benchmark
// (pypeer.StartWorker), which holds the arrays and does one operation per
// command line. Its time is measured in Go around the request (the command
// written, the answer read), so it includes the pipe's round trip:
// microseconds, against about a second of work.

// npzWorkerScript loads the arrays from sys.argv[1]/stored.npz, writes
// numpy's archive sys.argv[1]/numpy.npz once, prints "ready", then answers
// "save" (np.savez_compressed of the arrays to numpy.npz) and "load" (np.load
// of every member of numpy.npz) with "done" once the work is done.
const npzWorkerScript = `
import os, sys, numpy as np
d = sys.argv[1]
with np.load(os.path.join(d, "stored.npz")) as z:
    arrs = {k: z[k] for k in z.files}
p = os.path.join(d, "numpy.npz")
np.savez_compressed(p, **arrs)
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.strip()
    if cmd == "save":
        np.savez_compressed(p, **arrs)
    elif cmd == "load":
        with np.load(p) as z:
            back = [z[k] for k in z.files]
        del back
    else:
        sys.exit("unknown command %r" % cmd)
    print("done", flush=True)
`

// npzNumpy is numpy's side of one benchmark.
type npzNumpy struct {
	w      *pypeer.Worker
	path   string // numpy's archive, written once before the timing
	arrays []NamedArray
	times  []time.Duration // of every request, in order
}

func deflateBenchArrays(b *testing.B) []NamedArray {
	cam := cameraBytes(64<<20, 35)
	cams := make([]int16, len(cam)/2)
	for i := range cams {
		cams[i] = int16(uint16(cam[2*i]) | uint16(cam[2*i+1])<<8)
	}
	camArr, err := ndarray.FromSlice(cams, 128, 512, 512)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(35, 35))
	noise := make([]float32, 4<<20)
	for i := range noise {
		noise[i] = r.Float32()
	}
	noiseArr, err := ndarray.FromSlice(noise)
	if err != nil {
		b.Fatal(err)
	}
	return []NamedArray{{"camera", camArr}, {"noise", noiseArr}}
}

// numpyDeflate starts numpy's worker on the benchmark's arrays, in dir,
// and returns once numpy has written its archive there.
func numpyDeflate(b *testing.B, dir string) *npzNumpy {
	arrays := deflateBenchArrays(b)
	stored := filepath.Join(dir, "stored.npz")
	if err := WriteNPZFile(stored, arrays, false); err != nil {
		b.Fatal(err)
	}
	w, first := pypeer.StartWorker(b, npzWorkerScript, dir)
	if first != "ready" {
		b.Fatalf("numpy's worker began with %q, not ready", first)
	}
	if err := os.Remove(stored); err != nil {
		b.Fatal(err)
	}
	return &npzNumpy{w: w, path: filepath.Join(dir, "numpy.npz"), arrays: arrays}
}

// do is the baseline: one request to numpy's worker, timed.
func (np *npzNumpy) do(b *testing.B, cmd string) {
	t := time.Now()
	if answer := np.w.Do(cmd); answer != "done" {
		b.Fatalf("numpy's worker answered %q to %s", answer, cmd)
	}
	np.times = append(np.times, time.Since(t))
}

// median is the median time of the last b.N requests: those of the timed
// loop, not the one Versus makes before it.
func (np *npzNumpy) median(b *testing.B) time.Duration {
	if b.N < 1 || b.N > len(np.times) {
		b.Fatalf("%d iterations, %d requests to numpy", b.N, len(np.times))
	}
	t := slices.Clone(np.times[len(np.times)-b.N:])
	slices.Sort(t)
	if len(t)%2 == 0 {
		return (t[len(t)/2-1] + t[len(t)/2]) / 2
	}
	return t[len(t)/2]
}

// BenchmarkNPZCompress80MiBVsNumpy writes the arrays as a compressed .npz
// file at the default level (6, numpy's), against np.savez_compressed of
// the same arrays to a file. numpy-ns/op is numpy's median time,
// x-numpy-size the size of ndpack's archive over numpy's.
func BenchmarkNPZCompress80MiBVsNumpy(b *testing.B) {
	dir := b.TempDir()
	np := numpyDeflate(b, dir)
	out := filepath.Join(dir, "ndpack.npz")
	b.SetBytes(80 << 20)
	b.ReportAllocs()
	benchbase.Versus(b, func() {
		if err := WriteNPZFile(out, np.arrays, true); err != nil {
			b.Fatal(err)
		}
	}, func() { np.do(b, "save") })
	ours, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	theirs, err := os.Stat(np.path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(np.median(b).Nanoseconds()), "numpy-ns/op")
	b.ReportMetric(float64(ours.Size())/float64(theirs.Size()), "x-numpy-size")
}

// BenchmarkNPZDecompress80MiBVsNumpy reads every member of the archive
// numpy wrote, against np.load of every member of it. The arrays read are
// compared with the originals once, before the timing. numpy-ns/op is
// numpy's median time.
func BenchmarkNPZDecompress80MiBVsNumpy(b *testing.B) {
	np := numpyDeflate(b, b.TempDir())
	a, err := ReadOptions{}.ReadNPZFile(np.path)
	if err != nil {
		b.Fatal(err)
	}
	if len(a) != len(np.arrays) {
		b.Fatalf("%d members read, want %d", len(a), len(np.arrays))
	}
	for i, want := range np.arrays {
		if a[i].Name != want.Name || !a[i].Array.Equal(want.Array) {
			b.Fatalf("member %d (%s) differs from %s", i, a[i].Name, want.Name)
		}
	}
	a = nil
	b.SetBytes(80 << 20)
	b.ReportAllocs()
	benchbase.Versus(b, func() {
		a, err := ReadOptions{}.ReadNPZFile(np.path)
		if err != nil {
			b.Fatal(err)
		}
		if len(a) != 2 {
			b.Fatalf("%d members read, want 2", len(a))
		}
	}, func() { np.do(b, "load") })
	b.ReportMetric(float64(np.median(b).Nanoseconds()), "numpy-ns/op")
}
