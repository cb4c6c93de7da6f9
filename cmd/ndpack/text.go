package main

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/ndarray"
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

// dtypeWidth bounds, in characters, a dtype named in a line a person
// reads (show's and diff's reports): a record of thousands of fields is
// tens of kilobytes of text, which numpy prints on one line.
const dtypeWidth = 200

// shortDType is dt's text (numpy's str of the dtype) cut at dtypeWidth
// characters, saying how many fields the whole record has when cut.
func shortDType(dt ndarray.DType) string {
	s := dt.String()
	if cut := cutDTypeText(s); cut != s {
		return cut + fmt.Sprintf(" (%d fields, %d bytes each)", dt.NumFields(), dt.ItemSize)
	}
	return s
}

// cutDTypeText is a dtype's text cut at dtypeWidth characters, ending in
// "..." when cut.
func cutDTypeText(s string) string {
	if utf8.RuneCountInString(s) <= dtypeWidth {
		return s
	}
	return string([]rune(s)[:dtypeWidth-3]) + "..."
}
