// Package float16 converts between IEEE 754 binary16 (numpy's float16)
// and float64, for ndarray's casts, render's scaling and the CLI's
// printing, which must agree bit for bit.
package float16

import "math"

// ToFloat64 converts the bits of an IEEE 754 binary16 (numpy's
// float16) to the float64 of the same value, exactly.
func ToFloat64(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 { // NaN: keep the sign and payload, as NumPy does
			return math.Float64frombits(uint64(h&0x8000)<<48 | 0x7ff<<52 | uint64(h&0x3ff)<<42)
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+frac, exp-25)
}

// FromFloat64 rounds f to IEEE 754 binary16 bits, to nearest even, as
// numpy's astype(float16) does.
func FromFloat64(f float64) uint16 {
	bits := math.Float64bits(f)
	sign := uint16(bits>>48) & 0x8000
	if math.IsNaN(f) { // keep the payload's top bits, and a NaN a NaN
		payload := uint16(bits>>42) & 0x3ff
		if payload == 0 {
			payload = 0x200
		}
		return sign | 0x7c00 | payload
	}
	f = math.Abs(f)
	switch {
	case f >= 65520: // rounds past the largest half, 65504
		return sign | 0x7c00
	case f < math.Ldexp(1, -14): // subnormal: a multiple of 2^-24
		return sign | uint16(math.RoundToEven(math.Ldexp(f, 24)))
	}
	frac, exp := math.Frexp(f)                  // f = frac * 2^exp, frac in [0.5, 1)
	m := math.RoundToEven(math.Ldexp(frac, 11)) // 11 significant bits
	if m == 2048 {
		m, exp = 1024, exp+1
	}
	return sign | uint16(exp+14)<<10 | uint16(m)&0x3ff
}
