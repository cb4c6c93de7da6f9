package openpi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors; every error of the package about a message or a
// connection wraps one of them (or io.EOF, for a peer that closed the
// connection), for errors.Is. The classes every codec reports are
// ndarray's: ndarray.ErrMalformed (a message is not what the protocol
// sends: not msgpack, not a map, a map key that is not a string, an ext
// type, an array map that does not hold a valid array, bytes after the
// map, or text where binary was expected), ErrTooDeep, ErrTooLarge,
// ErrTruncated.
var (
	// ErrNotWebsocket: the peer answered the handshake, but not as a
	// websocket server does (an HTTP status other than 101, or no HTTP).
	ErrNotWebsocket = errors.New("not a websocket server")
)

// errMalformed is ndarray.ErrMalformed as this package words it.
var errMalformed = codecerr.Class("malformed message", ndarray.ErrMalformed)

// msgError is a message that could not be decoded or encoded: its class
// (a sentinel), where in the message, what, and the cause.
type msgError struct {
	class  error
	offset int64
	detail string
	cause  error
}

// Error is one line, whatever the message held: what of the peer's text
// it quotes (a dtype, a key) is escaped.
func (e *msgError) Error() string {
	return peertext.Line(codecerr.Format("openpi", e.class, e.offset, e.detail, e.cause))
}

func (e *msgError) Unwrap() []error { return codecerr.Unwrap(e.class, e.cause) }

func errAt(class error, off int, format string, args ...any) error {
	return &msgError{class: class, offset: int64(off), detail: fmt.Sprintf(format, args...)}
}

// ServerError is a server's failure to answer: the text message an OpenPI
// server sends (Python's traceback.format_exc(), or a Go Policy's error)
// before it closes the connection with status 1011.
type ServerError struct {
	// Traceback is the text the server sent, as it sent it: escape it
	// before printing it (Error does), for a server's text may hold
	// terminal escape sequences.
	Traceback string
	// LastLine is the traceback's last line that is not blank (for a
	// Python traceback, the exception and its message), control
	// characters escaped: the error in one line. The client sets it;
	// where it is empty, Error takes it from Traceback.
	LastLine string
}

// newServerError is the ServerError of a server's text.
func newServerError(text string) *ServerError {
	return &ServerError{Traceback: text, LastLine: lastLine(text)}
}

// Error gives the traceback's last line (the exception) first, then the
// whole traceback on the lines after it, with control characters other
// than newlines and tabs escaped (\x1b) so that the server's text cannot
// drive the terminal that shows it.
func (e *ServerError) Error() string {
	last := e.LastLine
	if last == "" {
		last = lastLine(e.Traceback)
	}
	if t := strings.TrimSpace(e.Traceback); peertext.Line(t) == last || t == "" {
		return "openpi: server error: " + last
	}
	return "openpi: server error: " + last + "\n" + peertext.Lines(strings.TrimRight(e.Traceback, "\n"))
}

// lastLine returns the last line of text that is not blank, escaped.
func lastLine(text string) string {
	t := strings.TrimRight(text, " \t\r\n")
	if t == "" {
		return "(no message)"
	}
	return peertext.Line(strings.TrimSpace(t[strings.LastIndexByte(t, '\n')+1:]))
}

// escapedError is an error of another package whose text may quote a
// peer's (a close reason, a header): its text is escaped to one line.
type escapedError struct{ err error }

func (e escapedError) Error() string { return peertext.Line(e.err.Error()) }
func (e escapedError) Unwrap() error { return e.err }

// errNotDialed is what calls on a zero Client return.
var errNotDialed = errors.New("openpi: the Client is connected to nothing: make one with Dial")

// errClosed is what calls on a closed Client return. Like every "used
// after Close" error of the module it matches net.ErrClosed and
// os.ErrClosed under errors.Is.
var errClosed = codecerr.Closed("openpi: client closed")
