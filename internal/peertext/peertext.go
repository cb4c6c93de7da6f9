// Package peertext makes text that came from a peer (an openpi server's
// traceback, a map key in its metadata or actions) safe to print on a
// terminal or in a one-line error: control characters, invalid UTF-8 and
// other characters that do not print are shown escaped as Go's %q shows
// them (\x1b, \r, \u009b, \u202e, \xff), so that what a peer sends can
// neither move the cursor, retitle the window, write the clipboard
// (OSC 52) nor forge a line of its own. Everything printable, backslashes
// included, is left as it is.
//
// It escapes openpi's messages and the openpi command's output; the CLI's
// file-derived names may be escaped elsewhere, and the two are meant to
// become one.
package peertext

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line returns s with every character that does not print escaped,
// newlines and tabs included: one line, whatever s holds.
func Line(s string) string { return escape(s, false) }

// Lines returns s escaped as Line does, but for newlines and tabs, which
// it keeps: for a traceback, printed over several lines.
func Lines(s string) string { return escape(s, true) }

// Quote returns s as it is when Line would not change it, and otherwise
// quoted as %q quotes it: for a name printed bare (a map key), so that a
// name holding a control character cannot pass for another that spells
// its escape.
func Quote(s string) string {
	if clean(s, false) {
		return s
	}
	return strconv.Quote(s)
}

// clean reports whether escape would return s unchanged.
func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return cleanUnicode(s[i:], keepLines)
		}
		if c < 0x20 && !(keepLines && (c == '\n' || c == '\t')) || c == 0x7f {
			return false
		}
	}
	return true
}

func cleanUnicode(s string, keepLines bool) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return false
			}
		}
		if !printable(r, keepLines) {
			return false
		}
	}
	return true
}

func printable(r rune, keepLines bool) bool {
	return unicode.IsPrint(r) || keepLines && (r == '\n' || r == '\t')
}

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case printable(r, keepLines):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u009b'
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}
