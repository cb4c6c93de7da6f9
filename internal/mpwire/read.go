package mpwire

import (
	"encoding/binary"
	"math"
)

// A set of types, as bits, for the readers that accept more than one.
const (
	strSet   = 1 << StrType
	binSet   = 1 << BinType
	mapSet   = 1 << MapType
	arraySet = 1 << ArrayType
	extSet   = 1 << ExtType
	intSet   = 1<<IntType | 1<<UintType
	floatSet = 1<<Float32Type | 1<<Float64Type
	nilSet   = 1 << NilType
	boolSet  = 1 << BoolType
)

// head checks that b starts with a value of a type in accept and returns
// what its type byte says.
func head(b []byte, accept uint16, want string) (Head, error) {
	if len(b) == 0 {
		return Head{}, &Error{Err: ErrTruncated, Want: want, Need: 1}
	}
	h := HeadOf(b[0])
	if accept&(1<<h.Type) == 0 {
		return h, &Error{Err: ErrType, Want: want, Byte: b[0]}
	}
	return h, nil
}

// length returns the length or count of the value whose head h starts b,
// and the size of its header, once the header is known to be whole. The
// length is not yet checked against what follows.
func length(b []byte, h Head, want string) (n uint64, size int, err error) {
	size = h.Size()
	if len(b) < size {
		return 0, 0, &Error{Err: ErrTruncated, Want: want, Byte: b[0], Need: uint64(size), Remain: len(b)}
	}
	switch h.LenSize {
	case 0:
		return uint64(h.Len), size, nil
	case 1:
		return uint64(b[1]), size, nil
	case 2:
		return uint64(binary.BigEndian.Uint16(b[1:])), size, nil
	}
	return uint64(binary.BigEndian.Uint32(b[1:])), size, nil
}

// sized reads the header of a str, bin, ext, array or map and checks that
// the n items it claims, each at least unit bytes, fit in what remains.
//
// The count of a fixarray or fixmap, at most 15, is left to the reader of
// the items: it cannot size anything large, and the codecs have always
// reported such a shortfall, or a wrong item before it, where the items
// are read.
func sized(b []byte, accept uint16, unit uint64, want string) (n, size int, err error) {
	h, err := head(b, accept, want)
	if err != nil {
		return 0, 0, err
	}
	l, size, err := length(b, h, want)
	if err != nil {
		return 0, 0, err
	}
	if h.LenSize == 0 && (h.Type == ArrayType || h.Type == MapType) {
		return int(l), size, nil
	}
	if l > uint64(len(b)-size)/unit {
		return 0, 0, &Error{Err: ErrTruncated, Offset: size, Want: want, Byte: b[0], Need: l, Claim: true, Remain: len(b) - size}
	}
	return int(l), size, nil
}

// ReadMapHeaderBytes reads a map header and returns its number of entries
// and the bytes after the header, where the entries start. Each entry takes
// at least two bytes, so a count over 15 is checked to be at most half of
// what remains.
func ReadMapHeaderBytes(b []byte) (n int, rest []byte, err error) {
	n, size, err := sized(b, mapSet, 2, "map")
	if err != nil {
		return 0, b, err
	}
	return n, b[size:], nil
}

// ReadArrayHeaderBytes reads an array header and returns its number of
// items and the bytes where they start. A count over 15 is checked to be at
// most the bytes that remain.
func ReadArrayHeaderBytes(b []byte) (n int, rest []byte, err error) {
	n, size, err := sized(b, arraySet, 1, "array")
	if err != nil {
		return 0, b, err
	}
	return n, b[size:], nil
}

// zc reads a str or bin (as accept says) and returns its bytes as a slice
// of b whose capacity ends with them.
func zc(b []byte, accept uint16, want string) (v, rest []byte, err error) {
	n, size, err := sized(b, accept, 1, want)
	if err != nil {
		return nil, b, err
	}
	end := size + n
	return b[size:end:end], b[end:], nil
}

// ReadStringZC reads a str and returns its bytes without a copy: v is a
// slice of b, whose capacity ends where the string does, so appending to it
// cannot overwrite what follows. Comparing string(v) with a constant, or
// indexing a map with it, allocates nothing.
func ReadStringZC(b []byte) (v, rest []byte, err error) { return zc(b, strSet, "str") }

// ReadBytesZC reads a bin and returns its bytes without a copy, as
// ReadStringZC does.
func ReadBytesZC(b []byte) (v, rest []byte, err error) { return zc(b, binSet, "bin") }

