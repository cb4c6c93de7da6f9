package ndarray

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseDType returns the dtype numpy 1.24's np.dtype(s) makes of the
// string s, for every s numpy accepts whose dtype ndpack holds:
//
//   - typestrs and type codes with or without a byte order: "<f8", ">i2",
//     "|b1", "f4", "i", "?", "S10", "a5", "U3", "V8", "M8[ns]", "m8";
//   - numpy's type names: "float32", "int16", "uint8", "bool", "bool_",
//     "complex64", "str", "bytes", "unicode", "void", "datetime64[ms]",
//     "timedelta64"; the platform's C types as numpy names them on 64-bit
//     Linux and macOS ("int", "int_", "long", "longlong", "intp" are int64,
//     "intc" int32, "uint" and "ulong" uint64);
//   - comma lists, which make records with fields f0, f1, ...: "f4,i2",
//     "i4,(2,3)f8"; and subarrays: "(3,)f4", "3f4", "(2, 2)<i2";
//   - numpy's Python forms, written as Python literals (or JSON): the list
//     "[('x', '<f4'), ('pos', '<f4', (3,))]", the tuple "('<f4', (2, 2))",
//     the dict "{'names': ['a', 'b'], 'formats': ['<f4', '<i2'],
//     'offsets': [0, 4], 'titles': [None, 'A'], 'itemsize': 8}" and
//     numpy's {'a': ('<f4', 0), ...} field dict.
//
// What has no byte order takes the machine's, as in numpy ("=" is
// NativeOrder()). A subarray spec such as "(3,)f4" gives a subarray dtype
// (see NewSubarray), which an array's dtype never is: numpy folds its
// shape into the array's (np.zeros(2, "(3,)f4") has shape (2, 3)).
//
// It fails with an error matching ErrDType that quotes s and says what
// numpy makes of it: a string numpy refuses ("float65", "i3", " f4"), and
// what numpy accepts but ndpack does not hold: the object dtype ("O",
// "object"), the long doubles named by the C type ("longdouble", "g",
// "float128", "complex256", "G"), whose size depends on the platform (the
// typestrs "<f16" and "<c32" say their size and are held as bytes), an
// aligned struct ({'aligned': True}), metadata, titles that are not
// non-empty strings, a union of a number and fields ("('i4', [('r', 'u1'),
// ...])"), and sizes numpy wraps around or that exceed ndpack's bounds.
//
// Every typestr that ParseTypestr reads, ParseDType reads the same way.
func ParseDType(s string) (DType, error) {
	var dt DType
	var err error
	if s != "" && strings.IndexByte("[({", s[0]) >= 0 {
		v, lerr := parseLiteral(s)
		switch {
		case lerr == errUnicodeName || lerr == errSurrogate:
			return finishSpec(s, dt, notHeld("%v", lerr))
		case lerr == nil && (v.kind == pyList || v.kind == pyTuple || v.kind == pyDict):
			dt, err = convAny(v, 0)
			return finishSpec(s, dt, err)
		}
	}
	dt, err = convStr(s, 0)
	return finishSpec(s, dt, err)
}

func finishSpec(s string, dt DType, err error) (DType, error) {
	if err == nil {
		err = detail(dt.Validate())
	}
	if err != nil {
		class := ErrDType
		var se *specError
		if errors.As(err, &se) && se.object || errors.Is(err, ErrObject) {
			class = ErrObject
		}
		return DType{}, &Error{Pkg: "ndarray", Err: class, Offset: -1, Detail: quoteSpec(s) + ": " + err.Error()}
	}
	return dt, nil
}

// detail turns an *Error of the package (from NewRecord, NewSubarray,
// ParseTypestr) into a specError of its detail, to be quoted in a spec's
// message without a second "ndarray: invalid dtype:".
func detail(err error) error {
	var e *Error
	if errors.As(err, &e) && e.Pkg == "ndarray" && e.Cause == nil {
		return refused("%s", e.Detail)
	}
	return err
}

