package render

import (
	"encoding/binary"
	"math"

	"github.com/ndpack/ndpack/internal/float16"
)

// convertNative fills dst with the values of the elements in src, which are
// in the machine's byte order. The loops are per kind and size so that each
// element costs a load and a conversion, not a call.
func convertNative(dst []float64, src []byte, kind byte, size int) {
	ne := binary.NativeEndian
	switch kind {
	case 'b':
		for i := range dst {
			dst[i] = 0
			if src[i] != 0 {
				dst[i] = 1
			}
		}
	case 'i':
		switch size {
		case 1:
			for i := range dst {
				dst[i] = float64(int8(src[i]))
			}
		case 2:
			for i := range dst {
				dst[i] = float64(int16(ne.Uint16(src[2*i:])))
			}
		case 4:
			for i := range dst {
				dst[i] = float64(int32(ne.Uint32(src[4*i:])))
			}
		case 8:
			for i := range dst {
				dst[i] = float64(int64(ne.Uint64(src[8*i:])))
			}
		}
	case 'u':
		switch size {
		case 1:
			for i := range dst {
				dst[i] = float64(src[i])
			}
		case 2:
			for i := range dst {
				dst[i] = float64(ne.Uint16(src[2*i:]))
			}
		case 4:
			for i := range dst {
				dst[i] = float64(ne.Uint32(src[4*i:]))
			}
		case 8:
			for i := range dst {
				dst[i] = float64(ne.Uint64(src[8*i:]))
			}
		}
	case 'f':
		switch size {
		case 2:
			for i := range dst {
				dst[i] = float16.ToFloat64(ne.Uint16(src[2*i:]))
			}
		case 4:
			src = src[:4*len(dst)]
			for i := range dst {
				dst[i] = float64(math.Float32frombits(ne.Uint32(src[4*i:])))
			}
		case 8:
			for i := range dst {
				dst[i] = math.Float64frombits(ne.Uint64(src[8*i:]))
			}
		}
	case 'c':
		switch size {
		case 8:
			for i := range dst {
				re := math.Float32frombits(ne.Uint32(src[8*i:]))
				im := math.Float32frombits(ne.Uint32(src[8*i+4:]))
				dst[i] = math.Hypot(float64(re), float64(im))
			}
		case 16:
			for i := range dst {
				re := math.Float64frombits(ne.Uint64(src[16*i:]))
				im := math.Float64frombits(ne.Uint64(src[16*i+8:]))
				dst[i] = math.Hypot(re, im)
			}
		}
	}
}
