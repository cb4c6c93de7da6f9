package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ndpack/ndpack/internal/float16"
	"github.com/ndpack/ndpack/ndarray"
)

// printOptions are numpy's print options that show takes: precision (8),
// the element count past which an array is summarised (1000; --full: no
// summary), the items kept at each edge of a summarised axis (3), and the
// line width (75).
type printOptions struct {
	precision int
	threshold int
	edgeItems int
	lineWidth int
}

var numpyDefaults = printOptions{precision: 8, threshold: 1000, edgeItems: 3, lineWidth: 75}

// arrayString is a's text as numpy's str(a) gives it (np.array2string with
// its default options but those of o): elements aligned as numpy aligns
// them, floats in its 'maxprec' mode, records as tuples of their fields,
// long axes summarised with "...". A 0-d array is its one value as numpy
// prints the scalar.
func arrayString(a *ndarray.Array, o printOptions) string {
	size := a.DType.ItemSize
	item := func(i int) []byte { return a.Data[i*size : (i+1)*size] }
	if len(a.Shape) == 0 {
		return scalarString(a.DType, item(0), o)
	}
	if a.Len() == 0 {
		return "[]" // numpy prints every empty array so
	}
	summarise := a.Len() > o.threshold
	// The formatter is fitted to the items shown, as numpy fits it.
	shown := items{n: a.Len(), at: item}
	if summarise {
		idx := shownItems(a.Shape, summarise, o.edgeItems)
		shown = items{n: len(idx), at: func(i int) []byte { return item(idx[i]) }}
	}
	format := newItemFormat(a.DType, shown, o)
	p := printer{shape: a.Shape, format: func(i int) string { return format(item(i)) }, summarise: summarise, edge: o.edgeItems}
	strides := make([]int, len(a.Shape))
	n := 1
	for d := len(a.Shape) - 1; d >= 0; d-- {
		strides[d] = n
		n *= a.Shape[d]
	}
	p.strides = strides
	return p.recurse(0, 0, " ", o.lineWidth)
}

// shownItems lists the flat indexes a summary shows (every one without).
func shownItems(shape []int, summarise bool, edge int) []int {
	var out []int
	var walk func(d, base int)
	strides := make([]int, len(shape))
	n := 1
	for d := len(shape) - 1; d >= 0; d-- {
		strides[d] = n
		n *= shape[d]
	}
	walk = func(d, base int) {
		if d == len(shape) {
			out = append(out, base)
			return
		}
		for _, i := range axisItems(shape[d], summarise, edge) {
			walk(d+1, base+i*strides[d])
		}
	}
	walk(0, 0)
	return out
}

// axisItems are the indexes of an axis that are printed.
func axisItems(n int, summarise bool, edge int) []int {
	var out []int
	if summarise && 2*edge < n {
		for i := 0; i < edge; i++ {
			out = append(out, i)
		}
		for i := n - edge; i < n; i++ {
			out = append(out, i)
		}
		return out
	}
	for i := 0; i < n; i++ {
		out = append(out, i)
	}
	return out
}

// printer lays out nested brackets and wraps rows as numpy's _formatArray
// does (numpy 1.14 and later).
type printer struct {
	shape, strides []int
	format         func(flat int) string
	summarise      bool
	edge           int
}

