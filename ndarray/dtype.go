package ndarray

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// nativeOrder is computed once from the machine's memory layout; it is a
// constant of the running program, not mutable state.
var nativeOrder = func() byte {
	x := uint16(1)
	if *(*byte)(unsafe.Pointer(&x)) == 1 {
		return '<'
	}
	return '>'
}()

// NativeOrder returns the byte order of the machine the program runs on,
// '<' or '>'.
func NativeOrder() byte { return nativeOrder }

// DType is an element type: byte order, kind and item size in bytes, plus the
// unit of a datetime or timedelta. The zero DType is invalid. DTypes are
// comparable with == and cheap to copy.
//
// Order is numpy's byte order character (dtype.byteorder): '<' little- and
// '>' big-endian, '|' where order does not apply (one-byte items, S and V).
// "=" (native) is accepted by ParseDType and resolved to NativeOrder(); it
// is never stored.
//
// Kind is numpy's kind character, compared as numpy code compares
// dtype.kind: 'b' bool, 'i' signed and 'u' unsigned integer, 'f' float
// and 'c' complex (YEP-110's standard kinds), and the NumPy extensions
// that the YEP leaves out and ndpack keeps as opaque bytes: 'S'
// fixed-length byte strings, 'U' fixed-length UCS-4 strings (ItemSize
// counts 4 bytes per character), 'V' raw fixed-size records, 'M' and 'm'
// 8-byte datetime64 and timedelta64 with a Unit.
//
// A record (structured) dtype, made by NewRecord or RecordFromDescr, is
// Order '|', Kind Void and the record's ItemSize plus its fields, held in
// an immutable layout shared by every DType with the same fields: == still
// compares whole dtypes, fields included. A plain "|V12" from ParseDType
// has no fields and is a different dtype from any 12-byte record.
type DType struct {
	Order    byte   // numpy's byte order character, see below
	Kind     byte   // numpy's kind character (dtype.kind), see below
	ItemSize int    // bytes per element (a U item of n characters is 4n bytes)
	Unit     string // "ns", "10s", ... for Datetime and Timedelta; "" is generic

	layout *layout // the fields of a record, or a subarray's base and shape; nil if plain
}

// validSizes lists the item sizes NumPy gives each fixed-size kind. f16 and
// c32 (long double) are accepted and kept as opaque bytes: Go has no type for
// them.
var validSizes = map[byte][]int{
	'b': {1},
	'i': {1, 2, 4, 8},
	'u': {1, 2, 4, 8},
	'f': {2, 4, 8, 16},
	'c': {8, 16, 32},
	'M': {8},
	'm': {8},
}

var timeUnits = map[string]bool{
	"Y": true, "M": true, "W": true, "D": true, "h": true, "m": true, "s": true,
	"ms": true, "us": true, "ns": true, "ps": true, "fs": true, "as": true,
}

// maxItemSize bounds the size field so that items and U character counts
// never overflow; NumPy's own limit is lower.
const maxItemSize = 1 << 31

