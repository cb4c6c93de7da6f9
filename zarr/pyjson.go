package zarr

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// The metadata is written as zarr-python writes it: Python's json.dumps
// with indent=4, sort_keys=True, ensure_ascii=True and separators (",",
// ": "), so that a store ndpack writes reads, and diffs, as one
// zarr-python wrote.

// object is a JSON object; its members are written sorted by key.
type object []member

type member struct {
	key   string
	value any
}

// appendPyJSON appends v (nil, bool, int, int64, uint64, float64, string,
// []any or object) indented as json.dumps(indent=4) writes it, at the
// nesting level depth.
func appendPyJSON(b []byte, v any, depth int) []byte {
	newline := func(b []byte, depth int) []byte {
		b = append(b, '\n')
		return append(b, strings.Repeat(" ", 4*depth)...)
	}
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case float64:
		return appendPyFloat(b, v)
	case string:
		return appendPyString(b, v)
	case []any:
		if len(v) == 0 {
			return append(b, "[]"...)
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, depth+1)
			b = appendPyJSON(b, e, depth+1)
		}
		b = newline(b, depth)
		return append(b, ']')
	case object:
		if len(v) == 0 {
			return append(b, "{}"...)
		}
		sorted := slices.Clone(v)
		slices.SortStableFunc(sorted, func(x, y member) int { return strings.Compare(x.key, y.key) })
		b = append(b, '{')
		for i, m := range sorted {
			if i > 0 {
				b = append(b, ',')
			}
			b = newline(b, depth+1)
			b = appendPyString(b, m.key)
			b = append(b, ": "...)
			b = appendPyJSON(b, m.value, depth+1)
		}
		b = newline(b, depth)
		return append(b, '}')
	}
	panic("zarr: no JSON for a value of this type")
}

// appendPyString appends s as json.dumps(ensure_ascii=True) does: every
// byte outside space to tilde escaped, characters past U+FFFF as UTF-16
// surrogate pairs. Invalid UTF-8 is written as U+FFFD.
func appendPyString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(b []byte, r rune) []byte {
		return append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= ' ' && c <= '~' {
			if c == '"' || c == '\\' {
				b = append(b, '\\')
			}
			b = append(b, c)
			i++
			continue
		}
		switch c {
		case '\n':
			b, i = append(b, `\n`...), i+1
			continue
		case '\r':
			b, i = append(b, `\r`...), i+1
			continue
		case '\t':
			b, i = append(b, `\t`...), i+1
			continue
		case '\b':
			b, i = append(b, `\b`...), i+1
			continue
		case '\f':
			b, i = append(b, `\f`...), i+1
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r > 0xffff {
			r1, r2 := utf16.EncodeRune(r)
			b = u(u(b, r1), r2)
			continue
		}
		b = u(b, r)
	}
	return append(b, '"')
}

// appendPyFloat appends f as Python's repr (which json.dumps uses): the
// shortest digits that read back as f, in positional notation for
// exponents from -4 to 15 (with ".0" when integral), scientific beyond
// ("1e-05", "1.5e+16"). NaN and the infinities, which JSON lacks, are
// never passed here: Zarr writes them as strings.
func appendPyFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		panic("zarr: a non-finite float has no JSON")
	}
	e := strconv.AppendFloat(nil, f, 'e', -1, 64) // [-]d[.ddd]e±XX
	mant, expText, _ := strings.Cut(string(e), "e")
	exp, _ := strconv.Atoi(expText)
	neg := strings.HasPrefix(mant, "-")
	digits := strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1)
	if neg {
		b = append(b, '-')
	}
	if exp < -4 || exp >= 16 {
		b = append(b, digits[0])
		if len(digits) > 1 {
			b = append(b, '.')
			b = append(b, digits[1:]...)
		}
		b = append(b, 'e')
		if exp < 0 {
			b, exp = append(b, '-'), -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	if exp < 0 {
		b = append(b, "0."...)
		b = append(b, strings.Repeat("0", -exp-1)...)
		return append(b, digits...)
	}
	if len(digits) <= exp+1 {
		b = append(b, digits...)
		b = append(b, strings.Repeat("0", exp+1-len(digits))...)
		return append(b, ".0"...)
	}
	b = append(b, digits[:exp+1]...)
	b = append(b, '.')
	return append(b, digits[exp+1:]...)
}
