package npybridge

import (
	"fmt"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
)

// A header's descr is whatever numpy's np.dtype accepts, and files from
// other writers use many spellings: "S6", "6S" and "|a6" for "|S6", ">i"
// for ">i4", "float64", "|i8". parseDescr reads every spelling np.load
// accepts for the kinds ndarray holds and returns the canonical dtype, the
// one np.save would write (dtype.str). The rules are numpy 1.24's:
//
//   - A byte order of '|' or '=', or none, on an item whose byte order
//     matters means the reading machine's own order, as numpy takes it;
//     '<' and '>' are kept. Items whose order does not matter (one byte, S,
//     V) always get '|'.
//   - A one-letter type code stands for its C type: b i1, h i2, i i4, l and
//     q i8, e f2, f f4, d f8, g f16, F c8, D c16, G c32, ? b1, c S1, and the
//     unsigned capitals. A kind with a size (i4, f8, c16, b1) is that size.
//   - S, a, U and V take their size after the letter or before it ("6S"); no
//     size is 0. A count before any other code makes a sub-array ("2i"),
//     which np.load cannot read either, except a count of 1 ("1i").
//   - Type names (float64, int, longlong, str, void, ...) are accepted
//     without a byte order, except datetime64 and timedelta64, which take
//     one and a [unit]. Names whose size depends on the platform (int,
//     long, intp, longdouble) take the sizes of 64-bit Linux and macOS.
//
// Object arrays are pickles, never read: the caller refuses them first
// (isObjectDescr).
func parseDescr(s string) (ndarray.DType, error) {
	order, rest := byte('='), s
	if rest != "" && strings.IndexByte("<>=|", rest[0]) >= 0 {
		order, rest = rest[0], rest[1:]
	}
	if order == '|' {
		order = '='
	}
	unknown := func() (ndarray.DType, error) {
		return ndarray.DType{}, &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrDType, Detail: fmt.Sprintf("descr %q is not a dtype numpy reads", s)}
	}
	var typestr string
	var ok bool
	name, _, _ := strings.Cut(rest, "[")
	switch t, isName := descrNames[rest]; {
	case name == "datetime64":
		typestr, ok = "M8"+strings.TrimPrefix(rest, name), true
	case name == "timedelta64":
		typestr, ok = "m8"+strings.TrimPrefix(rest, name), true
	case isName:
		typestr, ok = t, len(s) == len(rest) // names take no byte order
	default:
		typestr, ok = descrCode(rest)
	}
	if !ok {
		return unknown()
	}
	dt, err := ndarray.ParseTypestr(string(order) + typestr)
	if err != nil {
		return unknown()
	}
	return dt, nil
}

// descrCode reads a type code with its sizes, such as "i", "f8", "6S",
// "M8[ns]", and returns it as kind and size without a byte order.
func descrCode(s string) (string, bool) {
	lead := 0
	for lead < len(s) && s[lead] >= '0' && s[lead] <= '9' {
		lead++
	}
	if lead == len(s) {
		return "", false
	}
	leading, code, trail := s[:lead], s[lead], s[lead+1:]
	switch code {
	case 'S', 'a', 'U', 'V':
		size := trail
		switch {
		case trail != "" && leading != "":
			return "", false // "2S4" is a sub-array in numpy, not a string
		case trail == "" && leading != "":
			size = leading
		case trail == "":
			size = "0"
		}
		if code == 'a' {
			code = 'S'
		}
		if !allDigits(size) {
			return "", false
		}
		return string(code) + size, true
	case 'M', 'm':
		// "M", "M8", "M8[ns]": the item is always 8 bytes, and a unit
		// needs the 8.
		if (leading != "" && leading != "1") || (trail != "" && trail[0] != '8') {
			return "", false
		}
		unit := strings.TrimPrefix(trail, "8")
		if unit != "" && unit[0] != '[' {
			return "", false
		}
		return string(code) + "8" + unit, true
	}
	if leading != "" && leading != "1" {
		return "", false // "2i" is a sub-array: np.load cannot shape it
	}
	if trail == "" {
		t, ok := descrChars[code]
		return t, ok
	}
	// A kind with its size: i1..i8, u1..u8, f2..f16, c8..c32, b1.
	if leading != "" || strings.IndexByte("iufcb", code) < 0 || !allDigits(trail) {
		return "", false
	}
	if code == 'b' && trail != "1" {
		return "", false
	}
	return string(code) + trail, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// isObjectDescr reports the spellings of numpy's object dtype, whose data
// is a pickle: "O", "|O8", "2O" (a sub-array of objects), "object".
func isObjectDescr(s string) bool {
	switch s {
	case "object", "object_", "object0":
		return true
	}
	if s != "" && strings.IndexByte("<>=|", s[0]) >= 0 {
		s = s[1:]
	}
	s = strings.TrimLeft(s, "0123456789")
	return s == "O" || s == "O4" || s == "O8"
}

// descrChars are numpy's one-letter type codes, as kind and size.
var descrChars = map[byte]string{
	'?': "b1", 'b': "i1", 'B': "u1", 'h': "i2", 'H': "u2", 'i': "i4", 'I': "u4",
	'l': "i8", 'L': "u8", 'q': "i8", 'Q': "u8", 'p': "i8", 'P': "u8",
	'e': "f2", 'f': "f4", 'd': "f8", 'g': "f16", 'F': "c8", 'D': "c16", 'G': "c32",
	'c': "S1",
}

// descrNames are numpy's type names, as kind and size.
var descrNames = map[string]string{
	"bool": "b1", "bool_": "b1", "bool8": "b1",
	"int8": "i1", "byte": "i1", "int16": "i2", "short": "i2", "int32": "i4", "intc": "i4",
	"int64": "i8", "int": "i8", "int_": "i8", "int0": "i8", "intp": "i8", "long": "i8", "longlong": "i8",
	"uint8": "u1", "ubyte": "u1", "uint16": "u2", "ushort": "u2", "uint32": "u4", "uintc": "u4",
	"uint64": "u8", "uint": "u8", "uint0": "u8", "uintp": "u8", "ulong": "u8", "ulonglong": "u8",
	"float16": "f2", "half": "f2", "float32": "f4", "single": "f4",
	"float64": "f8", "float": "f8", "float_": "f8", "double": "f8",
	"float128": "f16", "longdouble": "f16", "longfloat": "f16",
	"complex64": "c8", "csingle": "c8", "singlecomplex": "c8",
	"complex128": "c16", "complex": "c16", "complex_": "c16", "cdouble": "c16", "cfloat": "c16",
	"complex256": "c32", "clongdouble": "c32", "clongfloat": "c32", "longcomplex": "c32",
	"str": "U0", "str_": "U0", "unicode": "U0", "unicode_": "U0",
	"bytes": "S0", "bytes_": "S0", "string_": "S0", "void": "V0", "void0": "V0",
}
