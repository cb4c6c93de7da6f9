package npybridge

import (
	"archive/zip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/internal/testutil/frames"
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

// noisyBenchArrays are camera stacks with Gaussian noise of sigma 10, 25
// and 50 (16 MiB each), and 8 MiB each of normal, uniform and ramp
// float32: the members whose size issue #45 holds within 1% of numpy's.
func noisyBenchArrays(b testing.TB) []NamedArray {
	var out []NamedArray
	add := func(name, typestr string, data []byte, shape ...int) {
		a, err := ndarray.New(ndarray.MustParseDType(typestr), shape, data)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, NamedArray{name, a})
	}
	for i, sigma := range []float64{10, 25, 50} {
		add(fmt.Sprintf("camera_sigma%d", int(sigma)), "<i2", frames.Camera(32, sigma, uint64(i)), 32, frames.Side, frames.Side)
	}
	add("normal", "<f4", frames.Float32(2<<20, 7, (*rand.Rand).NormFloat64), 2<<20)
	add("uniform", "<f4", frames.Float32(2<<20, 8, (*rand.Rand).Float64), 2<<20)
	add("ramp", "<f4", frames.Ramp(2<<20), 2<<20)
	return out
}

// numpyDeflate starts numpy's worker on arrays, in dir, and returns once
// numpy has written its archive there.
func numpyDeflate(b *testing.B, dir string, arrays []NamedArray) *npzNumpy {
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
	benchCompressVsNumpy(b, deflateBenchArrays(b))
}

// BenchmarkNPZCompressNoisyVsNumpy is the same with the camera stacks
// with Gaussian noise and the floats of noisyBenchArrays (72 MiB);
// x-numpy-member-max is the largest of every member's compressed size over
// numpy's.
func BenchmarkNPZCompressNoisyVsNumpy(b *testing.B) {
	benchCompressVsNumpy(b, noisyBenchArrays(b))
}

func benchCompressVsNumpy(b *testing.B, arrays []NamedArray) {
	dir := b.TempDir()
	np := numpyDeflate(b, dir, arrays)
	out := filepath.Join(dir, "ndpack.npz")
	size := 0
	for _, a := range arrays {
		size += len(a.Array.Data)
	}
	b.SetBytes(int64(size))
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
	worst := 0.0
	theirMembers := memberSizes(b, np.path)
	for name, n := range memberSizes(b, out) {
		worst = max(worst, float64(n)/float64(theirMembers[name]))
	}
	b.ReportMetric(worst, "x-numpy-member-max")
}

// memberSizes is the compressed size of every member of the archive at
// path, by name, as its directory gives them.
func memberSizes(t testing.TB, path string) map[string]int64 {
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	sizes := map[string]int64{}
	for _, f := range zr.File {
		sizes[f.Name] = int64(f.CompressedSize64)
	}
	return sizes
}

// BenchmarkNPZDecompress80MiBVsNumpy reads every member of the archive
// numpy wrote, against np.load of every member of it. The arrays read are
// compared with the originals once, before the timing. numpy-ns/op is
// numpy's median time.
func BenchmarkNPZDecompress80MiBVsNumpy(b *testing.B) {
	np := numpyDeflate(b, b.TempDir(), deflateBenchArrays(b))
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
