// Package jsonscan bounds JSON from outside before a decoder sees it: its
// size and how deep its arrays and objects nest. encoding/json allocates as
// it reads and recurses per level, so a document is held to both bounds
// first, by one linear scan that allocates nothing.
package jsonscan

import (
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Error is a bound a document broke: where, and what.
type Error struct {
	Offset int64  // the byte where the bound was passed
	Detail string // what passed it
	// TooLarge says the document is over its size bound (it matches
	// codecerr.ErrTooLarge); otherwise it nests too deep (it matches
	// codecerr.ErrTooDeep).
	TooLarge bool
}

func (e *Error) Error() string { return fmt.Sprintf("at byte %d: %s", e.Offset, e.Detail) }

// Is makes a size error match codecerr.ErrTooLarge (ndarray.ErrTooLarge)
// and a depth error codecerr.ErrTooDeep (ndarray.ErrTooDeep).
func (e *Error) Is(target error) bool {
	if e.TooLarge {
		return target == codecerr.ErrTooLarge
	}
	return target == codecerr.ErrTooDeep
}

// Check fails with an *Error when b is longer than maxSize bytes or its
// arrays and objects nest more than maxDepth deep. It reads strings as JSON
// does (a bracket inside one counts for nothing, a backslash escapes the
// next byte) and checks nothing else: the decoder that follows reports
// syntax.
func Check(b []byte, maxSize int64, maxDepth int) error {
	if int64(len(b)) > maxSize {
		return &Error{Offset: maxSize, Detail: fmt.Sprintf("%d bytes, more than the %d allowed", len(b), maxSize), TooLarge: true}
	}
	depth := 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			depth++
			if depth > maxDepth {
				return &Error{Offset: int64(i), Detail: fmt.Sprintf("arrays and objects nest more than %d deep", maxDepth)}
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
