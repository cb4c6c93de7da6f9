package npybridge

import (
	"fmt"
	"math"
)

// The NPY header is a Python literal that numpy reads with
// ast.literal_eval. This is the subset of Python literal syntax that such a
// header can meaningfully contain: dicts, tuples, lists, strings without
// escapes, True/False/None and decimal integers. Anything else is refused
// with its position.

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

// maxNesting bounds the depth of brackets: enough for any real header, and
// it keeps hostile input from recursing deeply.
const maxNesting = 32

type pyParser struct {
	s      []byte
	i      int
	allowL bool // Python 2 long suffix, as numpy tolerates for v1.0/v2.0
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
func parsePyLiteral(text []byte, allowL bool) (pyValue, *pySyntaxError) {
	p := &pyParser{s: text, allowL: allowL}
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

func (p *pyParser) str() (pyValue, *pySyntaxError) {
	at := p.i
	quote := p.s[p.i]
	p.i++
	start := p.i
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case quote:
			v := pyValue{kind: pyStr, at: at, s: string(p.s[start:p.i])}
			p.i++
			return v, nil
		case '\\':
			return pyValue{}, p.fail(p.i, "escape sequences in strings are not supported")
		case '\n':
			return pyValue{}, p.fail(at, "string not closed on its line")
		}
		p.i++
	}
	return pyValue{}, p.fail(at, "string not closed")
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