func (p *printer) recurse(axis, base int, hanging string, width int) string {
	if axis == len(p.shape) {
		return p.format(base)
	}
	nextHanging := hanging + " "
	nextWidth := width - 1
	n := p.shape[axis]
	summary := p.summarise && 2*p.edge < n
	lead, trail := 0, n
	if summary {
		lead, trail = p.edge, p.edge
	}
	var s strings.Builder
	if axis == len(p.shape)-1 {
		elemWidth := width - 1 // the separator's and ']''s room
		line := hanging
		for i := 0; i < lead; i++ {
			line = extendLine(&s, line, p.recurse(axis+1, base+i*p.strides[axis], nextHanging, nextWidth), elemWidth, hanging) + " "
		}
		if summary {
			line = extendLine(&s, line, "...", elemWidth, hanging) + " "
		}
		for i := trail; i > 1; i-- {
			line = extendLine(&s, line, p.recurse(axis+1, base+(n-i)*p.strides[axis], nextHanging, nextWidth), elemWidth, hanging) + " "
		}
		if n > 0 {
			line = extendLine(&s, line, p.recurse(axis+1, base+(n-1)*p.strides[axis], nextHanging, nextWidth), elemWidth, hanging)
		}
		s.WriteString(line)
	} else {
		sep := strings.Repeat("\n", len(p.shape)-axis-1)
		for i := 0; i < lead; i++ {
			s.WriteString(hanging + p.recurse(axis+1, base+i*p.strides[axis], nextHanging, nextWidth) + sep)
		}
		if summary {
			s.WriteString(hanging + "..." + sep)
		}
		for i := trail; i > 1; i-- {
			s.WriteString(hanging + p.recurse(axis+1, base+(n-i)*p.strides[axis], nextHanging, nextWidth) + sep)
		}
		if n > 0 {
			s.WriteString(hanging + p.recurse(axis+1, base+(n-1)*p.strides[axis], nextHanging, nextWidth))
		}
	}
	out := s.String()
	if len(out) >= len(hanging) {
		out = out[len(hanging):]
	}
	return "[" + out + "]"
}

// extendLine adds word to line, first moving line into s and starting a
// new one when word would pass width (numpy's _extendLine).
func extendLine(s *strings.Builder, line, word string, width int, prefix string) string {
	// Python's len counts characters, not bytes.
	if utf8.RuneCountInString(line)+utf8.RuneCountInString(word) > width && len(line) > len(prefix) {
		s.WriteString(strings.TrimRight(line, " ") + "\n")
		line = prefix
	}
	return line + word
}

// items are the items a formatter is fitted to, read one at a time so
// that no list of them is made: a record's field over many rows, or each
// element of a large array, costs no memory of its own.
type items struct {
	n  int
	at func(i int) []byte
}

// one is a single item.
func one(b []byte) items { return items{n: 1, at: func(int) []byte { return b }} }

// newItemFormat returns numpy's formatter for items of dtype dt, fitted
// to the items shown (numpy's _get_format_function over the data it
// prints).
func newItemFormat(dt ndarray.DType, shown items, o printOptions) func([]byte) string {
	if dt.IsRecord() {
		return recordFormat(dt, shown, o)
	}
	switch dt.Kind {
	case 'b':
		return func(b []byte) string {
			if b[0] != 0 {
				return " True"
			}
			return "False"
		}
	case 'i', 'u':
		width := 0
		for i := range shown.n {
			width = max(width, len(formatItem(dt, shown.at(i)).text()))
		}
		return func(b []byte) string {
			s := formatItem(dt, b).text()
			return strings.Repeat(" ", width-len(s)) + s
		}
	case 'f':
		if dt.ItemSize > 8 {
			break
		}
		f := newFloatFormat(shown.n, func(i int) float64 { return floatOf(dt, shown.at(i)) }, bitsOf(dt), o.precision, false)
		return func(b []byte) string { return f.format(floatOf(dt, b)) }
	case 'c':
		if dt.ItemSize > 16 {
			break
		}
		half := dt.ItemSize / 2
		part := ndarray.DType{Order: dt.Order, Kind: 'f', ItemSize: half}
		fr := newFloatFormat(shown.n, func(i int) float64 { return floatOf(part, shown.at(i)[:half]) }, 8*half, o.precision, false)
		fi := newFloatFormat(shown.n, func(i int) float64 { return floatOf(part, shown.at(i)[half:]) }, 8*half, o.precision, true)
		return func(b []byte) string {
			r, i := fr.format(floatOf(part, b[:half])), fi.format(floatOf(part, b[half:]))
			sp := len(strings.TrimRight(i, " "))
			return r + i[:sp] + "j" + i[sp:]
		}
	case 'U', 'S':
		return func(b []byte) string { return pyRepr(dt, b) }
	case 'V':
		return voidRepr
	case 'M', 'm':
		f := timeFormat(dt.Kind, dt.Unit, shown.n, func(i int) int64 { return int64Of(dt, shown.at(i)) })
		return func(b []byte) string { return f(int64Of(dt, b)) }
	}
	return func(b []byte) string { return formatItem(dt, b).text() }
}

