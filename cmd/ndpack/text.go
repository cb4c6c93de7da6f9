package main

import (
	"regexp"
	"strings"

	"github.com/ndpack/ndpack/remote"
)

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
