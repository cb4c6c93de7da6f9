package main

import (
	"bufio"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// cameraFile writes a (h, w) <f4 .npy of a camera-like frame (a smooth
// pattern under noise, which neither compresses to nothing nor is
// incompressible) a row at a time.
func cameraFile(b *testing.B, p string, h, w int) {
	b.Helper()
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	bw.Write(npybridge.AppendHeader(nil, ndarray.DTypeOf[float32](), []int{h, w}))
	rng := rand.New(rand.NewPCG(1, 2))
	row := make([]byte, 4*w)
	for i := range h {
		s := math.Sin(float64(i) / 300)
		for j := range w {
			v := float32(1000*s*math.Cos(float64(j)/200) + 30*rng.NormFloat64())
			binary.LittleEndian.PutUint32(row[4*j:], math.Float32bits(v))
		}
		bw.Write(row)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRender512VsPillow is `ndpack render` of a 512 MiB <f4 image
// (16384 x 8192) to a PNG, the built command run whole (reading the file
// twice, scaling, filtering, deflating on every core), against Pillow's
// Image.fromarray of the same 8-bit levels then save as a PNG (its default
// compression), the two taking turns in the same run. Pillow also reads
// back ndpack's PNG and finds the same pixels as numpy's scaling. It
// reports Pillow's mean time (pillow-ns/op), the median of the turns'
// ratios of ours to Pillow's (x-baseline: the goal is 0.5 or less) and the
// command's peak RSS (peak-rss-MiB: the goal is under 64).
func BenchmarkRender512VsPillow(b *testing.B) {
	pypeer.RequireModule(b, "PIL", "python3-pil")
	dir := b.TempDir()
	in, out := filepath.Join(dir, "frame.npy"), filepath.Join(dir, "frame.png")
	const h, w = 16384, 8192
	cameraFile(b, in, h, w)
	rssFile := filepath.Join(dir, "rss")
	run := func() int64 {
		cmd := exec.Command(pypeer.Python, "-c", spawn, rssFile, ndpackBin, "render", in, out)
		if o, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, o)
		}
		kb, err := os.ReadFile(rssFile)
		if err != nil {
			b.Fatal(err)
		}
		n, err := strconv.ParseInt(string(kb), 10, 64)
		if err != nil {
			b.Fatal(err)
		}
		return n << 10
	}
	run() // the page cache warm, and a PNG for Pillow to check
	levels := filepath.Join(dir, "levels.npy")
	pypeer.Run(b, `
import sys, numpy as np
from PIL import Image
a = np.load(sys.argv[1], mmap_mode='r')
lo, hi = float(a.min()), float(a.max())
k = 1 / (hi - lo) * 255
u = np.empty(a.shape, np.uint8)
for i in range(0, a.shape[0], 1024):
    x = (a[i:i+1024].astype(np.float64) - lo) * k
    u[i:i+1024] = np.floor(np.minimum(np.maximum(x, 0), 255) + 0.5)
if not np.array_equal(np.asarray(Image.open(sys.argv[2])), u):
    sys.exit('ndpack drew other pixels than numpy scales')
np.save(sys.argv[3], u)
`, nil, in, out, levels)
	// Pillow and ndpack take turns, so that both see the same load.
	pillow := func() float64 {
		o := pypeer.Run(b, `
import sys, time, numpy as np
from PIL import Image
u = np.load(sys.argv[1])
t = time.perf_counter()
Image.fromarray(u).save(sys.argv[2], format='PNG')
print(time.perf_counter() - t)
`, nil, levels, filepath.Join(dir, "pillow.png"))
		s, err := strconv.ParseFloat(strings.TrimSpace(string(o)), 64)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	fi, _ := os.Stat(in)
	b.SetBytes(fi.Size())
	var peak int64
	var ratios []float64
	var pillowSum float64
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		p := pillow()
		pillowSum += p
		b.StartTimer()
		t := time.Now()
		peak = max(peak, run())
		ratios = append(ratios, time.Since(t).Seconds()/p)
	}
	b.StopTimer()
	sort.Float64s(ratios)
	b.ReportMetric(pillowSum/float64(len(ratios))*1e9, "pillow-ns/op")
	b.ReportMetric(ratios[len(ratios)/2], "x-baseline") // over Pillow's time
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MiB")
}