// int64Of reads one 8-byte item (a datetime64 or timedelta64).
func int64Of(dt ndarray.DType, b []byte) int64 {
	if dt.Order == '>' {
		return int64(binary.BigEndian.Uint64(b))
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// voidRepr is a plain void item as numpy prints it: b'\x01\xFF', every
// byte in hex.
func voidRepr(b []byte) string {
	var s strings.Builder
	s.WriteString("b'")
	for _, c := range b {
		fmt.Fprintf(&s, `\x%02X`, c)
	}
	s.WriteString("'")
	return s.String()
}

func bitsOf(dt ndarray.DType) int { return 8 * dt.ItemSize }

// floatOf reads one float item (2, 4 or 8 bytes) as a float64, exactly.
func floatOf(dt ndarray.DType, b []byte) float64 {
	var order binary.ByteOrder = binary.LittleEndian
	if dt.Order == '>' {
		order = binary.BigEndian
	}
	switch len(b) {
	case 2:
		return float16.ToFloat64(order.Uint16(b))
	case 4:
		return float64(math.Float32frombits(order.Uint32(b)))
	}
	return math.Float64frombits(order.Uint64(b))
}

// floatFormat is numpy's FloatingFormat in its default 'maxprec' mode.
type floatFormat struct {
	bits      int
	precision int
	exp       bool
	padLeft   int
	padRight  int
	expSize   int
	plus      bool // the sign is always shown (a complex number's imaginary part)
}

func newFloatFormat(n int, value func(int) float64, bits, precision int, plus bool) *floatFormat {
	f := &floatFormat{bits: bits, precision: precision, plus: plus, expSize: -1}
	finite := 0
	minNZ, maxNZ := math.Inf(1), 0.0
	for i := range n {
		v := value(i)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		finite++
		if a := math.Abs(v); a != 0 {
			minNZ, maxNZ = min(minNZ, a), max(maxNZ, a)
		}
	}
	if maxNZ > 0 && (maxNZ >= 1e8 || minNZ < 0.0001 || maxNZ/minNZ > 1000) {
		f.exp = true
	}
	switch {
	case finite == 0:
	case f.exp:
		frac := 0
		for i := range n {
			v := value(i)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			m, e, _ := strings.Cut(shortestSci(v, bits, precision, plus), "e")
			ip, fp, _ := strings.Cut(m, ".")
			frac = max(frac, len(fp))
			f.padLeft = max(f.padLeft, len(ip))
			f.expSize = max(f.expSize, len(e)-1)
		}
		f.precision = frac
		f.padRight = f.expSize + 2 + f.precision
	default:
		for i := range n {
			v := value(i)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			ip, fp, _ := strings.Cut(shortestPos(v, bits, precision, plus), ".")
			f.padLeft = max(f.padLeft, len(ip))
			f.padRight = max(f.padRight, len(fp))
		}
	}
	if finite != n {
		negInf := 0
		for i := range n {
			v := value(i)
			if math.IsInf(v, -1) || (plus && math.IsInf(v, 0)) {
				negInf = 1
			}
		}
		offset := f.padRight + 1
		f.padLeft = max(f.padLeft, 3-offset, 3+negInf-offset)
	}
	return f
}

func (f *floatFormat) format(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		s := "nan"
		if math.IsNaN(v) {
			if f.plus {
				s = "+nan"
			}
		} else {
			s = "inf"
			switch {
			case v < 0:
				s = "-inf"
			case f.plus:
				s = "+inf"
			}
		}
		return strings.Repeat(" ", max(0, f.padLeft+f.padRight+1-len(s))) + s
	}
	if f.exp {
		s := strconv.FormatFloat(v, 'e', f.precision, 64)
		if f.plus && !strings.HasPrefix(s, "-") {
			s = "+" + s
		}
		m, e, _ := strings.Cut(s, "e")
		if !strings.Contains(m, ".") {
			m += "."
		}
		sign, digits := e[:1], e[1:]
		digits = strings.Repeat("0", max(0, f.expSize-len(digits))) + digits
		ip, _, _ := strings.Cut(m, ".")
		return strings.Repeat(" ", max(0, f.padLeft-len(ip))) + m + "e" + sign + digits
	}
	s := shortestPos(v, f.bits, f.precision, f.plus)
	ip, fp, _ := strings.Cut(s, ".")
	return strings.Repeat(" ", max(0, f.padLeft-len(ip))) + s + strings.Repeat(" ", max(0, f.padRight-len(fp)))
}

// shortestPos is Dragon4's positional form with unique digits, cut off
// at precision fractional digits (rounding the exact value), trailing
// zeros trimmed down to the point: 1.5 -> "1.5", 2 -> "2.", 1/3 ->
// "0.33333333".
func shortestPos(v float64, bits, precision int, plus bool) string {
	s := shortestDigits(v, bits, 'f')
	if _, fp, _ := strings.Cut(s, "."); len(fp) > precision {
		s = strings.TrimRight(strconv.FormatFloat(v, 'f', precision, 64), "0")
	}
	if !strings.Contains(s, ".") {
		s += "."
	}
	if plus && !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// shortestSci is the scientific form likewise: 1500 -> "1.5e+03".
func shortestSci(v float64, bits, precision int, plus bool) string {
	s := shortestDigits(v, bits, 'e')
	m, e, _ := strings.Cut(s, "e")
	if _, fp, _ := strings.Cut(m, "."); len(fp) > precision {
		m, e, _ = strings.Cut(strconv.FormatFloat(v, 'e', precision, 64), "e")
		m = strings.TrimRight(m, "0")
	}
	if !strings.Contains(m, ".") {
		m += "."
	}
	if plus && !strings.HasPrefix(m, "-") {
		m = "+" + m
	}
	return m + "e" + e
}

// shortestDigits is the shortest text that reads back as v at its width
// (16, 32 or 64 bits), in strconv's format fmt ('f' or 'e').
func shortestDigits(v float64, bits int, fmtc byte) string {
	if bits != 16 {
		return strconv.FormatFloat(v, fmtc, -1, bits)
	}
	want := float16.FromFloat64(v)
	for p := 0; p < 17; p++ {
		s := strconv.FormatFloat(v, 'e', p, 64)
		back, _ := strconv.ParseFloat(s, 64)
		if float16.FromFloat64(back) == want {
			if fmtc == 'e' {
				return strconv.FormatFloat(back, 'e', -1, 64)
			}
			return strconv.FormatFloat(back, 'f', -1, 64)
		}
	}
	return strconv.FormatFloat(v, fmtc, -1, 64)
}

// scalarString is a 0-d array's one value as numpy's str prints the
// scalar: floats as Python's repr does (1.0, 1e-05, 1e+16), a string's
// text unquoted (its control characters escaped as Python's repr
// escapes them), a datetime64 as its ISO text, a timedelta64 as "5
// seconds", a record as the tuple numpy's void scalar prints, others as
// in arrays.
func scalarString(dt ndarray.DType, b []byte, o printOptions) string {
	if dt.IsRecord() {
		return recordFormat(dt, one(b), o)(b)
	}
	switch dt.Kind {
	case 'b':
		if b[0] != 0 {
			return "True"
		}
		return "False"
	case 'f':
		if dt.ItemSize <= 8 {
			return pyFloat(floatOf(dt, b), bitsOf(dt))
		}
	case 'c':
		if dt.ItemSize <= 16 {
			half := dt.ItemSize / 2
			part := ndarray.DType{Order: dt.Order, Kind: 'f', ItemSize: half}
			re, im := floatOf(part, b[:half]), floatOf(part, b[half:])
			is := pyFloatShort(im, 8*half)
			if !strings.HasPrefix(is, "-") {
				is = "+" + is
			}
			if re == 0 && !math.Signbit(re) {
				return strings.TrimPrefix(is, "+") + "j"
			}
			return "(" + pyFloatShort(re, 8*half) + is + "j)"
		}
	case 'U':
		return textOf(dt, b, "\t")
	case 'S':
		return pyRepr(dt, b)
	case 'M':
		if s, ok := datetimeString(int64Of(dt, b), dt.Unit); ok {
			return s
		}
	case 'm':
		return timedeltaString(int64Of(dt, b), dt.Unit)
	}
	return newItemFormat(dt, one(b), o)(b)
}

// textOf is an S or U item's text as escapeText gives it; an S item's
// bytes are read as UTF-8.
func textOf(dt ndarray.DType, b []byte, keep string) string {
	s := strings.TrimRight(string(b), "\x00")
	if dt.Kind == 'U' {
		var order binary.ByteOrder = binary.LittleEndian
		if dt.Order == '>' {
			order = binary.BigEndian
		}
		s = ucs4(b, order)
	}
	return escapeText(s, keep)
}

// escapeText is s with the characters that Python's repr escapes
// escaped as it does (\x1b, \u202e) but for those in keep, which stay
// raw; quotes and backslashes stay as they are. A byte that is not
// UTF-8 is escaped \xff, as Python's decode('utf-8', 'backslashreplace')
// reads it.
func escapeText(s, keep string) string {
	var out strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&out, `\x%02x`, s[i])
		case strings.ContainsRune(keep, r):
			out.WriteRune(r)
		case r == '\n':
			out.WriteString(`\n`)
		case r == '\t':
			out.WriteString(`\t`)
		case r == '\r':
			out.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || !unicode.IsPrint(r):
			out.WriteString(pyEscape(r))
		default:
			out.WriteRune(r)
		}
		i += n
	}
	return out.String()
}