// ParseTypestr parses a NumPy array-interface typestr such as "<f8",
// "|b1", ">c16", "|S10", "<U5" or "<M8[ns]": the form String writes and
// the formats carry (YEP-110's typestr, an .npy header's descr of a plain
// dtype). Codecs read their input's typestrs with it; a dtype a user
// names, as numpy's np.dtype takes it ("float32", "f4,i2"), is
// ParseDType's.
//
// The byte order is required. "=" resolves to the machine's order. For
// items whose order does not matter (one-byte numbers, S and V) any order
// character is accepted and stored as "|", as NumPy does; for the others "|"
// is refused, since it would leave the byte order to a guess.
//
// It fails with an error matching ErrDType, quoting s and saying what is
// wrong, for any string that is not such a typestr; numpy's object typestr
// ("|O", "O", "|O8") matches ErrObject too.
func ParseTypestr(s string) (DType, error) {
	bad := func(why string) (DType, error) {
		return DType{}, newError(ErrDType, fmt.Sprintf("typestr %q: %s", s, why))
	}
	if k := strings.TrimLeft(s, "<>|="); len(s)-len(k) <= 1 && strings.HasPrefix(k, "O") {
		// "|O", "O", "|O8": numpy's object dtype.
		return DType{}, newError(ErrObject, fmt.Sprintf("typestr %q is numpy's object dtype, references to Python objects (a pickle in a file)", s))
	}
	if len(s) < 3 {
		return bad("too short: want byte order, kind and size, like \"<f8\"")
	}
	order := byte(s[0])
	switch order {
	case '<', '>', '|':
	case '=':
		order = nativeOrder
	default:
		return bad(fmt.Sprintf("byte order %q is not one of '<', '>', '|', '='", s[0]))
	}
	dt := DType{Order: order, Kind: s[1]}
	size := s[2:]
	if dt.Kind == 'M' || dt.Kind == 'm' {
		if i := strings.IndexByte(size, '['); i >= 0 {
			if !strings.HasSuffix(size, "]") {
				return bad("unit is not closed by ']'")
			}
			dt.Unit = size[i+1 : len(size)-1]
			size = size[:i]
			if u, ok := strings.CutPrefix(dt.Unit, "1"); ok && u != "" && !isDigit(u[0]) {
				dt.Unit = u // numpy's [1s] is [s]
			}
			if !validUnit(dt.Unit) {
				return bad(fmt.Sprintf("unknown time unit %q", dt.Unit))
			}
		}
	}
	n, err := parseSize(size)
	if err != nil {
		return bad(err.Error())
	}
	if n == 0 && dt.Kind != 'S' && dt.Kind != 'U' && dt.Kind != 'V' {
		// S0, U0 and V0 are NumPy's items of no bytes
		// (np.zeros(3, 'V') saves as |V0); other kinds have sizes.
		return bad("item size must be at least 1")
	}
	switch dt.Kind {
	case 'S', 'V':
		dt.ItemSize = n
	case 'U':
		dt.ItemSize = 4 * n
	default:
		sizes, ok := validSizes[dt.Kind]
		if !ok {
			return bad(fmt.Sprintf("unknown kind %q", s[1]))
		}
		if !containsInt(sizes, n) {
			return bad(fmt.Sprintf("kind %q has no %d-byte size (valid: %v)", s[1], n, sizes))
		}
		dt.ItemSize = n
	}
	dt = dt.canonicalOrder()
	if dt.Order == '|' && !dt.orderFree() {
		return bad("byte order '|' is ambiguous for a multi-byte item; use '<' or '>'")
	}
	return dt, nil
}

// MustParseDType is ParseDType for dtypes known to be valid, such as
// constants in a program ("<f8", "uint8", "f4,i2"); it panics on error.
func MustParseDType(s string) DType {
	dt, err := ParseDType(s)
	if err != nil {
		panic(err)
	}
	return dt
}

func parseSize(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("missing item size")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("item size %q is not a decimal number", s)
		}
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil || n >= maxItemSize/4 {
		return 0, fmt.Errorf("item size %q is too large", s)
	}
	return int(n), nil
}

// validUnit reports whether u is a unit as numpy's dtype.str writes it: a
// count from 2 to 2^31-1 (none for 1) and a base unit.
func validUnit(u string) bool {
	digits := 0
	for digits < len(u) && u[digits] >= '0' && u[digits] <= '9' {
		digits++
	}
	if digits > 0 {
		n, err := strconv.ParseInt(u[:digits], 10, 64)
		if err != nil || n > math.MaxInt32 || n < 2 || u[0] == '0' {
			return false
		}
	}
	return timeUnits[u[digits:]]
}

func containsInt(list []int, n int) bool {
	for _, v := range list {
		if v == n {
			return true
		}
	}
	return false
}

// orderFree reports whether the byte order of the dtype's items is
// irrelevant: one-byte numbers, byte strings and raw records.
func (dt DType) orderFree() bool {
	switch dt.Kind {
	case 'S', 'V':
		return true
	case 'b', 'i', 'u':
		return dt.ItemSize == 1
	}
	return false
}

// String returns the typestr, e.g. "<f8"; it is the inverse of
// ParseTypestr, and ParseDType reads every form it writes.
// A DType whose order or kind is not a typestr character, such as the zero
// DType of an unset field, prints as "<invalid dtype>".
//
// A record prints as numpy's str(dtype) does: the list form
// "[('x', '<f4'), ('y', '<i8')]" when its fields follow each other without
// gaps, otherwise the dict form "{'names': [...], 'formats': [...],
// 'offsets': [...], 'itemsize': n}"; a subarray dtype as "('<i4', (2,))".
func (dt DType) String() string {
	if dt.layout != nil {
		return string(dt.appendPyStr(nil))
	}
	if !printable(byte(dt.Order)) || !printable(byte(dt.Kind)) {
		return "<invalid dtype>"
	}
	var buf [24]byte
	b, _ := dt.AppendText(buf[:0])
	return string(b)
}

