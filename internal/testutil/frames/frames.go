// Package frames makes the synthetic data the compression tests and
// benchmarks hold ndpack to: camera frames with Gaussian noise, whose low
// bytes are noise and high bytes nearly constant, and arrays of random
// floats.
package frames

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// Side is the width and height of a frame.
const Side = 512

// Camera is frames of Side x Side little-endian int16, a camera's stack: a
// smooth picture (a bright spot on a dark ramp that drifts from frame to
// frame) plus Gaussian noise of sigma, rounded. Its size is frames x 512
// KiB.
func Camera(frames int, sigma float64, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 45))
	b := make([]byte, 0, frames*Side*Side*2)
	for f := 0; f < frames; f++ {
		for y := 0; y < Side; y++ {
			for x := 0; x < Side; x++ {
				dx, dy := float64(x-Side/2), float64(y-Side/2)
				base := 100 + float64(x+y+f)/4 + 3000*math.Exp(-(dx*dx+dy*dy)/(2*120*120))
				v := int16(math.Round(base + sigma*r.NormFloat64()))
				b = binary.LittleEndian.AppendUint16(b, uint16(v))
			}
		}
	}
	return b
}

// Float32 is n little-endian float32 of the values f draws.
func Float32(n int, seed uint64, f func(*rand.Rand) float64) []byte {
	r := rand.New(rand.NewPCG(seed, 46))
	b := make([]byte, 0, 4*n)
	for range n {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(f(r))))
	}
	return b
}

// Ramp is n little-endian float32: 0, 0.25, 0.5, ...
func Ramp(n int) []byte {
	b := make([]byte, 0, 4*n)
	for i := range n {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(i)*0.25))
	}
	return b
}
