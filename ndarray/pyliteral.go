package ndarray

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file reads the literal that a dtype spec written as a Python
// object is: numpy's list form "[('x', '<f4'), ('pos', '<f4', (3,))]", a
// tuple "('<f4', (2, 2))" or a dict "{'names': [...], 'formats': [...]}",
// as Python's ast.literal_eval reads it, or, failing that, as json.loads
// does (so that JSON dict specs, with true, false and null, read too).
// Only what a dtype can be made of is kept: strings, bytes, integers,
// True, False, None, tuples, lists and dicts; other numbers are read so
// that their use can be refused.

// pyKind is the Python type of a literal value.
type pyKind uint8

const (
	pyNone pyKind = iota
	pyBool
	pyInt
	pyFloat // a float or a complex number: never part of a dtype
	pyStr
	pyBytes
	pyTuple
	pyList
	pyDict
)

// pyValue is one literal value.
type pyValue struct {
	kind  pyKind
	i     int64          // pyInt (when !big), pyBool (0 or 1)
	big   bool           // pyInt beyond int64
	f     float64        // pyFloat (NaN for a complex number)
	s     string         // pyStr (UTF-8), pyBytes (raw bytes)
	items []pyValue      // pyTuple, pyList; pyDict: keys and values alternate
	index map[string]int // pyDict: the index in items of each key's value, by pyKey
}

// maxLiteralDepth bounds the nesting of containers in a literal: a dtype
// needs about three levels per level of record (list, tuple, shape), and
// MaxRecordDepth bounds those.
const maxLiteralDepth = 4*MaxRecordDepth + 8

var (
	errNotLiteral = errors.New("not a Python or JSON literal")
	// errUnicodeName is a \N{NAME} escape, which Python reads and
	// ParseDType cannot: it has no table of Unicode's names.
	errUnicodeName = errors.New("a \\N{NAME} escape names a character by its Unicode name, which ndpack has no table of; write the character itself or a \\u escape")
	// errSurrogate is a lone surrogate in a str, which Python holds and
	// UTF-8 (and so a field name) cannot.
	errSurrogate = errors.New("a str holds a lone surrogate (\\ud800 to \\udfff), which no UTF-8 text, and so no field name or dtype, can hold")
)

// parseLiteral reads s whole as a Python literal, then as JSON.
func parseLiteral(s string) (pyValue, error) {
	if !utf8.ValidString(s) {
		return pyValue{}, errNotLiteral
	}
	for _, json := range []bool{false, true} {
		p := &litParser{s: s, json: json}
		v, err := p.value(0)
		if err == nil && p.peek() == 0 && p.pos == len(p.s) {
			if p.unsupported != nil {
				return pyValue{}, p.unsupported // Python reads it; ndpack cannot
			}
			return v, nil
		}
	}
	return pyValue{}, errNotLiteral
}

type litParser struct {
	s    string
	pos  int
	json bool
	// unsupported is what Python reads in s that ndpack cannot hold (a
	// \N{NAME} escape, a lone surrogate); the literal is read on, to know
	// whether Python reads all of it.
	unsupported error
}

// space skips what separates tokens: whitespace, and in Python comments
// and backslash continuations.
func (p *litParser) space() {
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			p.pos++
		case !p.json && c == '\f':
			p.pos++
		case !p.json && c == '#':
			for p.pos < len(p.s) && p.s[p.pos] != '\n' {
				p.pos++
			}
		case !p.json && c == '\\' && strings.HasPrefix(p.s[p.pos+1:], "\n"):
			p.pos += 2
		default:
			return
		}
	}
}

func (p *litParser) peek() byte {
	p.space()
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *litParser) value(depth int) (pyValue, error) {
	if depth > maxLiteralDepth {
		return pyValue{}, errNotLiteral
	}
	switch c := p.peek(); {
	case c == '(' && !p.json:
		return p.paren(depth)
	case c == '[':
		items, err := p.seq(depth, ']', false)
		return pyValue{kind: pyList, items: items}, err
	case c == '{':
		items, err := p.seq(depth, '}', true)
		if err != nil {
			return pyValue{}, err
		}
		return newDict(items), nil
	case c == '"' || (c == '\'' && !p.json):
		return p.strings()
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		return p.name()
	}
	return p.number()
}

