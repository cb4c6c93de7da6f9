package mpwire

import "math"

// The appenders write the smallest form that holds the value, which is what
// msgpack-python 1.0 writes: the peers' bytes and ours must be identical.
// Lengths and counts must be between 0 and MaxLen: msgpack cannot frame
// more, and callers check their sizes before they write.

// AppendMapHeader appends the header of a map of n entries.
func AppendMapHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(dst, 0xde, byte(n>>8), byte(n))
	}
	return append(dst, 0xdf, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// MapHeaderSize returns the length of AppendMapHeader's header for n.
func MapHeaderSize(n int) int { return countHeaderSize(n) }

// AppendArrayHeader appends the header of an array of n items.
func AppendArrayHeader(dst []byte, n int) []byte {
	switch {
	case n < 16:
		return append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(dst, 0xdc, byte(n>>8), byte(n))
	}
	return append(dst, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// ArrayHeaderSize returns the length of AppendArrayHeader's header for n.
func ArrayHeaderSize(n int) int { return countHeaderSize(n) }

func countHeaderSize(n int) int {
	switch {
	case n < 16:
		return 1
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

// AppendStringHeader appends the header of a str of n bytes.
func AppendStringHeader(dst []byte, n int) []byte {
	switch {
	case n < 32:
		return append(dst, 0xa0|byte(n))
	case n <= math.MaxUint8:
		return append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		return append(dst, 0xda, byte(n>>8), byte(n))
	}
	return append(dst, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// StringHeaderSize returns the length of AppendStringHeader's header for n.
func StringHeaderSize(n int) int {
	if n < 32 {
		return 1
	}
	return BinHeaderSize(n)
}

// AppendString appends s as a str.
func AppendString(dst []byte, s string) []byte {
	return append(AppendStringHeader(dst, len(s)), s...)
}

// AppendStringFromBytes appends s as a str (not a bin).
func AppendStringFromBytes(dst, s []byte) []byte {
	return append(AppendStringHeader(dst, len(s)), s...)
}

// AppendBinHeader appends the header of a bin of n bytes.
func AppendBinHeader(dst []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(dst, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return append(dst, 0xc5, byte(n>>8), byte(n))
	}
	return append(dst, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// BinHeaderSize returns the length of AppendBinHeader's header for n.
func BinHeaderSize(n int) int {
	switch {
	case n <= math.MaxUint8:
		return 2
	case n <= math.MaxUint16:
		return 3
	}
	return 5
}

// AppendBytes appends b as a bin.
func AppendBytes(dst, b []byte) []byte {
	return append(AppendBinHeader(dst, len(b)), b...)
}

// AppendExtHeader appends the header of an ext of type typ with an n-byte
// payload: a fixext for 1, 2, 4, 8 and 16 bytes, as msgpack-python does.
func AppendExtHeader(dst []byte, typ int8, n int) []byte {
	switch {
	case n == 1:
		return append(dst, 0xd4, byte(typ))
	case n == 2:
		return append(dst, 0xd5, byte(typ))
	case n == 4:
		return append(dst, 0xd6, byte(typ))
	case n == 8:
		return append(dst, 0xd7, byte(typ))
	case n == 16:
		return append(dst, 0xd8, byte(typ))
	case n <= math.MaxUint8:
		return append(dst, 0xc7, byte(n), byte(typ))
	case n <= math.MaxUint16:
		return append(dst, 0xc8, byte(n>>8), byte(n), byte(typ))
	}
	return append(dst, 0xc9, byte(n>>24), byte(n>>16), byte(n>>8), byte(n), byte(typ))
}

// ExtHeaderSize returns the length of AppendExtHeader's header for n.
func ExtHeaderSize(n int) int {
	switch {
	case n == 1 || n == 2 || n == 4 || n == 8 || n == 16:
		return 2
	case n <= math.MaxUint8:
		return 3
	case n <= math.MaxUint16:
		return 4
	}
	return 6
}

// AppendUint appends v as a positive fixint or the narrowest uint.
func AppendUint(dst []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(dst, byte(v))
	case v <= math.MaxUint8:
		return append(dst, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return append(dst, 0xcd, byte(v>>8), byte(v))
	case v <= math.MaxUint32:
		return append(dst, 0xce, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(dst, 0xcf, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// UintSize returns the length of AppendUint's encoding of v.
func UintSize(v uint64) int {
	switch {
	case v < 128:
		return 1
	case v <= math.MaxUint8:
		return 2
	case v <= math.MaxUint16:
		return 3
	case v <= math.MaxUint32:
		return 5
	}
	return 9
}

// AppendInt appends v: a non-negative v as AppendUint does (msgpack-python
// writes every non-negative int unsigned), a negative one as a negative
// fixint or the narrowest int.
func AppendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0:
		return AppendUint(dst, uint64(v))
	case v >= -32:
		return append(dst, byte(v))
	case v >= math.MinInt8:
		return append(dst, 0xd0, byte(v))
	case v >= math.MinInt16:
		return append(dst, 0xd1, byte(v>>8), byte(v))
	case v >= math.MinInt32:
		return append(dst, 0xd2, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return append(dst, 0xd3, byte(v>>56), byte(v>>48), byte(v>>40), byte(v>>32),
		byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

// IntSize returns the length of AppendInt's encoding of v.
func IntSize(v int64) int {
	switch {
	case v >= 0:
		return UintSize(uint64(v))
	case v >= -32:
		return 1
	case v >= math.MinInt8:
		return 2
	case v >= math.MinInt16:
		return 3
	case v >= math.MinInt32:
		return 5
	}
	return 9
}

// AppendNil appends nil.
func AppendNil(dst []byte) []byte { return append(dst, 0xc0) }

// AppendBool appends v.
func AppendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 0xc3)
	}
	return append(dst, 0xc2)
}

// AppendFloat64 appends v as a float 64, as msgpack-python writes every
// Python float.
func AppendFloat64(dst []byte, v float64) []byte {
	u := math.Float64bits(v)
	return append(dst, 0xcb, byte(u>>56), byte(u>>48), byte(u>>40), byte(u>>32),
		byte(u>>24), byte(u>>16), byte(u>>8), byte(u))
}