// ReadStringOrBinZC reads a str or a bin, which senders use alike for
// bytes (older packers write bytes as str), without a copy, as
// ReadStringZC does.
func ReadStringOrBinZC(b []byte) (v, rest []byte, err error) {
	return zc(b, strSet|binSet, "str or bin")
}

// ReadExtHeaderBytes reads an ext header and returns its type code, the
// length of its payload, which is known to fit in rest, and rest, which
// starts with the payload.
func ReadExtHeaderBytes(b []byte) (typ int8, n int, rest []byte, err error) {
	n, size, err := sized(b, extSet, 1, "ext")
	if err != nil {
		return 0, 0, b, err
	}
	return int8(b[size-1]), n, b[size:], nil
}

// ReadExtHeaderUnchecked reads only an ext header, for a stream whose
// payload has not been read yet: n is whatever the header claims, up to
// MaxLen, and the caller must bound it before sizing anything from it.
func ReadExtHeaderUnchecked(b []byte) (typ int8, n uint32, rest []byte, err error) {
	h, err := head(b, extSet, "ext")
	if err != nil {
		return 0, 0, b, err
	}
	l, size, err := length(b, h, "ext")
	if err != nil {
		return 0, 0, b, err
	}
	return int8(b[size-1]), uint32(l), b[size:], nil
}

// number reads a fixed-size value of a type in accept and returns its
// head and its bytes after the type byte as a big-endian integer (for a
// fixint, the type byte itself).
func number(b []byte, accept uint16, want string) (h Head, v uint64, rest []byte, err error) {
	if h, err = head(b, accept, want); err != nil {
		return h, 0, b, err
	}
	end := 1 + h.Len
	if len(b) < end {
		return h, 0, b, &Error{Err: ErrTruncated, Want: want, Byte: b[0], Need: uint64(end), Remain: len(b)}
	}
	switch h.Len {
	case 0:
		v = uint64(b[0])
	case 1:
		v = uint64(b[1])
	case 2:
		v = uint64(binary.BigEndian.Uint16(b[1:]))
	case 4:
		v = uint64(binary.BigEndian.Uint32(b[1:]))
	default:
		v = binary.BigEndian.Uint64(b[1:])
	}
	return h, v, b[end:], nil
}

// signed returns the value of an IntType whose bytes number read as v.
func signed(h Head, v uint64) int64 {
	if h.Len == 0 {
		return int64(int8(v)) // a fixint: negative ones start 0xe0
	}
	shift := 64 - 8*h.Len
	return int64(v<<shift) >> shift
}

// ReadIntBytes reads an integer of any encoding and width. A uint64 over
// 2^63-1 fails with ErrRange.
func ReadIntBytes(b []byte) (v int64, rest []byte, err error) {
	h, u, rest, err := number(b, intSet, "int64")
	if err != nil {
		return 0, b, err
	}
	if h.Type == UintType {
		if u > math.MaxInt64 {
			return 0, b, &Error{Err: ErrRange, Want: "int64", Byte: b[0]}
		}
		return int64(u), rest, nil
	}
	return signed(h, u), rest, nil
}

// ReadUintBytes reads a non-negative integer of any encoding and width. A
// negative one fails with ErrRange.
func ReadUintBytes(b []byte) (v uint64, rest []byte, err error) {
	h, u, rest, err := number(b, intSet, "uint64")
	if err != nil {
		return 0, b, err
	}
	if h.Type == IntType {
		i := signed(h, u)
		if i < 0 {
			return 0, b, &Error{Err: ErrRange, Want: "uint64", Byte: b[0]}
		}
		return uint64(i), rest, nil
	}
	return u, rest, nil
}

// ReadFloat64Bytes reads a float 64 or a float 32 (widened exactly).
func ReadFloat64Bytes(b []byte) (v float64, rest []byte, err error) {
	h, u, rest, err := number(b, floatSet, "float")
	if err != nil {
		return 0, b, err
	}
	if h.Type == Float32Type {
		return float64(math.Float32frombits(uint32(u))), rest, nil
	}
	return math.Float64frombits(u), rest, nil
}

// ReadBoolBytes reads a bool.
func ReadBoolBytes(b []byte) (v bool, rest []byte, err error) {
	if _, err := head(b, boolSet, "bool"); err != nil {
		return false, b, err
	}
	return b[0] == 0xc3, b[1:], nil
}

// ReadNilBytes reads a nil.
func ReadNilBytes(b []byte) (rest []byte, err error) {
	if _, err := head(b, nilSet, "nil"); err != nil {
		return b, err
	}
	return b[1:], nil
}