// quoteSpec quotes s for a message, cut to its first 64 bytes.
func quoteSpec(s string) string {
	if len(s) <= 64 {
		return strconv.Quote(s)
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// specError is why a spec is refused; hold marks what numpy accepts but
// ndpack does not hold (as opposed to what numpy refuses too).
type specError struct {
	msg    string
	hold   bool
	object bool // numpy's object dtype: the error's class is ErrObject
}

// objectRefused is the error for numpy's object dtype.
func objectRefused() error { return &specError{msg: objectWhy, hold: true, object: true} }

func (e *specError) Error() string { return e.msg }

// refused is an error for a spec numpy refuses too.
func refused(format string, args ...any) error {
	return &specError{msg: fmt.Sprintf(format, args...)}
}

// notHeld is an error for a spec numpy accepts but ndpack does not hold.
func notHeld(format string, args ...any) error {
	return &specError{msg: fmt.Sprintf(format, args...), hold: true}
}

func isNotHeld(err error) bool {
	var e *specError
	return errors.As(err, &e) && e.hold
}

// maxSpecDepth bounds the recursion of a spec's conversion; NewRecord and
// NewSubarray bound the dtype it makes more tightly.
const maxSpecDepth = 4 * MaxRecordDepth

const (
	longDoubleWhy = "numpy's long double, whose size depends on the platform (16 bytes on 64-bit Linux, 8 on Windows and Apple silicon); a typestr says the size: \"<f16\" (or \"<c32\" for its complex)"
	objectWhy     = "numpy's object dtype, references to Python objects (pickles in a file), which ndpack does not hold"
)

// typeCodes are numpy's one-character type codes, as typestrs with '='
// for the machine's byte order, or the reason ndpack refuses them.
var typeCodes = map[byte]string{
	'?': "|b1", 'b': "|i1", 'B': "|u1", 'h': "=i2", 'H': "=u2", 'i': "=i4", 'I': "=u4",
	'l': "=i8", 'L': "=u8", 'q': "=i8", 'Q': "=u8", 'p': "=i8", 'P': "=u8",
	'e': "=f2", 'f': "=f4", 'd': "=f8", 'F': "=c8", 'D': "=c16",
	'S': "|S0", 'a': "|S0", 'U': "=U0", 'V': "|V0", 'c': "|S1", 'M': "=M8", 'm': "=m8",
	'g': "!" + longDoubleWhy, 'G': "!" + longDoubleWhy, 'O': "!" + objectWhy,
}

// typeNames are the names in numpy's np.sctypeDict, as typeCodes.
var typeNames = map[string]string{
	"bool": "|b1", "bool_": "|b1", "bool8": "|b1",
	"byte": "|i1", "int8": "|i1", "ubyte": "|u1", "uint8": "|u1",
	"short": "=i2", "int16": "=i2", "ushort": "=u2", "uint16": "=u2",
	"intc": "=i4", "int32": "=i4", "uintc": "=u4", "uint32": "=u4",
	"int": "=i8", "int_": "=i8", "int0": "=i8", "intp": "=i8", "long": "=i8", "longlong": "=i8", "int64": "=i8",
	"uint": "=u8", "uint0": "=u8", "uintp": "=u8", "ulong": "=u8", "ulonglong": "=u8", "uint64": "=u8",
	"half": "=f2", "float16": "=f2", "single": "=f4", "float32": "=f4",
	"double": "=f8", "float": "=f8", "float_": "=f8", "float64": "=f8",
	"csingle": "=c8", "singlecomplex": "=c8", "complex64": "=c8",
	"cdouble": "=c16", "cfloat": "=c16", "complex": "=c16", "complex_": "=c16", "complex128": "=c16",
	"bytes": "|S0", "bytes_": "|S0", "bytes0": "|S0", "string_": "|S0",
	"str": "=U0", "str_": "=U0", "str0": "=U0", "unicode": "=U0", "unicode_": "=U0",
	"void": "|V0", "void0": "|V0",
	"longdouble": "!" + longDoubleWhy, "longfloat": "!" + longDoubleWhy, "float128": "!" + longDoubleWhy,
	"clongdouble": "!" + longDoubleWhy, "clongfloat": "!" + longDoubleWhy, "longcomplex": "!" + longDoubleWhy, "complex256": "!" + longDoubleWhy,
	"object": "!" + objectWhy, "object_": "!" + objectWhy, "object0": "!" + objectWhy,
}

// controlTypes are what numpy makes of a control character, which it reads
// as a type number.
var controlTypes = [...]string{"bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
	"int64", "uint64", "float32", "float64", "longdouble", "complex64", "complex128", "clongdouble", "object",
	"bytes", "str", "void", "datetime64", "timedelta64", "float16"}

// typeFromTable returns the dtype a typeCodes or typeNames entry gives.
func typeFromTable(entry string) (DType, error) {
	if why, ok := strings.CutPrefix(entry, "!"); ok {
		if why == objectWhy {
			return DType{}, objectRefused()
		}
		return DType{}, notHeld("%s", why)
	}
	dt, err := ParseTypestr(entry)
	return dt, detail(err)
}

// convStr is numpy's _convert_from_str: np.dtype of a string.
func convStr(s string, depth int) (DType, error) {
	if depth > maxSpecDepth {
		return DType{}, notHeld("nested more deeply than ndpack follows")
	}
	if isCommaString(s) {
		return convCommaString(s, depth+1)
	}
	endian, t := byte('='), s
	if len(t) > 1 && isOrderChar(t[0]) {
		endian, t = t[0], t[1:]
		if endian == '|' {
			endian = '='
		}
	}
	if endian == nativeOrder {
		endian = '='
	}
	if isDatetimeTypestr(t) {
		dt, err := parseDatetimeSpec(t)
		if err == nil && endian != '=' {
			dt.Order = endian
		}
		return dt, err
	}
	dt, found, err := convTypeCode(t)
	if err != nil {
		return DType{}, err
	}
	if !found {
		entry, ok := typeNames[s]
		if !ok {
			return DType{}, refused("not a dtype numpy knows (np.dtype raises \"data type %s not understood\")", pyReprShort(s))
		}
		return typeFromTable(entry)
	}
	if endian != '=' && dt.Order != '|' {
		dt.Order = endian
	}
	return dt, nil
}

func isOrderChar(c byte) bool { return c == '<' || c == '>' || c == '|' || c == '=' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// convTypeCode reads a one-character type code or a kind and size ("f8",
// "S10", "U3"); found is false when t is neither, for the names to decide.
func convTypeCode(t string) (DType, bool, error) {
	if t == "" {
		return DType{}, false, nil
	}
	if len(t) == 1 {
		c := t[0]
		if int(c) < len(controlTypes) || c == 0x1a {
			what := "bytes1"
			if c != 0x1a {
				what = controlTypes[c]
			}
			return DType{}, false, notHeld("numpy reads the control character %q as its type number %d (%s); ndpack takes dtypes by name, code or typestr", rune(c), c, what)
		}
		entry, ok := typeCodes[c]
		if !ok {
			return DType{}, false, nil
		}
		dt, err := typeFromTable(entry)
		return dt, true, err
	}
	n, ok := cStrtol(t[1:])
	if !ok {
		return DType{}, false, nil
	}
	kind, size := t[0], int32(n) // numpy keeps the low 32 bits
	switch kind {
	case 'S', 'a', 'V', 'U':
		switch {
		case n < 0:
			return DType{}, false, notHeld("numpy makes a broken dtype of the negative size %d", n)
		case int64(size) != n || kind == 'U' && n > math.MaxInt32/4:
			return DType{}, false, notHeld("numpy keeps the low 32 bits of the size %d (of its bytes for U), which wraps around", n)
		case n >= maxItemSize/4:
			return DType{}, false, notHeld("an item size of %d, more than the %d ndpack holds", n, maxItemSize/4-1)
		}
		if kind == 'a' {
			kind = 'S'
		}
		dt := DType{Order: '|', Kind: kind, ItemSize: int(n)}
		if kind == 'U' {
			dt.Order, dt.ItemSize = nativeOrder, 4*int(n)
		}
		return dt, true, nil
	}
	if size == 0 {
		return DType{}, false, nil
	}
	if kind == 'O' && (size == 4 || size == 8) {
		return DType{}, false, objectRefused()
	}
	if sizes, known := validSizes[kind]; !known || kind == 'M' || kind == 'm' || !containsInt(sizes, int(size)) {
		return DType{}, false, nil
	}
	if int64(size) != n {
		return DType{}, false, notHeld("numpy keeps the low 32 bits of the size %d, %d, and ndpack refuses a size it wraps around", n, size)
	}
	dt := DType{Order: nativeOrder, Kind: kind, ItemSize: int(size)}
	return dt.canonicalOrder(), true, nil
}

// cStrtol reads s whole as C's strtol does: leading white space, a sign,
// decimal digits. ok is false when s is not all that, or the number
// overflows a 64-bit long.
func cStrtol(s string) (int64, bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	j := i
	if j < len(s) && (s[j] == '+' || s[j] == '-') {
		j++
	}
	k := j
	for k < len(s) && isDigit(s[k]) {
		k++
	}
	if k == j || k != len(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(s[i:], 10, 64)
	return n, err == nil
}

// isCommaString is numpy's _check_for_commastring: a comma outside square
// brackets, a leading digit, or a leading "()".
func isCommaString(s string) bool {
	switch {
	case s == "":
		return false
	case isDigit(s[0]) || len(s) > 1 && isOrderChar(s[0]) && isDigit(s[1]):
		return true
	case strings.HasPrefix(s, "()") || len(s) > 3 && isOrderChar(s[0]) && s[1:3] == "()":
		return true
	}
	square := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',':
			if square == 0 {
				return true
			}
		case '[':
			square++
		case ']':
			square--
		}
	}
	return false
}

// convCommaString is numpy's _convert_from_commastring over
// numpy.core._internal._commastring: items of an optional byte order, an
// optional repeat count or shape and a dtype, separated by commas.
func convCommaString(s string, depth int) (DType, error) {
	var items []pyValue
	for pos := 0; pos < len(s); {
		item, end, err := commaItem(s, pos, len(items)+1)
		if err != nil {
			return DType{}, err
		}
		items = append(items, item)
		pos = end
		if pos < len(s) {
			rest := strings.TrimLeftFunc(s[pos:], pyIsSpace)
			if rest == "" {
				break
			}
			if rest[0] != ',' {
				return DType{}, refused("numpy cannot read item %d of the comma list (\"format number %d ... is not recognized\")", len(items), len(items))
			}
			pos = len(s) - len(strings.TrimLeftFunc(rest[1:], pyIsSpace))
		}
	}
	if len(items) == 1 {
		return convAny(items[0], depth)
	}
	if last := items[len(items)-1]; last.kind == pyStr && last.s == "" {
		items = items[:len(items)-1]
	}
	fields := make([]Field, 0, len(items))
	off := 0
	for i, it := range items {
		dt, err := convAny(it, depth)
		if err != nil {
			return DType{}, fmt.Errorf("field f%d: %w", i, err)
		}
		fields = append(fields, Field{Name: "f" + strconv.Itoa(i), DType: dt, Offset: off})
		if off += dt.ItemSize; off >= maxItemSize/4 {
			return DType{}, notHeld("records of more than %d bytes", maxItemSize/4-1)
		}
	}
	dt, err := NewRecord(fields, off)
	return dt, detail(err)
}

// commaItem reads one item of a comma list at pos, as numpy's format_re
// matches it: order, repeats, order, dtype.
func commaItem(s string, pos, number int) (pyValue, int, error) {
	take := func(ok func(byte) bool) string {
		start := pos
		for pos < len(s) && ok(s[pos]) {
			pos++
		}
		return s[start:pos]
	}
	one := func(c byte) string {
		if pos < len(s) && s[pos] == c {
			pos++
			return s[pos-1 : pos]
		}
		return ""
	}
	order1 := ""
	if pos < len(s) && isOrderChar(s[pos]) {
		order1, pos = s[pos:pos+1], pos+1
	}
	start := pos
	take(func(c byte) bool { return c == ' ' })
	one('(')
	take(func(c byte) bool { return c == ' ' || c == ',' || isDigit(c) })
	one(')')
	take(func(c byte) bool { return c == ' ' })
	repeats := s[start:pos]
	order2 := ""
	if pos < len(s) && isOrderChar(s[pos]) {
		order2, pos = s[pos:pos+1], pos+1
	}
	name := take(func(c byte) bool { return isIdentByte(c) && c != '_' || c == '.' || c == '?' })
	if pos < len(s) && s[pos] == '[' {
		end := pos + 1
		for end < len(s) && (isAlnum(s[end]) || s[end] == ',' || s[end] == '.') {
			end++
		}
		if end > pos+1 && end < len(s) && s[end] == ']' {
			name += s[pos : end+1]
			pos = end + 1
		}
	}
	order := order1
	switch {
	case order1 == "":
		order = order2
	case order2 != "":
		nbo := func(o string) string {
			if o == "=" {
				return string(rune(nativeOrder))
			}
			return o
		}
		if nbo(order1) != nbo(order2) {
			return pyValue{}, 0, refused("item %d has two byte orders, %s and %s", number, order1, order2)
		}
	}
	if order == "|" || order == "=" || order == string(rune(nativeOrder)) {
		order = ""
	}
	item := pyValue{kind: pyStr, s: order + name}
	if repeats == "" {
		return item, pos, nil
	}
	shape, err := evalRepeats(repeats)
	if err != nil {
		return pyValue{}, 0, refused("item %d: the count or shape %q is not a Python int or tuple of ints", number, repeats)
	}
	return pyValue{kind: pyTuple, items: []pyValue{item, shape}}, pos, nil
}

// evalRepeats is ast.literal_eval of the repeat count or shape of a comma
// list's item: spaces, "(", digits, spaces and commas, ")".
func evalRepeats(r string) (pyValue, error) {
	r = strings.Trim(r, " ")
	paren := strings.HasPrefix(r, "(")
	if paren != strings.HasSuffix(r, ")") || r == "" || r == "(" {
		return pyValue{}, errNotLiteral
	}
	if paren {
		r = r[1 : len(r)-1]
		if strings.Trim(r, " ") == "" {
			return pyValue{kind: pyTuple}, nil
		}
	}
	parts := strings.Split(r, ",")
	var items []pyValue
	for i, p := range parts {
		p = strings.Trim(p, " ")
		if p == "" && i == len(parts)-1 && i > 0 {
			break
		}
		digits, _, ok := pyIntDigits(p)
		if !ok || strings.ContainsAny(p, "_xXoObB") {
			return pyValue{}, errNotLiteral
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		items = append(items, pyValue{kind: pyInt, i: n, big: err != nil})
	}
	if len(parts) == 1 {
		return items[0], nil
	}
	return pyValue{kind: pyTuple, items: items}, nil
}

// pyIsSpace is Python's str.isspace for one character.
func pyIsSpace(r rune) bool {
	return r >= 0x1c && r <= 0x1f || r == ' ' || r >= '\t' && r <= '\r' || r > 0x7f && (r == 0x85 || r == 0xa0 || r == 0x1680 ||
		r >= 0x2000 && r <= 0x200a || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000)
}

// pyReprShort is Python's repr of s, cut for messages.
func pyReprShort(s string) string {
	if len(s) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return string(appendPyRepr(nil, s[:cut])) + "..."
	}
	return string(appendPyRepr(nil, s))
}

// Datetime units in numpy's order, coarsest first, with the factor to
// the next finer one (numpy's _datetime_factors; the gap of the removed
// business day is left out).
var (
	dateUnits   = []string{"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"}
	unitFactors = []uint64{1, 1, 7, 24, 60, 60, 1000, 1000, 1000, 1000, 1000, 1000, 1}
)

func isDatetimeTypestr(s string) bool {
	return len(s) >= 2 && s[1] == '8' && (s[0] == 'M' || s[0] == 'm') ||
		strings.HasPrefix(s, "datetime64") || strings.HasPrefix(s, "timedelta64")
}

// parseDatetimeSpec is numpy's parse_dtype_from_datetime_typestr: "M8",
// "m8[10s]", "datetime64[ns]", "timedelta64[ms/2]", in the machine's order.
func parseDatetimeSpec(s string) (DType, error) {
	dt := DType{Order: nativeOrder, Kind: 'M', ItemSize: 8}
	meta := ""
	switch {
	case s[1] == '8':
		dt.Kind, meta = s[0], s[2:]
	case strings.HasPrefix(s, "datetime64"):
		meta = s[len("datetime64"):]
	default:
		dt.Kind, meta = 'm', s[len("timedelta64"):]
	}
	if meta == "" {
		return dt, nil
	}
	if len(meta) < 3 || meta[0] != '[' || meta[len(meta)-1] != ']' {
		return DType{}, refused("numpy cannot read the datetime unit %s (\"Invalid datetime metadata string\")", pyReprShort(meta))
	}
	num, base, err := parseUnitSpec(meta[1 : len(meta)-1])
	if err != nil {
		return DType{}, err
	}
	if base < 0 {
		return dt, nil // generic, whatever its count
	}
	dt.Unit = dateUnits[base]
	if num != 1 {
		dt.Unit = strconv.FormatInt(num, 10) + dt.Unit
	}
	return dt, nil
}

// parseUnitSpec is numpy's parse_datetime_extended_unit_from_string: a
// count, a unit, and a divisor: "10ms", "s/1000". base is an index of
// dateUnits, or -1 for generic.
func parseUnitSpec(u string) (num int64, base int, err error) {
	bad := func() (int64, int, error) {
		return 0, 0, refused("numpy cannot read the datetime unit [%s] (\"Invalid datetime metadata string\")", u)
	}
	pos := 0
	num = 1
	if end := strtolPrefix(u); end > 0 {
		n, perr := strconv.ParseInt(strings.TrimLeft(u[:end], " \t\n\v\f\r"), 10, 64)
		if perr != nil || n < 0 || n > math.MaxInt32 {
			return bad()
		}
		num, pos = n, end
	}
	unitEnd := pos
	for unitEnd < len(u) && u[unitEnd] != '/' {
		unitEnd++
	}
	unit := u[pos:unitEnd]
	base = -1
	switch {
	case unit == "μs":
		base = 8
	case unit == "generic":
	default:
		base = indexString(dateUnits, unit)
		if base < 0 {
			return 0, 0, refused("numpy knows no datetime unit %q (Y, M, W, D, h, m, s, ms, us, ns, ps, fs, as or generic)", unit)
		}
	}
	if unitEnd < len(u) {
		end := strtolPrefix(u[unitEnd+1:])
		if end == 0 || unitEnd+1+end != len(u) {
			return bad()
		}
		den, perr := strconv.ParseInt(strings.TrimLeft(u[unitEnd+1:], " \t\n\v\f\r"), 10, 64)
		if perr != nil || den > math.MaxInt32 || den < math.MinInt32 {
			return bad()
		}
		if den != 1 {
			if num, base, err = divideUnit(num, base, den); err != nil {
				return 0, 0, err
			}
		}
	}
	if num == 0 && base >= 0 {
		return 0, 0, notHeld("a datetime unit of 0 %s, which counts nothing", dateUnits[base])
	}
	return num, base, nil
}

// strtolPrefix returns the length of the longest prefix of s that C's
// strtol reads as a number (white space, sign, digits), 0 if none.
func strtolPrefix(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j == i {
		return 0
	}
	return j
}

func indexString(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}

// divideUnit is numpy's convert_datetime_divisor_to_multiple: [s/1000]
// is [ms], [ms/2] is [500us].
func divideUnit(num int64, base int, den int64) (int64, int, error) {
	switch {
	case base < 0:
		return 0, 0, refused("numpy cannot divide generic units (\"Can't use 'den' divisor with generic units\")")
	case den <= 0:
		return 0, 0, notHeld("a divisor of %d, of which numpy makes a negative unit or crashes", den)
	}
	// The sizes of the next finer units, in this unit, and those units.
	tries := map[int][][2]int64{
		0: {{12, 1}, {52, 2}, {365, 3}}, 1: {{4, 2}, {30, 3}, {720, 4}}, 2: {{7, 3}, {168, 4}, {10080, 5}},
		3: {{24, 4}, {1440, 5}, {86400, 6}}, 4: {{60, 5}, {3600, 6}}, 5: {{60, 6}, {60000, 7}},
	}[base]
	if base >= 6 {
		for k := int64(1); k <= 2 && base+int(k) < len(dateUnits); k++ {
			tries = append(tries, [2]int64{int64(math.Pow10(3 * int(k))), int64(base) + k})
		}
	}
	for _, t := range tries {
		if t[0]%den == 0 {
			num *= t[0] / den
			if num > math.MaxInt32 {
				return 0, 0, notHeld("a datetime unit whose count numpy overflows")
			}
			return num, int(t[1]), nil
		}
	}
	return 0, 0, refused("numpy refuses the divisor %d: it is not a multiple of a finer unit", den)
}
