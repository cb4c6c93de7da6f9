package ndarray

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// convertFast gives, for every pair it takes, the bits of the general
// element codec, over random bits and the edges of each type.
func TestConvertFastMatchesCodec(t *testing.T) {
	types := []string{"|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f4", "<f8"}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 4096
	pairs := 0
	for _, f := range types {
		from := MustParseDType(f)
		src := make([]byte, n*from.ItemSize)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		if from.Kind == 'f' {
			// Values a cast can meet: small, fractional, negative, edges.
			edges := []float64{0, -0.0, 0.5, -0.5, 1.5, -2.5, 127.9, -128.5, 255.5, 65535.9, -32768.9, 1e9, -1e9, 4e9, 1e18, -9e18, math.NaN(), math.Inf(1)}
			for i := 0; i < n; i++ {
				v := edges[i%len(edges)]
				if i >= len(edges) {
					v = (rng.Float64() - 0.5) * math.Pow(2, float64(rng.IntN(70)))
				}
				if from.ItemSize == 4 {
					binary.LittleEndian.PutUint32(src[i*4:], math.Float32bits(float32(v)))
				} else {
					binary.LittleEndian.PutUint64(src[i*8:], math.Float64bits(v))
				}
			}
		}
		for _, to := range types {
			dt := MustParseDType(to)
			fast := make([]byte, n*dt.ItemSize)
			if !convertFast(fast, src, from, dt, n) {
				t.Fatalf("%s -> %s: not taken", f, to)
			}
			slow := make([]byte, n*dt.ItemSize)
			sc, dc := elementCodec(from), elementCodec(dt)
			for i := 0; i < n; i++ {
				dc.put(slow[i*dt.ItemSize:], sc.get(src[i*from.ItemSize:]), dt)
			}
			if !bytes.Equal(fast, slow) {
				for i := 0; i < n; i++ {
					a, b := fast[i*dt.ItemSize:(i+1)*dt.ItemSize], slow[i*dt.ItemSize:(i+1)*dt.ItemSize]
					if !bytes.Equal(a, b) {
						t.Errorf("%s -> %s, element %d (% x): % x, the codec % x", f, to, i, src[i*from.ItemSize:(i+1)*from.ItemSize], a, b)
						break
					}
				}
			}
			pairs++
		}
	}
	for _, c := range [][2]string{{">f8", "<f4"}, {"<f8", ">i4"}, {"<f2", "<f4"}, {"<f8", "<c16"}, {"|b1", "<i4"}} {
		if convertFast(make([]byte, 16), make([]byte, 16), MustParseDType(c[0]), MustParseDType(c[1]), 1) {
			t.Errorf("%s -> %s taken", c[0], c[1])
		}
	}
	t.Logf("%d pairs agree", pairs)
}
