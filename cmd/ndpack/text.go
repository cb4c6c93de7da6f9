package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/remote"
)

// escapeText returns s with every character that could command a terminal
// or disguise the text around it escaped as strconv.Quote writes it
// between quotes: C0 and C1 controls and DEL (\x1b, \a, \n, \u009b), the
// bidirectional marks, embeddings, overrides and isolates (\u202e,
// \u2066), the line and paragraph separators, and each byte that is not
// UTF-8 (\xff). Everything else, quotes and backslashes included, is left
// as it is, so that normal text reads unchanged. Every string a file, a
// server, a peer or the command line gave passes through it before it is
// printed for people; it is the last step of every one-line message
// (oneLine).
func escapeText(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if mustEscape(r, size) {
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
// RuneError of one byte is a byte that is not UTF-8), is one escapeText
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
// character, which can make a name read as another (U+202E shows
// "exe.txt" as "txt.exe"), or a line or paragraph separator.
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

// escapeJSON escapes, in JSON that encoding/json wrote, the characters
// escapeText escapes and encoding/json leaves raw (DEL, C1 controls, the
// bidirectional formatting characters) as \u escapes: the same JSON
// value, and nothing in it that commands a terminal. (encoding/json
// already escapes C0 controls and the line and paragraph separators,
// and replaces bytes that are not UTF-8.) Outside strings JSON holds
// ASCII alone, so only strings change.
func escapeJSON(b []byte) []byte {
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

// urlPattern finds what looks like a URL in a message: a scheme, "://",
// and what follows up to white space, a quote or an angle bracket.
var urlPattern = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s\"'`<>]+")

// redactURLs returns s with every URL in it that carries a user, a
// password, a query or a fragment (which may hold a signature) cut to the
// rest (remote.Redact): the safety net under the display names commands
// give their inputs, for a URL that reached a message some other way (an
// argument quoted by a library, a URL in an error of net/http). A URL
// that carries none of them is left as it is.
func redactURLs(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	return urlPattern.ReplaceAllStringFunc(s, func(u string) string {
		if !strings.ContainsAny(u, "@?#") {
			return u
		}
		// Punctuation that ends a sentence or a list is the message's.
		core := strings.TrimRight(u, ".,;:)]}")
		return remote.Redact(core) + u[len(core):]
	})
}
