package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agnivade/levenshtein"
)

// suggest is the name among names that s most likely meant, or "": the
// only one that s begins (3 characters at least), else the nearest by
// edit distance (Levenshtein) when near enough to be a slip (1 edit in a
// name of up to 3 characters, 2 up to 8, 3 beyond) and nearer than any
// other.
func suggest(s string, names []string) string {
	if utf8.RuneCountInString(s) >= 3 {
		var prefixed []string
		for _, n := range names {
			if strings.HasPrefix(n, s) {
				prefixed = append(prefixed, n)
			}
		}
		if len(prefixed) == 1 {
			return prefixed[0]
		}
	}
	best, bestDist, tie := "", 0, false
	for _, n := range names {
		d := levenshtein.ComputeDistance(s, n)
		switch {
		case best == "" || d < bestDist:
			best, bestDist, tie = n, d, false
		case d == bestDist:
			tie = true
		}
	}
	allowed := 3
	switch l := utf8.RuneCountInString(best); {
	case l <= 3:
		allowed = 1
	case l <= 8:
		allowed = 2
	}
	if best == "" || tie || bestDist > allowed || bestDist == 0 {
		return ""
	}
	return best
}

// didYouMean is " (did you mean X?)" for the suggestion of s among
// names, with prefix before it (the flag's dashes), or "".
func didYouMean(s string, names []string, prefix string) string {
	if m := suggest(s, names); m != "" {
		return fmt.Sprintf(" (did you mean %s%s?)", prefix, m)
	}
	return ""
}

// commandNames are the words run takes first: the commands, help and
// version.
func commandNames() []string {
	names := []string{"help", "version"}
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return names
}

// unknownFlag adds to the error of a flag fs does not define the flag it
// most likely meant.
func unknownFlag(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return usageError("%v", err)
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	shown := "-" + name
	if len(shown) > maxArgQuote {
		shown = quoteArg(shown)
	}
	return usageError("flag provided but not defined: %s%s", shown, didYouMean(name, names, "--"))
}

// maxArgQuote bounds, in bytes, an argument a usage error quotes: past
// it an excerpt is quoted, and the argument's size.
const maxArgQuote = 80

// quoteArg is s quoted as strconv.Quote quotes it, or an excerpt of its
// first characters and its size when it is longer than maxArgQuote; a
// URL in it without its user, password, query or fragment (redactURLs).
func quoteArg(s string) string {
	s = redactURLs(s)
	if len(s) <= maxArgQuote {
		return strconv.Quote(s)
	}
	cut := s[:maxArgQuote-20]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	return fmt.Sprintf("%s... (%d bytes)", strconv.Quote(cut), len(s))
}

// boundArgs is msg with every argument of args longer than maxArgQuote
// that it holds, as given or quoted, replaced by its excerpt
// (quoteArg), and any word still longer than 4 times that cut: a usage
// error quotes at most a bounded excerpt of what it was given, however
// long.
func boundArgs(msg string, args []string) string {
	for _, a := range args {
		if len(a) <= maxArgQuote {
			continue
		}
		msg = strings.ReplaceAll(msg, strconv.Quote(a), quoteArg(a))
		bare := redactURLs(a)
		if len(bare) > maxArgQuote {
			bare = quoteArg(a)
		}
		msg = strings.ReplaceAll(msg, a, bare)
	}
	words := strings.Split(msg, " ")
	for i, w := range words {
		if len(w) > 4*maxArgQuote {
			words[i] = quoteArg(w)
		}
	}
	return strings.Join(words, " ")
}
