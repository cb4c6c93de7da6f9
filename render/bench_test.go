package render_test

import (
	"bytes"
	"image"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/render"
)

// frame4096 is a 4096 x 4096 <f4 camera-like frame: a smooth pattern under
// noise, which neither compresses to nothing nor is incompressible.
func frame4096() *ndarray.Array {
	const n = 4096
	v := make([]float32, n*n)
	r := rand.New(rand.NewSource(1))
	for i := range n {
		s := math.Sin(float64(i) / 300)
		for j := range n {
			v[i*n+j] = float32(1000*s*math.Cos(float64(j)/200) + 30*r.NormFloat64())
		}
	}
	a, _ := ndarray.FromSlice(v, n, n)
	return a
}

// pillowSeconds times Pillow's Image.fromarray(levels).save of the same
// 8-bit levels as a PNG into memory, the best of three.
func pillowSeconds(b *testing.B, levels []byte, n int) float64 {
	pypeer.RequireModule(b, "PIL", "python3-pil")
	p := filepath.Join(b.TempDir(), "levels.u1")
	if err := os.WriteFile(p, levels, 0o644); err != nil {
		b.Fatal(err)
	}
	out := pypeer.Run(b, `
import io, sys, time, numpy as np
from PIL import Image
n = int(sys.argv[2])
u = np.fromfile(sys.argv[1], dtype=np.uint8).reshape(n, n)
best = None
for _ in range(3):
    t = time.perf_counter()
    buf = io.BytesIO()
    Image.fromarray(u).save(buf, format='PNG')
    d = time.perf_counter() - t
    best = d if best is None else min(best, d)
print(best)
`, nil, p, strconv.Itoa(n))
	s, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkEncodePNG4096VsPillow draws a 4096 x 4096 <f4 array as a PNG
// (finding its extent, scaling, filtering, deflating at BestSpeed) and
// reports Pillow's time to save the already scaled uint8 array
// (pillow-ns/op), our time over Pillow's (x-pillow; the goal is 1 or
// less) and the bytes allocated per image over the array's size
// (x-array-bytes; the goal is 2 or less).
func BenchmarkEncodePNG4096VsPillow(b *testing.B) {
	a := frame4096()
	img, err := render.Image(a, render.Options{})
	if err != nil {
		b.Fatal(err)
	}
	pillow := pillowSeconds(b, img.(*image.Gray).Pix, 4096)
	var out bytes.Buffer
	out.Grow(16 << 20)
	b.SetBytes(int64(len(a.Data)))
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for b.Loop() {
		out.Reset()
		if err := render.EncodePNG(&out, a, render.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	allocated := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
	ours := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(pillow*1e9, "pillow-ns/op")
	b.ReportMetric(ours/pillow, "x-pillow")
	b.ReportMetric(float64(out.Len()), "png-bytes")
	b.ReportMetric(allocated/float64(len(a.Data)), "x-array-bytes")
}
