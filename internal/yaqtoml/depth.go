package yaqtoml

import (
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// guard refuses TOML text that nests deeper than MaxDepth before a
// parser sees it: BurntSushi/toml recurses once per array or inline table,
// and its time grows faster than the square of a key's length in parts
// (10,000 dotted parts take seconds, 40,000 minutes). The depth at a point
// of the text is the number of key parts and arrays that enclose it:
// the table header's parts (one more for an array of tables, "[[a.b]]" is
// 3), then the key's parts at each level (a.b = 2) and one per open array.
//
// It reads strings as BurntSushi/toml's lexer does, so that no string can
// hide brackets from it or show it brackets the parser does not see: a
// multi-line string ends at the last three quotes of the first run of
// three or more, so that up to two quotes may end its text,
//
//	a = '''x''''   # the string x'
//	b = """x"""""  # the string x""
//
// a basic string's backslash escapes the byte after it, a literal string
// has no escapes. Where the lexer would stop at an error (a newline in a
// one-line string, six quotes) the guard goes on reading, which can only
// count more. It is linear in the text and allocates nothing.
//
// It also refuses what the parser is known to read wrong: an inline table
// that is an element of an array, under an empty key or holding one
// (list = [1, {"" = 2}] gives list = [{"" = 2}], a."" = [1, {}] gives
// [{}], the other elements dropped).
func guard(text []byte) error {
	var s depthScan
	return s.scan(text)
}

// frame is one open level of a TOML document: the top level (whose
// key/value pairs end at a newline), an array, or an inline table (whose
// pairs end at a comma).
type frame struct {
	kind  byte // 't', 'a' or 'i'
	parts int  // the parts of the key being read or whose value is read
	value bool // past the key's '='
	empty bool // the key has an empty part ("")
}

type depthScan struct {
	stack   [MaxDepth + 2]frame
	n       int  // frames open; stack[0] is the top level
	header  int  // the parts of the last table header
	hempty  bool // the header has an empty part
	depth   int  // header + each frame's parts + one per array
	deepest int  // the greatest depth seen
}

// grow adds delta to the depth and fails past MaxDepth.
func (s *depthScan) grow(delta, at int) error {
	s.depth += delta
	s.deepest = max(s.deepest, s.depth)
	if s.depth > MaxDepth {
		return fmt.Errorf("keys, arrays and tables nest deeper than %d levels at byte %d: %w", MaxDepth, at, codecerr.ErrTooDeep)
	}
	return nil
}

func (s *depthScan) scan(text []byte) error {
	s.n = 1
	s.stack[0] = frame{kind: 't'}
	for i := 0; i < len(text); i++ {
		c := text[i]
		f := &s.stack[s.n-1]
		switch {
		case c == '#':
			for i+1 < len(text) && text[i+1] != '\n' {
				i++
			}
		case c == '\n':
			if f.kind == 't' {
				s.depth -= f.parts
				*f = frame{kind: 't'}
			}
		case c == '"' || c == '\'':
			if err := s.keyPart(f, i); err != nil {
				return err
			}
			end := skipString(text, i)
			if end == i+1 && !f.value {
				f.empty = true
				if f.kind == 'i' && s.stack[s.n-2].kind == 'a' {
					return errEmptyKey(i)
				}
			}
			i = end
		case f.kind == 't' && !f.value && f.parts == 0 && c == '[':
			var err error
			if i, err = s.tableHeader(text, i); err != nil {
				return err
			}
		case c == '[':
			if s.n == len(s.stack) {
				return s.grow(MaxDepth+1, i)
			}
			s.stack[s.n] = frame{kind: 'a', value: true}
			s.n++
			if err := s.grow(1, i); err != nil {
				return err
			}
		case c == '{':
			if s.n == len(s.stack) {
				return s.grow(MaxDepth+1, i)
			}
			if f.kind == 'a' && s.emptyAbove() {
				return errEmptyKey(i)
			}
			s.stack[s.n] = frame{kind: 'i'}
			s.n++
		case c == ']' || c == '}':
			if s.n > 1 {
				s.depth -= f.parts
				if f.kind == 'a' {
					s.depth--
				}
				s.n--
			}
		case c == ',' && f.kind == 'i':
			s.depth -= f.parts
			*f = frame{kind: 'i'}
		case c == '=' && f.kind != 'a':
			f.value = true
		case c == '.' && !f.value:
			if err := s.keyPart(f, i); err != nil {
				return err
			}
			f.parts++
			if err := s.grow(1, i); err != nil {
				return err
			}
		case isBareKeyByte(c):
			if err := s.keyPart(f, i); err != nil {
				return err
			}
		}
	}
	return nil
}

// emptyAbove reports whether the header or a key enclosing the current
// frame has an empty part.
func (s *depthScan) emptyAbove() bool {
	for _, f := range s.stack[:s.n] {
		if f.empty {
			return true
		}
	}
	return s.hempty
}

func errEmptyKey(at int) error {
	return fmt.Errorf("a table inside an array under or holding an empty key (\"\") at byte %d, which the TOML parser reads wrong (it drops the array's other values)", at)
}

// keyPart notes that a key starts at i, where f reads a key (not a value).
func (s *depthScan) keyPart(f *frame, i int) error {
	if f.value || f.parts > 0 {
		return nil
	}
	f.parts = 1
	return s.grow(1, i)
}

// tableHeader reads the table header ("[a.b]" or "[[a.b]]") at text[i]
// and returns the index of its last byte.
func (s *depthScan) tableHeader(text []byte, i int) (int, error) {
	s.depth -= s.header
	s.header, s.hempty = 0, false
	if i+1 < len(text) && text[i+1] == '[' {
		i++
		s.header++
		if err := s.grow(1, i); err != nil {
			return i, err
		}
	}
	started := false
	for i++; i < len(text); i++ {
		switch c := text[i]; {
		case c == ']' || c == '\n':
			if c == ']' && i+1 < len(text) && text[i+1] == ']' {
				i++
			}
			return i, nil
		case c == '.' || !started && (c == '"' || c == '\'' || isBareKeyByte(c)):
			started = true
			s.header++
			if err := s.grow(1, i); err != nil {
				return i, err
			}
			if c == '"' || c == '\'' {
				end := skipString(text, i)
				s.hempty = s.hempty || end == i+1
				i = end
			}
		case c == '"' || c == '\'':
			end := skipString(text, i)
			s.hempty = s.hempty || end == i+1
			i = end
		}
	}
	return i, nil
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// skipString returns the index of the last byte of the string that starts
// at text[i] (a quote), as BurntSushi/toml's lexer reads it, or the last
// index of text when it does not end.
func skipString(text []byte, i int) int {
	q := text[i]
	if i+2 < len(text) && text[i+1] == q && text[i+2] == q {
		return skipMultiline(text, i+3, q)
	}
	for j := i + 1; j < len(text); j++ {
		switch c := text[j]; {
		case c == '\\' && q == '"':
			j++
		case c == q || c == '\n':
			return j
		}
	}
	return len(text) - 1
}

// skipMultiline returns the index of the last quote that closes the
// multi-line string whose text starts at text[j]: the last of the first run
// of three or more quotes q, an escaped quote ("""a\""""") not counting.
func skipMultiline(text []byte, j int, q byte) int {
	for ; j < len(text); j++ {
		switch c := text[j]; {
		case c == '\\' && q == '"':
			j++
		case c == q:
			run := 1
			for j+run < len(text) && text[j+run] == q {
				run++
			}
			if run >= 3 {
				return j + run - 1
			}
			j += run - 1
		}
	}
	return len(text) - 1
}
