// Package mpwire is the module's one reading and writing of msgpack framing:
// the type bytes, lengths and counts that frame strings, byte strings,
// arrays, maps, extension values and numbers. The codecs (ext110, dialect),
// the walker (mpwalk), yaqrpc's envelope and the command line build on it
// instead of each decoding markers by hand.
//
// Writers are appenders, AppendX(dst, v) []byte, that write the smallest
// form msgpack-python 1.0 writes (use_bin_type=True), so that encodings are
// byte-identical with the Python peers; the XSize functions give their exact
// lengths for callers that size a buffer once.
//
// Readers are ReadXBytes(b) (v, rest, err): they read the value at the start
// of b and return what follows it. They never allocate on success, never
// copy (the ZC readers return slices of b), and check every length and count
// the input claims against the bytes that remain before returning it, so a
// caller may size memory from a count it was given. Their errors are *Error,
// carrying the offset in b and matching ErrTruncated, ErrType or ErrRange
// under errors.Is. (The one count not checked is that of a fixarray or a
// fixmap, at most 15, which cannot size anything large: the items' reader
// meets the shortfall.)
package mpwire

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// MaxLen is the largest length or count msgpack can frame (32 bits).
const MaxLen = 1<<32 - 1

// Type is the kind of msgpack value a type byte starts.
type Type uint8

// The msgpack types. Positive fixints are IntType, as are the signed
// encodings; UintType is the unsigned encodings uint 8 to uint 64.
const (
	InvalidType Type = iota // 0xc1, which msgpack never uses, or no byte at all
	NilType
	BoolType
	IntType
	UintType
	Float32Type
	Float64Type
	StrType
	BinType
	ArrayType
	MapType
	ExtType
)

var typeNames = [...]string{"invalid", "nil", "bool", "int", "uint", "float32", "float64", "str", "bin", "array", "map", "ext"}

// String returns the type's name as the msgpack specification writes it:
// "str", "bin", "array", "map", "ext", "int", ...
func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// Head is what a value's type byte says about how the value is framed.
type Head struct {
	Type Type
	// LenSize is the size of the big-endian length (str, bin, ext) or
	// count (array, map entries) that follows the type byte: 1, 2 or 4;
	// 0 when the type byte itself says it.
	LenSize int
	// Len is, when LenSize is 0, the length, count or payload size that
	// the type byte implies: a fixstr's length, a fixarray's items, a
	// fixmap's entries, a fixext's payload, the bytes of a number after
	// its type byte (0 for a fixint, nil or bool).
	Len int
}

// HeadOf returns what the type byte c says about the value it starts.
func HeadOf(c byte) Head { return heads[c] }

// heads holds HeadOf for every type byte: walkers look up every value's
// type byte, and an index costs less than the switch. It is filled once,
// here, and only read.
var heads = func() (t [256]Head) {
	for c := range t {
		t[c] = headOf(byte(c))
	}
	return t
}()

func headOf(c byte) Head {
	switch {
	case c <= 0x7f || c >= 0xe0:
		return Head{Type: IntType}
	case c <= 0x8f:
		return Head{Type: MapType, Len: int(c & 0x0f)}
	case c <= 0x9f:
		return Head{Type: ArrayType, Len: int(c & 0x0f)}
	case c <= 0xbf:
		return Head{Type: StrType, Len: int(c & 0x1f)}
	}
	switch c {
	case 0xc0:
		return Head{Type: NilType}
	case 0xc2, 0xc3:
		return Head{Type: BoolType}
	case 0xc4, 0xc5, 0xc6:
		return Head{Type: BinType, LenSize: 1 << (c - 0xc4)}
	case 0xc7, 0xc8, 0xc9:
		return Head{Type: ExtType, LenSize: 1 << (c - 0xc7)}
	case 0xca:
		return Head{Type: Float32Type, Len: 4}
	case 0xcb:
		return Head{Type: Float64Type, Len: 8}
	case 0xcc, 0xcd, 0xce, 0xcf:
		return Head{Type: UintType, Len: 1 << (c - 0xcc)}
	case 0xd0, 0xd1, 0xd2, 0xd3:
		return Head{Type: IntType, Len: 1 << (c - 0xd0)}
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return Head{Type: ExtType, Len: 1 << (c - 0xd4)}
	case 0xd9, 0xda, 0xdb:
		return Head{Type: StrType, LenSize: 1 << (c - 0xd9)}
	case 0xdc, 0xdd:
		return Head{Type: ArrayType, LenSize: 2 << (c - 0xdc)}
	case 0xde, 0xdf:
		return Head{Type: MapType, LenSize: 2 << (c - 0xde)}
	}
	return Head{} // 0xc1
}

// Size returns the length of the value's header: the type byte, the length
// field and, for an ext, its type code. What follows is the payload (str,
// bin, ext, a number's bytes) or the items (array, map).
func (h Head) Size() int {
	if h.Type == ExtType {
		return 2 + h.LenSize
	}
	return 1 + h.LenSize
}

