package ndarray

import (
	"encoding/binary"
	"math"
)

// convertFast converts n elements of src (dtype from) into dst (dtype to)
// for the pairs met most (little-endian integers and f4 and f8, to and
// from each other) with a loop per pair of kinds instead of the general
// element codec, giving the same bits: integers wrap, floats truncate
// toward zero (floatToInt), an integer rounds once to a float. It reports false, having
// written nothing, for any other pair.
func convertFast(dst, src []byte, from, to DType, n int) bool {
	if !fastKind(from) || !fastKind(to) {
		return false
	}
	fs, ts := from.ItemSize, to.ItemSize
	switch {
	case from.Kind == 'f' && to.Kind == 'f':
		for i := 0; i < n; i++ {
			putFloatLE(dst[i*ts:], ts, loadFloatLE(src[i*fs:], fs))
		}
	case from.Kind == 'f':
		signed := to.Kind == 'i'
		for i := 0; i < n; i++ {
			bits, _ := floatToInt(loadFloatLE(src[i*fs:], fs), ts, signed)
			putBitsLE(dst[i*ts:], ts, bits)
		}
	case to.Kind == 'f':
		signed := from.Kind == 'i'
		for i := 0; i < n; i++ {
			bits := loadBitsLE(src[i*fs:], fs)
			var f float64
			switch {
			case signed && ts == 4:
				f = float64(float32(signExtend(bits, fs)))
			case signed:
				f = float64(signExtend(bits, fs))
			case ts == 4:
				f = float64(float32(bits))
			default:
				f = float64(bits)
			}
			putFloatLE(dst[i*ts:], ts, f)
		}
	default: // integer to integer: sign-extend, then keep the low bytes
		signed := from.Kind == 'i'
		if !signed && fs <= ts {
			for i := 0; i < n; i++ {
				putBitsLE(dst[i*ts:], ts, loadBitsLE(src[i*fs:], fs))
			}
			return true
		}
		for i := 0; i < n; i++ {
			bits := loadBitsLE(src[i*fs:], fs)
			if signed {
				bits = uint64(signExtend(bits, fs))
			}
			putBitsLE(dst[i*ts:], ts, bits)
		}
	}
	return true
}

// fastKind reports whether convertFast takes dt: a little-endian (or
// one-byte) integer, f4 or f8.
func fastKind(dt DType) bool {
	if !dt.IsPlain() || dt.ItemSize > 1 && dt.Order != '<' {
		return false
	}
	switch dt.Kind {
	case 'i', 'u':
		return true
	case 'f':
		return dt.ItemSize == 4 || dt.ItemSize == 8
	}
	return false
}

func loadBitsLE(b []byte, size int) uint64 {
	switch size {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func putBitsLE(b []byte, size int, v uint64) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

func signExtend(bits uint64, size int) int64 {
	shift := 64 - 8*size
	return int64(bits<<shift) >> shift
}

func loadFloatLE(b []byte, size int) float64 {
	if size == 4 {
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
	}
	return math.Float64frombits(binary.LittleEndian.Uint64(b))
}

func putFloatLE(b []byte, size int, f float64) {
	if size == 4 {
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(f)))
		return
	}
	binary.LittleEndian.PutUint64(b, math.Float64bits(f))
}
