package npybridge

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/ndarray"
)

// The NPY header is a Python literal that numpy reads with
// ast.literal_eval. This is the subset of Python literal syntax that such a
// header can meaningfully contain: dicts, tuples, lists, strings (with the
// escapes Python's repr writes in a field name), True/False/None and decimal
// integers. Anything else is refused with its position.

type pyKind int

const (
	pyNone pyKind = iota
	pyBool
	pyInt
	pyStr
	pyTuple
	pyList
	pyDict
)

func (k pyKind) String() string {
	return [...]string{"None", "a bool", "an int", "a str", "a tuple", "a list", "a dict"}[k]
}

type pyValue struct {
	kind     pyKind
	at       int // offset in the header text
	b        bool
	i        int64 // for pyInt; big reports values beyond int64
	big      bool
	s        string
	items    []pyValue // tuple, list, or dict as key, value, key, value...
	negative bool
}

// maxNesting bounds the depth of brackets: enough for a descr of records
// nested ndarray.MaxRecordDepth deep (a list and a tuple per level, and a
// subarray's shape), and it keeps hostile input from recursing deeply.
const maxNesting = 3*ndarray.MaxRecordDepth + 4

type pyParser struct {
	s      []byte
	i      int
	allowL bool // Python 2 long suffix, as numpy tolerates for v1.0/v2.0
	latin1 bool // the text is latin-1 (versions 1.0, 2.0), not UTF-8
}

type pySyntaxError struct {
	at  int
	msg string
}

func (e *pySyntaxError) Error() string { return e.msg }

func (p *pyParser) fail(at int, format string, args ...any) *pySyntaxError {
	return &pySyntaxError{at, fmt.Sprintf(format, args...)}
}

// parsePyLiteral parses text holding exactly one literal (plus space and
// comments).
// Versions 1.0 and 2.0 are latin-1 (allowL and latin1 both hold for
// them), 3.0 is UTF-8; strings are returned as UTF-8 either way.
func parsePyLiteral(text []byte, allowL bool) (pyValue, *pySyntaxError) {
	p := &pyParser{s: text, allowL: allowL, latin1: allowL}
	v, err := p.value(0)
	if err != nil {
		return v, err
	}
	p.space()
	if p.i != len(p.s) {
		return v, p.fail(p.i, "unexpected %q after the header's dict", p.s[p.i])
	}
	return v, nil
}

// space skips white space, comments and line continuations.
func (p *pyParser) space() {
	for p.i < len(p.s) {
		switch c := p.s[p.i]; c {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		case '\\':
			if p.i+1 < len(p.s) && p.s[p.i+1] == '\n' {
				p.i += 2
			} else {
				return
			}
		case '#':
			for p.i < len(p.s) && p.s[p.i] != '\n' {
				p.i++
			}
		default:
			return
		}
	}
}

func (p *pyParser) value(depth int) (pyValue, *pySyntaxError) {
	p.space()
	at := p.i
	if p.i >= len(p.s) {
		return pyValue{}, p.fail(at, "header text ends where a value should be")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.sequence(depth, '}', pyDict)
	case c == '(':
		return p.sequence(depth, ')', pyTuple)
	case c == '[':
		return p.sequence(depth, ']', pyList)
	case c == '\'' || c == '"':
		return p.str()
	case c == '-' || c == '+' || (c >= '0' && c <= '9'):
		return p.integer()
	case isNameByte(c):
		start := p.i
		for p.i < len(p.s) && isNameByte(p.s[p.i]) {
			p.i++
		}
		switch name := string(p.s[start:p.i]); name {
		case "True", "False":
			return pyValue{kind: pyBool, at: at, b: name == "True"}, nil
		case "None":
			return pyValue{kind: pyNone, at: at}, nil
		default:
			return pyValue{}, p.fail(at, "name %q is not a literal", name)
		}
	default:
		return pyValue{}, p.fail(at, "unexpected %q", c)
	}
}

func isNameByte(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// sequence parses a dict, tuple or list after its opening bracket. A
// parenthesised single value without a comma is that value, as in Python.
func (p *pyParser) sequence(depth int, closer byte, kind pyKind) (pyValue, *pySyntaxError) {
	at := p.i
	if depth >= maxNesting {
		return pyValue{}, p.fail(at, "brackets nested deeper than %d", maxNesting)
	}
	p.i++
	v := pyValue{kind: kind, at: at}
	sawComma := false
	for {
		p.space()
		if p.i < len(p.s) && p.s[p.i] == closer {
			p.i++
			if kind == pyTuple && len(v.items) == 1 && !sawComma {
				return v.items[0], nil // (x) is x
			}
			return v, nil
		}
		if len(v.items) > 0 && !sawComma {
			if p.i >= len(p.s) {
				return v, p.fail(p.i, "header text ends inside a bracket opened at byte %d", at)
			}
			return v, p.fail(p.i, "expected ',' or %q, found %q", closer, p.s[p.i])
		}
		item, err := p.value(depth + 1)
		if err != nil {
			return v, err
		}
		v.items = append(v.items, item)
		if kind == pyDict {
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return v, p.fail(p.i, "expected ':' after a dict key")
			}
			p.i++
			val, err := p.value(depth + 1)
			if err != nil {
				return v, err
			}
			v.items = append(v.items, val)
		}
		p.space()
		sawComma = p.i < len(p.s) && p.s[p.i] == ','
		if sawComma {
			p.i++
		}
	}
}

