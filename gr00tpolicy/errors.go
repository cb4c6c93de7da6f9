package gr00tpolicy

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/ndarray"
)

// errMalformed is ndarray.ErrMalformed as this package words it: a
// message that is not as the wire has it (not msgpack, a request that is
// not a map, an answer not of its endpoint's shape, an array map that
// does not hold an .npy file).
var errMalformed = codecerr.Class("malformed message", ndarray.ErrMalformed)

// msgError is a message's failure: its class, where, and what.
type msgError struct {
	class  error
	offset int64
	detail string
	cause  error
}

// Error is one line, whatever the message held: what of the peer's text
// it quotes (a dtype, a key) is escaped.
func (e *msgError) Error() string {
	return peertext.Line(codecerr.Format("gr00tpolicy", e.class, e.offset, e.detail, e.cause))
}

func (e *msgError) Unwrap() []error { return codecerr.Unwrap(e.class, e.cause) }

func errAt(class error, off int, format string, args ...any) error {
	return &msgError{class: class, offset: int64(off), detail: fmt.Sprintf(format, args...)}
}

// ErrKilled is what Serve returns once it has answered a kill request.
var ErrKilled = errors.New("gr00tpolicy: the server was told to stop by a kill request")

// ServerError is a server's {"error": TEXT} answer: an unknown endpoint, a
// wrong API token, or the policy's failure, as GR00T's PolicyServer sends
// str(exception) and this package's Server a handler's error. The REQ
// socket stays usable: the next call is sent as usual.
type ServerError struct {
	// Endpoint is the endpoint called.
	Endpoint string
	// Text is the server's text as it sent it: escape it before printing
	// it (Error does), for a server's text may hold terminal escape
	// sequences.
	Text string
}

// Error is one line: the endpoint and the server's text, control
// characters escaped.
func (e *ServerError) Error() string {
	return "gr00tpolicy: " + peertext.Line(e.Endpoint) + ": server error: " + peertext.Line(e.Text)
}

// errNotDialed is what calls on a zero Client return.
var errNotDialed = errors.New("gr00tpolicy: the Client is connected to nothing: make one with Dial")

// errClosed is what calls on a closed Client return; it matches
// net.ErrClosed and os.ErrClosed.
var errClosed = codecerr.Closed("gr00tpolicy: client closed")

// errNoPolicy is what Serve returns for a Server without a Policy.
var errNoPolicy = errors.New("gr00tpolicy: the Server has no Policy to answer with (gr00tpolicy.Echo answers each observation with itself)")

// quote quotes a peer's text for an error: Go's quoting, which escapes
// control characters.
func quote(s string) string { return peertext.Quote(s) }

// kindOf names the kind of a decoded value, for errors.
func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case bool:
		return "a bool"
	case string:
		return "a string"
	case []byte:
		return "bytes"
	case []any:
		return "a list of " + strconv.Itoa(len(v))
	case map[string]any:
		return "a map"
	case float32, float64:
		return "a float"
	}
	if _, ok := asInt(v); ok {
		return "an integer"
	}
	return fmt.Sprintf("a %T", v)
}

// asInt reads an integer of any of the types msgpack decodes to.
func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int8:
		return int(n), true
	case int16:
		return int(n), true
	case int32:
		return int(n), true
	case int64:
		return int(n), int64(int(n)) == n
	case uint8:
		return int(n), true
	case uint16:
		return int(n), true
	case uint32:
		return int(n), int64(n) <= int64(^uint(0)>>1)
	case uint64:
		return int(n), n <= uint64(^uint(0)>>1)
	}
	return 0, false
}
