// Package peertext makes text that came from outside (a peer's traceback,
// a map key in its metadata or actions, an .npz member or record field
// name, a yaq daemon's protocol) safe to print on a terminal or in a
// one-line error. It is the module's one escaping: the openpi package's
// messages and every line the ndpack command prints go through it.
//
// What it escapes is what could command a terminal or disguise the text
// around it: C0 and C1 controls and DEL (an OSC 52 sequence writes the
// clipboard, others move the cursor or retitle the window), the
// bidirectional marks, embeddings, overrides and isolates (U+202E shows
// "exe.txt" as "txt.exe"), the line and paragraph separators, and each
// byte that is not UTF-8. Each is written as strconv.Quote writes it
// between quotes (\x1b, \a, \u009b, \u202e, \xff). Everything else,
// quotes and backslashes included, is left as it is, so that normal text
// reads unchanged and escaping twice changes nothing more.
package peertext

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Line returns s with every character that could command a terminal
// escaped, newlines and tabs included: one line, whatever s holds.
func Line(s string) string { return escape(s, false) }

// Lines returns s escaped as Line does, but for newlines and tabs, which
// it keeps: for a traceback, or any text printed over several lines.
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

// JSON escapes, in JSON that encoding/json wrote, the characters Line
// escapes and encoding/json leaves raw (DEL, C1 controls, the
// bidirectional formatting characters) as \u escapes: the same JSON
// value, and nothing in it that commands a terminal. (encoding/json
// already escapes C0 controls and the line and paragraph separators, and
// replaces bytes that are not UTF-8.) Outside strings JSON holds ASCII
// alone, so only strings change. b is returned as it is when it needs
// nothing.
func JSON(b []byte) []byte {
	var out []byte
	last := 0
	for i := 0; i < len(b); {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		if r == 0x7f || size > 1 && mustEscape(r, size) {
			out = fmt.Appendf(append(out, b[last:i]...), `\u%04x`, r)
			last = i + size
		}
		i += size
	}
	if out == nil {
		return b
	}
	return append(out, b[last:]...)
}

// clean reports whether escape would return s unchanged.
func clean(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && !(keepLines && (c == '\n' || c == '\t')) || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, size) {
			return false
		}
		i += size
	}
	return true
}

func escape(s string, keepLines bool) string {
	if clean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, size) && !(keepLines && (r == '\n' || r == '\t')) {
			q := strconv.Quote(s[i : i+size])
			b.WriteString(q[1 : len(q)-1])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// mustEscape says whether the character r, size bytes of UTF-8 (a
// RuneError of one byte is a byte that is not UTF-8), is one Line
// escapes.
func mustEscape(r rune, size int) bool {
	switch {
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true // C0, DEL, C1: ESC, BEL, CSI ...
	case r == utf8.RuneError:
		return size == 1
	case r < 0x61c:
		return false
	}
	return isBidiOrSeparator(r)
}

// isBidiOrSeparator says whether r is a bidirectional formatting
// character, which can make a name read as another, or a line or
// paragraph separator.
func isBidiOrSeparator(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f: // ALM, LRM, RLM
		return true
	case r >= 0x2028 && r <= 0x202e: // LS, PS, LRE, RLE, PDF, LRO, RLO
		return true
	case r >= 0x2066 && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	}
	return false
}