// pyFloat is Python's repr of a float: shortest digits, positional with a
// ".0" between 1e-4 and 1e16, scientific ("1e-05") outside.
func pyFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e16) {
		s := shortestDigits(v, bits, 'f')
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	m, e, _ := strings.Cut(shortestDigits(v, bits, 'e'), "e")
	return m + "e" + e
}

// pyFloatShort is a complex part as Python prints it: "2" for 2.0.
func pyFloatShort(v float64, bits int) string {
	return strings.TrimSuffix(pyFloat(v, bits), ".0")
}

// pyRepr is a numpy string item as Python's repr writes it: 'text' (or
// "it's"), b'bytes' for S items.
func pyRepr(dt ndarray.DType, b []byte) string {
	if dt.Kind == 'S' {
		s := strings.TrimRight(string(b), "\x00")
		return "b" + quoteRepr(s, true)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if dt.Order == '>' {
		order = binary.BigEndian
	}
	return quoteRepr(ucs4(b, order), false)
}

// pyEscape is Python's escape of a character its repr does not print:
// \x9b, \u202e, \U000e0001.
func pyEscape(r rune) string {
	switch {
	case r < 0x100:
		return fmt.Sprintf(`\x%02x`, r)
	case r < 0x10000:
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}

// quoteRepr quotes s as Python's repr of a str (or, bytesRepr, of bytes,
// byte by byte) does.
func quoteRepr(s string, bytesRepr bool) string {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, "\"") {
		q = '"'
	}
	var out strings.Builder
	out.WriteByte(q)
	runes := []rune(s)
	if bytesRepr {
		runes = runes[:0]
		for i := 0; i < len(s); i++ {
			runes = append(runes, rune(s[i]))
		}
	}
	for _, r := range runes {
		switch {
		case r == rune(q) || r == '\\':
			out.WriteByte('\\')
			out.WriteRune(r)
		case r == '\n':
			out.WriteString(`\n`)
		case r == '\t':
			out.WriteString(`\t`)
		case r == '\r':
			out.WriteString(`\r`)
		case r < 0x20 || r == 0x7f || (bytesRepr && r >= 0x80):
			out.WriteString(`\x` + strconv.FormatInt(int64(r)|0x100, 16)[1:])
		case !unicode.IsPrint(r):
			// What Python does not print (C1 controls, U+202E that
			// reverses the text after it, separators) it escapes.
			out.WriteString(pyEscape(r))
		default:
			out.WriteRune(r)
		}
	}
	out.WriteByte(q)
	return out.String()
}
