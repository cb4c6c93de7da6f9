package codecerr

import (
	"strconv"
	"strings"
)

// Count returns n and a noun, singular for one and plural otherwise, for
// the messages of errors: "1 item", "3 items", "1 entry", "0 entries".
// The noun is given in the singular; its plural adds "s" (or "es" after
// s, x, ch and sh; "ies" for a "y" after a consonant).
func Count[N ~int | ~int64 | ~uint64](n N, noun string) string {
	s := strconv.FormatInt(int64(n), 10)
	if uint64(n) > 1<<63-1 && n > 0 {
		s = strconv.FormatUint(uint64(n), 10)
	}
	if n == 1 {
		return s + " " + noun
	}
	return s + " " + Plural(noun)
}

// Plural returns the plural of an English noun as Count makes it.
func Plural(noun string) string {
	switch {
	case strings.HasSuffix(noun, "s"), strings.HasSuffix(noun, "x"),
		strings.HasSuffix(noun, "ch"), strings.HasSuffix(noun, "sh"):
		return noun + "es"
	case len(noun) > 1 && noun[len(noun)-1] == 'y' && !strings.ContainsRune("aeiou", rune(noun[len(noun)-2])):
		return noun[:len(noun)-1] + "ies"
	}
	return noun + "s"
}

// Remain returns what is left of the input, with its verb: "1 byte
// remains", "0 bytes remain"; with no noun, "1 remains", "3 remain".
func Remain[N ~int | ~int64 | ~uint64](n N, noun string) string {
	s := Count(n, noun)
	if noun == "" {
		s = strings.TrimSuffix(strings.TrimSuffix(s, "s"), " ")
	}
	if n == 1 {
		return s + " remains"
	}
	return s + " remain"
}