// str parses a one-line string literal without prefix, as Python's repr
// writes one: latin-1 or UTF-8 text and the escapes \\ \' \" \a \b \f \n
// \r \t \v, octal \ooo, \xhh, \uXXXX and \UXXXXXXXX, and a backslash
// before a newline, which joins the lines.
func (p *pyParser) str() (pyValue, *pySyntaxError) {
	at := p.i
	quote := p.s[p.i]
	p.i++
	var b []byte
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == quote:
			p.i++
			return pyValue{kind: pyStr, at: at, s: string(b)}, nil
		case c == '\n' || c == '\r':
			return pyValue{}, p.fail(at, "string not closed on its line")
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return pyValue{}, err
			}
			if r >= 0 {
				b = utf8.AppendRune(b, r)
			}
		case c >= 0x80 && p.latin1:
			b = utf8.AppendRune(b, rune(c))
			p.i++
		case c >= 0x80:
			r, n := utf8.DecodeRune(p.s[p.i:])
			if r == utf8.RuneError && n <= 1 {
				return pyValue{}, p.fail(p.i, "invalid UTF-8 in a string")
			}
			b = append(b, p.s[p.i:p.i+n]...)
			p.i += n
		default:
			b = append(b, c)
			p.i++
		}
	}
	return pyValue{}, p.fail(at, "string not closed")
}

// escape reads the escape sequence at p.i and returns its code point, or
// -1 for a line continuation.
func (p *pyParser) escape() (rune, *pySyntaxError) {
	at := p.i
	p.i++
	if p.i >= len(p.s) {
		return 0, p.fail(at, "string not closed")
	}
	c := p.s[p.i]
	p.i++
	if r, ok := simpleEscapes[c]; ok {
		return r, nil
	}
	hex := 0
	switch c {
	case '\n':
		return -1, nil
	case 'x':
		hex = 2
	case 'u':
		hex = 4
	case 'U':
		hex = 8
	case '0', '1', '2', '3', '4', '5', '6', '7':
		r := rune(c - '0')
		for k := 0; k < 2 && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '7'; k++ {
			r = r*8 + rune(p.s[p.i]-'0')
			p.i++
		}
		return r, nil
	default:
		// Python keeps an unknown escape as it is (and warns); numpy never
		// writes one, so it is refused rather than guessed at.
		return 0, p.fail(at, "unknown escape sequence \\%c in a string", c)
	}
	if p.i+hex > len(p.s) {
		return 0, p.fail(at, "truncated \\%c escape in a string", c)
	}
	var r rune
	for _, d := range p.s[p.i : p.i+hex] {
		v := strings.IndexByte("0123456789abcdef", d|0x20)
		if v < 0 || d|0x20 != d && (d < 'A' || d > 'F') {
			return 0, p.fail(at, "malformed \\%c escape in a string", c)
		}
		r = r*16 + rune(v)
	}
	p.i += hex
	switch {
	case r > utf8.MaxRune:
		return 0, p.fail(at, "escape \\%c beyond the last code point", c)
	case r >= 0xd800 && r < 0xe000:
		return 0, p.fail(at, "escape of a lone surrogate, which a Go string cannot hold")
	}
	return r, nil
}

var simpleEscapes = map[byte]rune{
	'\\': '\\', '\'': '\'', '"': '"', 'a': '\a', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v',
}

// integer parses a decimal integer with optional sign and underscores
// between digits, and the 'L' suffix where allowed.
func (p *pyParser) integer() (pyValue, *pySyntaxError) {
	at := p.i
	v := pyValue{kind: pyInt, at: at}
	if c := p.s[p.i]; c == '-' || c == '+' {
		v.negative = c == '-'
		p.i++
		p.space()
	}
	start := p.i
	var mag uint64
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' && p.i > start && p.i+1 < len(p.s) && p.s[p.i+1] >= '0' && p.s[p.i+1] <= '9' && p.s[p.i-1] != '_' {
			p.i++
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		if mag > (math.MaxUint64-9)/10 {
			v.big = true
		} else {
			mag = mag*10 + uint64(c-'0')
		}
		p.i++
	}
	if p.i == start {
		return v, p.fail(at, "a sign without digits")
	}
	if p.s[start] == '0' && p.i-start > 1 {
		for _, c := range p.s[start:p.i] {
			if c != '0' && c != '_' {
				return v, p.fail(at, "leading zeros in a decimal integer")
			}
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'L' || p.s[p.i] == 'l') && p.allowL {
		p.i++
	}
	if p.i < len(p.s) && isNameByte(p.s[p.i]) || p.i < len(p.s) && p.s[p.i] == '.' {
		return v, p.fail(at, "only decimal integers are supported here")
	}
	if mag > math.MaxInt64 {
		v.big = true
	}
	v.i = int64(mag)
	if v.negative {
		v.i = -v.i
	}
	return v, nil
}