// NextType returns the type of the value at the start of b, InvalidType for
// an empty b.
func NextType(b []byte) Type {
	if len(b) == 0 {
		return InvalidType
	}
	return HeadOf(b[0]).Type
}

// The classes of the readers' errors, for errors.Is.
var (
	// ErrTruncated: the input ends inside a value's header, or a length or
	// count claims more than the bytes that remain can hold.
	ErrTruncated = codecerr.ErrTruncated
	// ErrType: the value is not of the type the reader reads.
	ErrType = errors.New("wrong type")
	// ErrRange: an integer that does not fit the type read (a negative
	// one for a uint64, one over 2^63-1 for an int64).
	ErrRange = errors.New("integer out of range")
)

// Error is a reader's failure. Offsets count from the start of the slice
// given to the reader: a caller that reads from the middle of its input
// adds where that slice starts.
type Error struct {
	Err error // the class: ErrTruncated, ErrType or ErrRange
	// Offset is where the failure is: the value's type byte, or, for a
	// length or count that claims too much (Claim), the first byte after
	// the value's header.
	Offset int
	Want   string // what the reader reads: "map", "str or bin", "uint64", ...
	Byte   byte   // the type byte found; 0 when the input was empty
	// Need is, for ErrTruncated, the bytes the header needs (1 when the
	// input was empty), or, when Claim is set, the length (str, bin, ext)
	// or count (array items, map entries) that the header claims.
	Need   uint64
	Claim  bool
	Remain int // ErrTruncated: the bytes from Offset to the end of the input
}

// Error formats the failure as "mpwire: CLASS at byte N: DETAIL".
func (e *Error) Error() string {
	return codecerr.Format("mpwire", e.Err, int64(e.Offset), e.detail(), nil)
}

func (e *Error) detail() string {
	found := HeadOf(e.Byte).Type
	switch {
	case e.Err == ErrType:
		return fmt.Sprintf("want %s, found type byte 0x%02x (%s)", e.Want, e.Byte, found)
	case e.Err == ErrRange && found == UintType:
		return fmt.Sprintf("want %s, found a uint64 over 2^63-1 (type byte 0x%02x)", e.Want, e.Byte)
	case e.Err == ErrRange:
		return fmt.Sprintf("want %s, found a negative integer (type byte 0x%02x)", e.Want, e.Byte)
	case e.Claim && found == MapType:
		return fmt.Sprintf("map claims %s, only %s", codecerr.Count(e.Need, "entry"), codecerr.Remain(e.Remain, "byte"))
	case e.Claim && found == ArrayType:
		return fmt.Sprintf("array claims %s, only %s", codecerr.Count(e.Need, "item"), codecerr.Remain(e.Remain, "byte"))
	case e.Claim:
		return fmt.Sprintf("%s claims %s, only %s", found, codecerr.Count(e.Need, "byte"), codecerr.Remain(e.Remain, ""))
	case e.Remain == 0:
		return fmt.Sprintf("want %s, the input is empty", e.Want)
	}
	return fmt.Sprintf("%s header needs %s, %s", found, codecerr.Count(e.Need, "byte"), codecerr.Remain(e.Remain, ""))
}

// Unwrap returns the class, so that errors.Is matches it.
func (e *Error) Unwrap() error { return e.Err }

// Describe words a reader's failure err (an *Error) the way the codecs word
// them in their own errors, which quote the value they were reading: value
// names it ("typestr", "payload"), length its length or count field ("map"
// for the payload's), want the types it may be ("str or bin", "a map"). It
// returns the offset the words are about, counted as the Error's are, and
// whether the input was cut short (ErrTruncated) rather than of the wrong
// type or range.
func Describe(err error, value, length, want string) (offset int, detail string, truncated bool) {
	e, ok := err.(*Error)
	switch {
	case !ok:
		return 0, err.Error(), false
	case e.Err == ErrType:
		return e.Offset, fmt.Sprintf("%s is msgpack type byte 0x%02x, not %s", value, e.Byte, want), false
	case e.Err == ErrRange:
		return e.Offset, fmt.Sprintf("%s is out of range for %s", value, e.Want), false
	case e.Claim && HeadOf(e.Byte).LenSize == 0:
		// A fixstr: its length is in the type byte, and its bytes are short.
		return e.Offset, fmt.Sprintf("%s needs %s, %s", value, codecerr.Count(e.Need, "byte"), codecerr.Remain(e.Remain, "")), true
	case e.Claim:
		return e.Offset, fmt.Sprintf("%s claims %d, only %s", length, e.Need, codecerr.Remain(e.Remain, "byte")), true
	case e.Remain == 0:
		return e.Offset, fmt.Sprintf("%s needs 1 byte, 0 remain", value), true
	}
	// The type byte is there; what follows it is short.
	return e.Offset + 1, fmt.Sprintf("%s needs %s, %s", length, codecerr.Count(e.Need-1, "byte"), codecerr.Remain(e.Remain-1, "")), true
}
