package npybridge

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// The .npz deflate benchmarks of issue #35: a camera-like int16 stack of
// 64 MiB and 16 MiB of random float32, compressed and decompressed by
// ndpack and by numpy (np.savez_compressed, np.load of every member) in the
// same run; x-baseline is ndpack's time over numpy's.

// npzNumpy is numpy's side, measured once for both benchmarks.
type npzNumpy struct {
	Save, Load float64 // seconds, best of two
	Size       int64   // of numpy's archive
	path       string  // numpy's archive
	arrays     []NamedArray
}

var (
	npzNumpyOnce sync.Once
	npzNumpyRes  *npzNumpy
)

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

// numpyDeflate times numpy on the benchmark's arrays.
func numpyDeflate(b *testing.B) *npzNumpy {
	npzNumpyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ndpack-deflate-bench")
		if err != nil {
			b.Fatal(err)
		}
		arrays := deflateBenchArrays(b)
		stored := filepath.Join(dir, "stored.npz")
		if err := WriteNPZFile(stored, arrays, false); err != nil {
			b.Fatal(err)
		}
		out := pypeer.Run(b, `
import json, os, time, numpy as np
d = sys.argv[1]
with np.load(os.path.join(d, "stored.npz")) as z:
    arrs = {k: z[k] for k in z.files}
p = os.path.join(d, "numpy.npz")
save = load = None
for _ in range(2):
    t = time.perf_counter()
    np.savez_compressed(p, **arrs)
    s = time.perf_counter() - t
    save = s if save is None else min(save, s)
    t = time.perf_counter()
    with np.load(p) as z:
        back = [z[k] for k in z.files]
    s = time.perf_counter() - t
    load = s if load is None else min(load, s)
print(json.dumps({"Save": save, "Load": load, "Size": os.path.getsize(p)}))
`, nil, dir)
		var res npzNumpy
		if err := json.Unmarshal(out, &res); err != nil {
			b.Fatal(err)
		}
		res.path, res.arrays = filepath.Join(dir, "numpy.npz"), arrays
		npzNumpyRes = &res
	})
	if npzNumpyRes == nil {
		b.Fatal("numpy's timing failed")
	}
	return npzNumpyRes
}

// BenchmarkNPZCompress80MiBVsNumpy writes the arrays as a compressed .npz
// file at the default level (6, numpy's), as np.savez_compressed does.
func BenchmarkNPZCompress80MiBVsNumpy(b *testing.B) {
	np := numpyDeflate(b)
	out := filepath.Join(b.TempDir(), "ndpack.npz")
	b.SetBytes(80 << 20)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := WriteNPZFile(out, np.arrays, true); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	fi, err := os.Stat(out)
	if err != nil {
		b.Fatal(err)
	}
	ours := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(np.Save*1e9, "numpy-ns/op")
	b.ReportMetric(float64(fi.Size())/float64(np.Size), "x-numpy-size")
	b.ReportMetric(ours/np.Save, "x-baseline")
}

// BenchmarkNPZDecompress80MiBVsNumpy reads every member of the archive
// numpy wrote, as np.load of every member does.
func BenchmarkNPZDecompress80MiBVsNumpy(b *testing.B) {
	np := numpyDeflate(b)
	b.SetBytes(80 << 20)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		a, err := ReadOptions{}.ReadNPZFile(np.path)
		if err != nil {
			b.Fatal(err)
		}
		if len(a) != 2 || !a[0].Array.Equal(np.arrays[0].Array) {
			b.Fatal("the arrays differ")
		}
	}
	b.StopTimer()
	ours := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(np.Load*1e9, "numpy-ns/op")
	b.ReportMetric(ours/np.Load, "x-baseline")
}