// AppendText appends the typestr to b (encoding.TextAppender). It never
// fails; encoders use it to write the typestr without allocating.
//
// The typestr of a record or subarray dtype is numpy's dtype.str, "|V"
// and the item size, which says nothing of the fields: an encoder must
// carry them some other way (Descr) or refuse the dtype (see IsPlain).
func (dt DType) AppendText(b []byte) ([]byte, error) {
	size := dt.ItemSize
	if dt.Kind == 'U' {
		size /= 4
	}
	b = append(b, byte(dt.Order), byte(dt.Kind))
	b = strconv.AppendInt(b, int64(size), 10)
	if dt.Unit != "" {
		b = append(append(append(b, '['), dt.Unit...), ']')
	}
	return b, nil
}

// MarshalText returns the typestr (encoding.TextMarshaler). A record or
// subarray dtype fails (ErrDType): its typestr would lose its fields (its
// String, numpy's str(dtype), keeps them, and ParseDType reads it).
func (dt DType) MarshalText() ([]byte, error) {
	if dt.layout != nil {
		return nil, newError(ErrDType, fmt.Sprintf("%s has no typestr that keeps its fields", dt))
	}
	return dt.AppendText(nil)
}

// UnmarshalText parses a dtype into dt as ParseDType does
// (encoding.TextUnmarshaler): a typestr, as MarshalText writes it, or any
// spec numpy's np.dtype takes, so that a DType can be a field of JSON or
// other text formats written by hand. It fails as ParseDType does, with
// ErrDType, and then leaves dt unchanged.
func (dt *DType) UnmarshalText(text []byte) error {
	parsed, err := ParseDType(string(text))
	if err != nil {
		return err
	}
	*dt = parsed
	return nil
}

// IsStandard reports whether the dtype is one of YEP-110's standard kinds
// (b, i, u, f, c). Encoders refuse other kinds unless the caller opts in.
func (dt DType) IsStandard() bool {
	switch dt.Kind {
	case 'b', 'i', 'u', 'f', 'c':
		return true
	}
	return false
}

// Validate reports whether dt is a dtype ParseDType could have returned, in
// canonical form. It lets codecs check a DType built by hand, and costs no
// allocation on success. The error matches ErrDType and says which part is
// wrong.
func (dt DType) Validate() error {
	if dt == (DType{}) {
		return newError(ErrDType, "the zero DType (an unset field?) is not a dtype")
	}
	if dt.layout != nil {
		return dt.validateLayout()
	}
	bad := func(why string) error {
		return newError(ErrDType, fmt.Sprintf("%s (order %q, kind %q, item size %d, unit %q): %s",
			dt, byte(dt.Order), byte(dt.Kind), dt.ItemSize, dt.Unit, why))
	}
	switch dt.Kind {
	case 'S', 'V':
		if dt.ItemSize < 0 || dt.ItemSize >= maxItemSize/4 {
			return bad("item size out of range")
		}
	case 'U':
		if dt.ItemSize < 0 || dt.ItemSize%4 != 0 || dt.ItemSize >= maxItemSize {
			return bad("a U item size must be a multiple of 4")
		}
	default:
		sizes, ok := validSizes[dt.Kind]
		if !ok {
			return bad("unknown kind")
		}
		if !containsInt(sizes, dt.ItemSize) {
			return bad(fmt.Sprintf("no such item size (valid: %v)", sizes))
		}
	}
	if dt.Unit != "" && ((dt.Kind != 'M' && dt.Kind != 'm') || !validUnit(dt.Unit)) {
		return bad("a unit is only valid, and must be a known one, for M and m")
	}
	switch {
	case dt.orderFree() && dt.Order != '|':
		return bad("the byte order of these items is irrelevant and must be '|'")
	case !dt.orderFree() && dt.Order != '<' && dt.Order != '>':
		return bad("byte order must be '<' or '>'")
	}
	return nil
}

// swapUnit is the width of the scalars that a change of byte order reverses:
// the item itself, each half of a complex number, each UCS-4 character, or 0
// when no bytes move.
func (dt DType) swapUnit() int {
	switch {
	case dt.Order == '|':
		return 0
	case dt.Kind == 'c':
		return dt.ItemSize / 2
	case dt.Kind == 'U':
		return 4
	}
	return dt.ItemSize
}

// canonicalOrder stores "|" as the order of items whose order is irrelevant.
func (dt DType) canonicalOrder() DType {
	if dt.orderFree() {
		dt.Order = '|'
	}
	return dt
}

// WithOrder returns dt with its byte order set to o, or dt itself when the
// order of its items does not matter. A record gets o in every field with
// a byte order, at every level, as numpy's newbyteorder(o) gives it.
func (dt DType) WithOrder(o byte) DType {
	if dt.layout != nil {
		return dt.withOrderComposite(o)
	}
	if !dt.orderFree() {
		dt.Order = o
	}
	return dt
}

func printable(c byte) bool { return c > ' ' && c < 0x7f }
