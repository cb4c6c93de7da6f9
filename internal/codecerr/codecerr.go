// Package codecerr formats the errors of the module's codecs the same way:
// the package, the class of the failure (a sentinel error for errors.Is),
// where in the input, what, and the underlying cause. The one exported
// error type, ndarray.Error, formats itself with these functions.
package codecerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
)

// The classes of failure that mean the same in every codec, so that one
// errors.Is works whichever package reported it. ndarray exports them
// (ndarray.ErrTruncated, ndarray.ErrTooLarge, ...) and says what each
// means; packages that cannot import ndarray use them from here.
var (
	ErrTruncated   = errors.New("truncated input")
	ErrTooLarge    = errors.New("too large")
	ErrTooDeep     = errors.New("nested too deep")
	ErrMalformed   = errors.New("malformed input")
	ErrNotArray    = errors.New("not an array")
	ErrNonstandard = errors.New("non-standard dtype")
)

// Closed returns a "used after Close" error with the given message (which
// names the package and what was closed, "yaq: client closed"). Every such
// error matches every other under errors.Is, net.ErrClosed (what a closed
// connection reports) and os.ErrClosed (what npybridge's closed files
// report): so errors.Is(err, net.ErrClosed) works whichever client or
// server was closed, and no package needs a sentinel of its own.
func Closed(msg string) error { return &closedError{msg} }

type closedError struct{ msg string }

func (e *closedError) Error() string { return e.msg }

// Is makes all closed errors one class.
func (e *closedError) Is(target error) bool {
	_, closed := target.(*closedError)
	return closed || target == os.ErrClosed || target == net.ErrClosed
}

// Format renders a failure as "PKG: CLASS at byte N: DETAIL: CAUSE", leaving
// out the offset when it is negative and the parts that are empty.
func Format(pkg string, class error, offset int64, detail string, cause error) string {
	return FormatOption(pkg, class, offset, detail, "", cause)
}

// FormatOption is Format with the option that decides what failed (a
// bound or a permission, "ReadOptions.MaxHeaderSize") after the detail, in
// parentheses: "PKG: CLASS at byte N: DETAIL (OPTION): CAUSE".
func FormatOption(pkg string, class error, offset int64, detail, option string, cause error) string {
	s := "error" // a zero *ndarray.Error's class
	if class != nil {
		s = class.Error()
	}
	if pkg != "" {
		s = pkg + ": " + s
	}
	if offset >= 0 {
		s += " at byte " + strconv.FormatInt(offset, 10)
	}
	if detail != "" {
		s += ": " + detail
	}
	if option != "" {
		s += " (" + option + ")"
	}
	if cause != nil {
		s += ": " + cause.Error()
	}
	return s
}

// Unwrap returns the class and the cause, when there is one, for an error
// type's Unwrap method: errors.Is then matches either.
func Unwrap(class, cause error) []error {
	var errs []error
	for _, err := range [...]error{class, cause} {
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// JSONExcerpt shows a decoded JSON value (a piece of a schema or a
// description) in an error: as JSON, cut to 80 characters, or by its Go
// type if it has no JSON form.
func JSONExcerpt(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%T", v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// Class returns a class of errors, for an error's Err, that is worded text
// and matches of under errors.Is: a package that words one of the shared
// classes its own way ("malformed payload" for an ext 110 object's
// ndarray.ErrMalformed) keeps its words and the one sentinel.
func Class(text string, of error) error { return &class{text, of} }

type class struct {
	text string
	of   error
}

func (c *class) Error() string { return c.text }
func (c *class) Unwrap() error { return c.of }