// paren reads "(" ... ")": a tuple, or one parenthesised value.
func (p *litParser) paren(depth int) (pyValue, error) {
	p.pos++
	var items []pyValue
	comma := false
	for {
		if p.peek() == ')' {
			p.pos++
			if len(items) == 1 && !comma {
				return items[0], nil
			}
			return pyValue{kind: pyTuple, items: items}, nil
		}
		if len(items) > 0 && !comma {
			return pyValue{}, errNotLiteral
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return pyValue{}, err
		}
		items = append(items, v)
		if comma = p.peek() == ','; comma {
			p.pos++
		}
	}
}

// seq reads a list or, with dict set, a dict's keys and values.
func (p *litParser) seq(depth int, end byte, dict bool) ([]pyValue, error) {
	p.pos++
	var items []pyValue
	for {
		if p.peek() == end && (len(items) == 0 || !p.json) {
			p.pos++
			return items, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if dict && (p.json && v.kind != pyStr || !hashable(v)) {
			return nil, errNotLiteral
		}
		items = append(items, v)
		if dict {
			if p.peek() != ':' {
				return nil, errNotLiteral
			}
			p.pos++
			if v, err = p.value(depth + 1); err != nil {
				return nil, err
			}
			items = append(items, v)
		}
		switch p.peek() {
		case ',':
			p.pos++
		case end:
			p.pos++
			return items, nil
		default:
			return nil, errNotLiteral
		}
	}
}

// newDict makes a dict of alternating keys and values, keeping of a key
// given twice the first place and the last value, as Python does.
func newDict(kv []pyValue) pyValue {
	d := pyValue{kind: pyDict, index: make(map[string]int, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		k := pyKey(kv[i])
		if j, ok := d.index[k]; ok {
			d.items[j] = kv[i+1]
			continue
		}
		d.items = append(d.items, kv[i], kv[i+1])
		d.index[k] = len(d.items) - 1
	}
	return d
}

// pyKey is a text that two hashable values share when Python finds them
// equal (1, 1.0 and True are one key).
func pyKey(v pyValue) string {
	switch v.kind {
	case pyBool, pyInt:
		if v.big {
			return "big"
		}
		return "n" + strconv.FormatInt(v.i, 10)
	case pyFloat:
		if v.f == math.Trunc(v.f) && math.Abs(v.f) < 1<<63 {
			return "n" + strconv.FormatInt(int64(v.f), 10)
		}
		return "f" + strconv.FormatFloat(v.f, 'g', -1, 64)
	case pyStr:
		return "s" + v.s
	case pyBytes:
		return "b" + v.s
	case pyTuple:
		var b strings.Builder
		b.WriteString("(")
		for _, it := range v.items {
			k := pyKey(it)
			b.WriteString(strconv.Itoa(len(k)))
			b.WriteString(":")
			b.WriteString(k)
		}
		return b.String()
	}
	return "None"
}

// hashable reports whether v can be a dict key in Python.
func hashable(v pyValue) bool {
	switch v.kind {
	case pyList, pyDict:
		return false
	case pyTuple:
		for _, it := range v.items {
			if !hashable(it) {
				return false
			}
		}
	}
	return true
}

// name reads True, False, None (Python) or true, false, null, NaN,
// Infinity (JSON), or a string prefix.
func (p *litParser) name() (pyValue, error) {
	start := p.pos
	for p.pos < len(p.s) && (isIdentByte(p.s[p.pos])) {
		p.pos++
	}
	word := p.s[start:p.pos]
	if p.pos < len(p.s) && (p.s[p.pos] == '\'' || p.s[p.pos] == '"') && !p.json {
		p.pos = start
		return p.strings()
	}
	switch {
	case !p.json && word == "True", p.json && word == "true":
		return pyValue{kind: pyBool, i: 1}, nil
	case !p.json && word == "False", p.json && word == "false":
		return pyValue{kind: pyBool}, nil
	case !p.json && word == "None", p.json && word == "null":
		return pyValue{kind: pyNone}, nil
	case p.json && (word == "NaN" || word == "Infinity"):
		return pyValue{kind: pyFloat, f: math.NaN()}, nil
	}
	return pyValue{}, errNotLiteral
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// strings reads one string, or in Python several in a row, which
// concatenate ('f' '4' is 'f4'); mixing str and bytes is an error.
func (p *litParser) strings() (pyValue, error) {
	v, err := p.str()
	var b strings.Builder
	for err == nil && !p.json {
		c := p.peek()
		if c != '\'' && c != '"' && !(isIdentByte(c) && c > '9') {
			break
		}
		var next pyValue
		if next, err = p.str(); err == nil {
			if next.kind != v.kind {
				return pyValue{}, errNotLiteral
			}
			if b.Len() == 0 {
				b.WriteString(v.s)
			}
			b.WriteString(next.s)
		}
	}
	if b.Len() > 0 {
		v.s = b.String()
	}
	return v, err
}

// str reads one string literal with its prefix.
func (p *litParser) str() (pyValue, error) {
	p.space()
	start := p.pos
	for p.pos < len(p.s) && !p.json && isIdentByte(p.s[p.pos]) {
		p.pos++
	}
	prefix := strings.ToLower(p.s[start:p.pos])
	if prefix != "" && prefix != "r" && prefix != "u" && prefix != "b" && prefix != "br" && prefix != "rb" {
		return pyValue{}, errNotLiteral // f-strings are not literals
	}
	raw, bytes := strings.Contains(prefix, "r"), strings.Contains(prefix, "b")
	if p.pos >= len(p.s) || (p.s[p.pos] != '\'' && p.s[p.pos] != '"') {
		return pyValue{}, errNotLiteral
	}
	q := p.s[p.pos : p.pos+1]
	if !p.json && strings.HasPrefix(p.s[p.pos:], q+q+q) {
		q += q + q
	}
	p.pos += len(q)
	var b []byte
	for {
		if p.pos >= len(p.s) {
			return pyValue{}, errNotLiteral
		}
		if strings.HasPrefix(p.s[p.pos:], q) {
			p.pos += len(q)
			break
		}
		c := p.s[p.pos]
		switch {
		case c == '\\':
			var err error
			if b, err = p.escape(b, raw, bytes); err != nil {
				return pyValue{}, err
			}
			continue
		case c == '\n' && len(q) == 1, p.json && c < 0x20, bytes && c >= 0x80:
			return pyValue{}, errNotLiteral
		}
		b = append(b, c)
		p.pos++
	}
	kind := pyStr
	if bytes {
		kind = pyBytes
	} else if !utf8.Valid(b) {
		p.unsupported = errSurrogate
	}
	return pyValue{kind: kind, s: string(b)}, nil
}

// escape appends the character of the escape sequence at p.pos.
func (p *litParser) escape(b []byte, raw, bytes bool) ([]byte, error) {
	if p.pos+1 >= len(p.s) {
		return nil, errNotLiteral
	}
	c := p.s[p.pos+1]
	p.pos += 2
	if raw {
		return append(b, '\\', c), nil
	}
	if r, ok := simpleEscape(c, p.json); ok {
		return append(b, r), nil
	}
	hex := 0
	switch c {
	case 'x':
		hex = 2
	case 'u':
		hex = 4
	case 'U':
		hex = 8
	}
	switch {
	case p.json && c != 'u':
		return nil, errNotLiteral
	case !p.json && c == '\n':
		return b, nil
	case !p.json && c >= '0' && c <= '7':
		n := int(c - '0')
		for k := 0; k < 2 && p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '7'; k++ {
			n = n*8 + int(p.s[p.pos]-'0')
			p.pos++
		}
		return appendChar(b, rune(n), bytes), nil
	case c == 'N' && !bytes:
		end := strings.IndexByte(p.s[p.pos:], '}')
		if !strings.HasPrefix(p.s[p.pos:], "{") || end < 2 {
			return nil, errNotLiteral
		}
		p.pos += end + 1
		p.unsupported = errUnicodeName
		return b, nil
	case hex == 0 || (bytes && c != 'x'):
		return append(b, '\\', c), nil // kept as written, as Python does
	}
	if p.pos+hex > len(p.s) {
		return nil, errNotLiteral
	}
	n, err := strconv.ParseUint(p.s[p.pos:p.pos+hex], 16, 32)
	if err != nil || n > utf8.MaxRune {
		return nil, errNotLiteral
	}
	p.pos += hex
	if p.json && n >= 0xd800 && n < 0xdc00 && strings.HasPrefix(p.s[p.pos:], `\u`) && p.pos+6 <= len(p.s) {
		lo, err := strconv.ParseUint(p.s[p.pos+2:p.pos+6], 16, 32)
		if err == nil && lo >= 0xdc00 && lo < 0xe000 {
			p.pos += 6
			n = 0x10000 + (n-0xd800)<<10 + (lo - 0xdc00)
		}
	}
	return appendChar(b, rune(n), bytes), nil
}

// simpleEscape is the character of a one-letter escape: Python's, or
// JSON's.
func simpleEscape(c byte, json bool) (byte, bool) {
	switch c {
	case '\\', '"':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	case '\'':
		return c, !json
	case 'a':
		return '\a', !json
	case 'v':
		return '\v', !json
	case '/':
		return c, json
	}
	return 0, false
}

// appendChar appends a character: a byte in a bytes literal, otherwise
// its UTF-8 (a surrogate makes the text invalid, and is refused later).
func appendChar(b []byte, r rune, bytes bool) []byte {
	if bytes {
		return append(b, byte(r))
	}
	if r >= 0xd800 && r < 0xe000 {
		return append(b, 0xff)
	}
	return utf8.AppendRune(b, r)
}

// number reads an integer or float (with a sign in Python, as
// literal_eval allows one).
func (p *litParser) number() (pyValue, error) {
	neg := false
	if p.pos < len(p.s) && (p.s[p.pos] == '-' || (p.s[p.pos] == '+' && !p.json)) {
		neg = p.s[p.pos] == '-'
		p.pos++
		if !p.json {
			p.space()
		}
	}
	if p.json && neg && strings.HasPrefix(p.s[p.pos:], "Infinity") {
		p.pos += len("Infinity")
		return pyValue{kind: pyFloat, f: math.Inf(-1)}, nil
	}
	body := p.pos
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		exp := (c == '+' || c == '-') && p.pos > body && (p.s[p.pos-1] == 'e' || p.s[p.pos-1] == 'E') && !isPyPrefixed(p.s[body:p.pos])
		if !isIdentByte(c) && c != '.' && !exp {
			break
		}
		p.pos++
	}
	text := p.s[body:p.pos]
	if text == "" {
		return pyValue{}, errNotLiteral
	}
	if p.json {
		return jsonNumber(text, neg)
	}
	return pyNumber(text, neg)
}

func isPyPrefixed(s string) bool {
	return len(s) > 1 && s[0] == '0' && strings.IndexByte("xXoObB", s[1]) >= 0
}

// pyNumber reads a Python integer or float literal, without its sign.
func pyNumber(text string, neg bool) (pyValue, error) {
	if digits, base, ok := pyIntDigits(text); ok {
		n, err := strconv.ParseUint(digits, base, 64)
		switch {
		case errors.Is(err, strconv.ErrRange), err == nil && n > 1<<63, err == nil && n == 1<<63 && !neg:
			return pyValue{kind: pyInt, big: true}, nil
		case err != nil:
			return pyValue{}, errNotLiteral
		case neg:
			return pyValue{kind: pyInt, i: int64(-n)}, nil
		}
		return pyValue{kind: pyInt, i: int64(n)}, nil
	}
	t := strings.TrimRight(text, "jJ")
	if len(text)-len(t) > 1 || t == "" || isPyPrefixed(t) || !pyDigitGroups(t) || len(t) == len(text) && !strings.ContainsAny(t, ".eE") {
		return pyValue{}, errNotLiteral
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(t, "_", ""), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return pyValue{}, errNotLiteral
	}
	if len(t) != len(text) {
		f = math.NaN() // a complex number
	}
	if neg {
		f = -f
	}
	return pyValue{kind: pyFloat, f: f}, nil
}

// pyIntDigits checks a Python integer literal ("12", "1_000", "0x_ff",
// "0o17", "0b1", "00") and returns its digits without underscores.
func pyIntDigits(text string) (string, int, bool) {
	base, digits := 10, text
	if isPyPrefixed(text) {
		base = map[byte]int{'x': 16, 'o': 8, 'b': 2}[text[1]|0x20]
		digits = strings.TrimPrefix(text[2:], "_")
	}
	if digits == "" || !pyDigitGroups(digits) {
		return "", 0, false
	}
	clean := strings.ReplaceAll(digits, "_", "")
	for _, c := range clean {
		if v := strings.IndexRune("0123456789abcdef", c|0x20); v < 0 || v >= base {
			return "", 0, false
		}
	}
	if base == 10 && len(clean) > 1 && clean[0] == '0' && strings.Trim(clean, "0") != "" {
		return "", 0, false // leading zeros only in zero itself
	}
	return clean, base, true
}

// pyDigitGroups reports whether every underscore in s stands between two
// alphanumeric characters, as Python's grouping allows.
func pyDigitGroups(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '_' && (i == 0 || i == len(s)-1 || !isAlnum(s[i-1]) || !isAlnum(s[i+1])) {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool { return isIdentByte(c) && c != '_' }

// jsonNumber reads a JSON number, without its sign.
func jsonNumber(text string, neg bool) (pyValue, error) {
	digits := func(s string) int {
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		return n
	}
	i := digits(text)
	if i == 0 || (text[0] == '0' && i > 1) {
		return pyValue{}, errNotLiteral
	}
	isFloat := false
	if i < len(text) && text[i] == '.' {
		n := digits(text[i+1:])
		if n == 0 {
			return pyValue{}, errNotLiteral
		}
		i += 1 + n
		isFloat = true
	}
	if i < len(text) && (text[i] == 'e' || text[i] == 'E') {
		j := i + 1
		if j < len(text) && (text[j] == '+' || text[j] == '-') {
			j++
		}
		n := digits(text[j:])
		if n == 0 {
			return pyValue{}, errNotLiteral
		}
		i = j + n
		isFloat = true
	}
	if i != len(text) {
		return pyValue{}, errNotLiteral
	}
	sign := ""
	if neg {
		sign = "-"
	}
	if isFloat {
		f, _ := strconv.ParseFloat(sign+text, 64)
		return pyValue{kind: pyFloat, f: f}, nil
	}
	n, err := strconv.ParseInt(sign+text, 10, 64)
	if err != nil {
		return pyValue{kind: pyInt, big: true}, nil
	}
	return pyValue{kind: pyInt, i: n}, nil
}

// pyEqual is Python's == for the literal values a dtype spec compares:
// dict keys, a field's title against its name.
func pyEqual(a, b pyValue) bool {
	num := func(v pyValue) bool { return v.kind == pyBool || v.kind == pyInt || v.kind == pyFloat }
	switch {
	case num(a) && num(b):
		if a.kind == pyFloat || b.kind == pyFloat {
			return a.kind == b.kind && a.f == b.f || a.kind == pyFloat && !b.big && a.f == float64(b.i) || b.kind == pyFloat && !a.big && b.f == float64(a.i)
		}
		return !a.big && !b.big && a.i == b.i
	case a.kind != b.kind:
		return false
	case a.kind == pyStr || a.kind == pyBytes:
		return a.s == b.s
	case a.kind == pyNone:
		return true
	case a.kind == pyTuple || a.kind == pyList:
		if len(a.items) != len(b.items) {
			return false
		}
		for i := range a.items {
			if !pyEqual(a.items[i], b.items[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// dictGet returns the value of the string key k in a dict.
func (v pyValue) dictGet(k string) (pyValue, bool) {
	return v.dictGetValue(pyValue{kind: pyStr, s: k})
}

func (v pyValue) dictGetValue(k pyValue) (pyValue, bool) {
	if i, ok := v.index[pyKey(k)]; ok && hashable(k) {
		return v.items[i], true
	}
	return pyValue{}, false
}

// seqLen and seqItem treat tuples, lists and strs (their characters) as
// the sequences numpy indexes.
func (v pyValue) seqLen() (int, bool) {
	switch v.kind {
	case pyTuple, pyList:
		return len(v.items), true
	case pyStr:
		return utf8.RuneCountInString(v.s), true
	case pyBytes:
		return len(v.s), true
	}
	return 0, false
}

func (v pyValue) seqItem(i int) pyValue {
	switch v.kind {
	case pyStr:
		for _, r := range v.s {
			if i == 0 {
				return pyValue{kind: pyStr, s: string(r)}
			}
			i--
		}
	case pyBytes:
		return pyValue{kind: pyInt, i: int64(v.s[i])}
	}
	return v.items[i]
}

// repr is a short Python repr of v, for messages.
func (v pyValue) repr() string {
	switch v.kind {
	case pyNone:
		return "None"
	case pyBool:
		return map[int64]string{0: "False", 1: "True"}[v.i]
	case pyInt:
		if v.big {
			return "a very large integer"
		}
		return strconv.FormatInt(v.i, 10)
	case pyFloat:
		return "a float"
	case pyStr:
		return string(appendPyRepr(nil, v.s))
	case pyBytes:
		return "b" + string(appendPyRepr(nil, v.s))
	case pyTuple:
		return "a tuple"
	case pyList:
		return "a list"
	}
	return "a dict"
}
