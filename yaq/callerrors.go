package yaq

import (
	"errors"
	"fmt"
)

// Sentinels for calls that cannot be made or answered as asked, beside the
// codec's value errors (ndarray.Error): a caller can act on each (fix the
// method name or the parameters, pass another result type, reconnect to
// another daemon).
var (
	// ErrNoMethod: a call or handler names a message the protocol does
	// not have.
	ErrNoMethod = errors.New("no such method")
	// ErrParams: a call passes more parameters than the message takes, or
	// fewer without defaults for the rest; or a handler asks ParamAs for a
	// parameter that is missing or does not fit the type it asks for.
	ErrParams = errors.New("wrong number of parameters")
	// ErrResult: the answer cannot be stored in the result given to Call
	// without changing it (300 in a uint8), or the result is not a
	// non-nil pointer.
	ErrResult = errors.New("result does not fit the answer")
	// ErrHandshake: the daemon's handshake gave no usable protocol (none
	// sent, a hash that does not match it, a protocol that does not parse
	// or that the daemon then refused).
	ErrHandshake = errors.New("handshake failed")
	// ErrRemote: the daemon answered the call with an error (a
	// *RemoteError, whose Message is its text); the connection is fine.
	// A broken connection matches io.EOF, net errors or net.ErrClosed instead.
	ErrRemote = errors.New("the daemon answered with an error")
)

// Is makes a daemon's error answer match ErrRemote.
func (e *RemoteError) Is(target error) bool { return target == ErrRemote }

// classedError is an error with its own message that errors.Is matches to
// its class (one of the sentinels above) and to any error it wraps.
type classedError struct {
	class error
	err   error
}

func (e *classedError) Error() string   { return e.err.Error() }
func (e *classedError) Unwrap() []error { return []error{e.class, e.err} }

// classed formats an error as fmt.Errorf does and makes it match class.
func classed(class error, format string, args ...any) error {
	return &classedError{class: class, err: fmt.Errorf(format, args...)}
}
