package msgarrays

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/ndarray"
)

// Check checks that b holds one whole message that Decode can decode
// within the bounds a peer's message is held to, and returns the memory
// decoding it will take beyond b's own (Cost), allocating nothing for its
// values: every length within b (ErrTruncated), nesting within MaxDepth
// (ErrTooDeep), no bytes after the message (ErrMalformed), and what its
// values take within maxExpansion times its size plus slack
// (ErrTooLarge). It fails with an *Error, which the transport packages
// (openpi, gr00tpolicy) word as their own.
func (s Set) Check(b []byte, maxExpansion, slack int64) (int64, error) {
	// mpwalk's own estimate, for msgpack's decoder, is never the tighter
	// bound for what Decode allocates, but it ends the walk of a message
	// that is mostly tiny containers early.
	n, err := mpwalk.Len(b, mpwalk.Limits{MaxDepth: MaxDepth, MaxExpansion: mpwalk.DefaultMaxExpansion})
	if err != nil {
		f := walkClasses.Classify(err)
		return 0, &Error{Class: f.Class, Offset: int(f.Offset), Detail: f.Detail}
	}
	if n != len(b) {
		return 0, errAt(ndarray.ErrMalformed, n, "%s after the message", codecerr.Count(len(b)-n, "byte"))
	}
	limit := maxExpansion*int64(len(b)) + slack
	cost, err := s.Cost(b, limit)
	var e *Error
	if errors.Is(err, ndarray.ErrTooLarge) && errors.As(err, &e) {
		e.Detail = fmt.Sprintf("decoding the message of %d bytes would take more than %d bytes of memory, %d times its size and %d MiB: values that cost far more than their bytes (many empty lists or maps)",
			len(b), limit, maxExpansion, slack>>20)
	}
	return cost, err
}
