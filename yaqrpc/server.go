package yaqrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"time"

	"github.com/ndpack/ndpack/ndarray"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/internal/mpwalk"
)

// Request is a call as a Handler sees it.
type Request struct {
	Method string // the method called, as the client spelled it
	// Params holds positional parameters, Named named ones; at most one of
	// them is set.
	Params []any
	Named  map[string]any
	// ID is the request id (an integer or a string), nil for a
	// notification, whose result is discarded.
	ID any
}

// Param returns the parameter at position i, or the one called name when
// the parameters are named, and whether it is there.
func (r *Request) Param(i int, name string) (any, bool) {
	if r.Named != nil {
		v, ok := r.Named[name]
		return v, ok
	}
	if i < len(r.Params) {
		return r.Params[i], true
	}
	return nil, false
}

// ParamAs returns the parameter at position i (or called name) as a T. Any
// msgpack integer converts to any Go integer type that holds it, so handlers
// need not know which width the client chose. A missing or unconvertible
// parameter is an invalid-params *Error.
func ParamAs[T any](r *Request, i int, name string) (T, error) {
	var out T
	v, ok := r.Param(i, name)
	if !ok {
		return out, Errorf(CodeInvalidParams, "missing parameter %d (%q)", i, name)
	}
	if t, ok := v.(T); ok {
		return t, nil
	}
	// Re-decode through msgpack, which converts between numeric widths.
	b, err := msgpack.Marshal(v)
	if err == nil {
		err = msgpack.Unmarshal(b, &out)
	}
	if err != nil {
		return out, Errorf(CodeInvalidParams, "parameter %d (%q) is a %T, want %T", i, name, v, out)
	}
	return out, nil
}

// Handler answers one method. It returns the result, or an error: an *Error
// is sent as it is, anything else as an internal error. The context is
// cancelled when the server closes.
type Handler func(ctx context.Context, req *Request) (any, error)

// Server dispatches yaq-RPC requests to handlers. Set its fields and
// register handlers before calling Serve.
type Server struct {
	// MaxSize bounds one incoming message in bytes; 0 means
	// DefaultMaxSize. A larger message is answered with an
	// invalid-request error and its connection closed, before the server
	// allocates for it.
	MaxSize int64
	// MaxDepth bounds how deeply arrays and maps nest in one message; 0
	// means defaultMaxDepth. A deeper message is answered with an
	// invalid-request error and its connection closed: the msgpack
	// library recurses once per level, and without a bound a 2 MB message
	// overflows the stack and kills the daemon.
	MaxDepth int
	// DrainTimeout bounds how long, after answering a message it will not
	// read (too large, too deep, not msgpack), the server keeps reading and
	// discarding what the peer is still sending, so that the peer reads
	// the answer instead of a connection reset; 0 means 5 seconds.
	DrainTimeout time.Duration
	// ReuseRequestBuffers lets each connection read its next request into
	// the memory of the last, once that has been answered, instead of a
	// fresh buffer: for daemons whose handlers keep no part of a request
	// (its arrays included) after returning, it saves allocating and
	// zeroing the size of every request.
	ReuseRequestBuffers bool
	// MaxConnections caps the connections served at once; 0 means
	// 1024, or three quarters of the process's
	// soft open-file limit (RLIMIT_NOFILE) if that is less, and a negative
	// value means no cap. At the cap, the connection that has waited
	// longest between requests is closed to make room for the new one, so
	// that peers that connect and sit idle cannot lock clients out for the
	// idle timeout; a client made by Dial reconnects when it finds its idle
	// connection closed. Only when every connection is mid-request or
	// writing is a new one accepted and closed at once, so that a flood of
	// connections can neither exhaust the process's descriptors nor fill
	// the listen backlog. Each burst of closings, and of refusals, is
	// logged in one line. (Whatever the cap, running out of descriptors
	// only pauses accepting: Serve retries, backing off from 5 ms to 1 s.)
	MaxConnections int
	// IdleTimeout bounds how long a connection may wait between requests
	// (from an answer, or from being accepted, to the next request's first
	// byte) before it is closed; 0 means an hour, a
	// negative value none. A Client made by Dial notices, before its next
	// call, that the server closed its idle connection, and reconnects
	// without sending anything twice; a Client made by newClient on a
	// connection of the caller's cannot, and its next call fails.
	IdleTimeout time.Duration
	// ReadTimeout bounds how long a request may take to arrive, from its
	// first byte to its last, so that a peer cannot hold a connection (and
	// the memory of a half-read message) by trickling it; 0 means
	// a minute, a negative value none.
	ReadTimeout time.Duration
	// WriteTimeout bounds how long a peer that has stopped reading holds
	// its connection: once, with answers waiting for it, it has taken less
	// than 64 KiB of them (and not all it was sent) for WriteTimeout, the
	// connection closes; 0 means 20 s, a negative
	// value none. Slow links still receive large answers whole, however
	// long they take. Without it, a peer that pipelines requests and never
	// reads makes the server hold megabytes of answers per connection in
	// the kernel's socket buffers for as long as it likes; with it, for 20
	// to 22 s (on Linux, where the kernel says what the peer has
	// acknowledged; elsewhere the clock starts once those buffers are
	// full). On Linux, too, a peer that pipelines requests and reads just
	// fast enough has its next request read only once less than
	// 256 KiB of its answers is unacknowledged,
	// so that what is queued for it stays under that and one answer.
	WriteTimeout time.Duration
	// ErrorLog receives connection errors and handler panics; nil means
	// the log package's standard logger.
	ErrorLog *log.Logger

	mu       sync.RWMutex
	handlers map[string]Handler

	once  sync.Once
	conns *connset.Set
}

// ready makes what a Server needs on first use, so that its zero value
// works, as net/http's Server does.
func (s *Server) ready() *connset.Set {
	s.once.Do(func() {
		s.conns = connset.New(func(format string, args ...any) { s.logf("yaqrpc: "+format, args...) })
	})
	return s.conns
}

// Handle registers h for method, replacing any handler registered for it
// before; it may be called while the server runs. It fails for an empty
// method name or a nil handler, which no request could reach or be
// answered by.
func (s *Server) Handle(method string, h Handler) error {
	if method == "" || h == nil {
		return fmt.Errorf("yaqrpc: Handle(%q, %p): a handler needs a method name and a function", method, h)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handlers == nil {
		s.handlers = map[string]Handler{}
	}
	s.handlers[method] = h
	return nil
}

// Serve accepts connections on l and serves each on its own goroutine until
// Close, under the Server's connection limits. It returns net.ErrClosed
// after Close or Shutdown, or an accept error that does not pass by itself
// (such as the listener closed by someone else); running out of
// descriptors, buffers or memory only pauses accepting. It returns as soon
// as Shutdown begins: a program that ends when Serve returns must first
// wait for Shutdown to return, or the answers in hand (a shutdown method's
// own) may never be sent.
func (s *Server) Serve(l net.Listener) error {
	lim := connset.Limits{MaxConns: s.MaxConnections, IdleTimeout: s.IdleTimeout,
		ReadTimeout: s.ReadTimeout, WriteTimeout: s.WriteTimeout}
	return s.ready().Serve(l, lim, s.serveConn, errClosed)
}

// Close stops the listeners, closes every connection, cancels the
// handlers' context and waits for the connection goroutines to end. Its
// error is always nil; closing twice does nothing.
func (s *Server) Close() error {
	s.ready().Close()
	return nil
}

// Shutdown stops the server gracefully: it stops accepting, closes idle
// connections, lets each request in hand be answered, then closes as Close
// does. A handler may start it (in a goroutine) to stop the server once its
// own answer is sent, as a shutdown method does. If ctx ends first, the
// rest is closed at once and ctx.Err() returned. Otherwise its error is
// nil.
func (s *Server) Shutdown(ctx context.Context) error { return s.ready().Shutdown(ctx) }

func (s *Server) logf(format string, args ...any) {
	if s.ErrorLog != nil {
		s.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

func (s *Server) maxMessage() int64 {
	if s.MaxSize > 0 {
		return s.MaxSize
	}
	return ndarray.DefaultMaxSize
}

// serveConn reads requests one after another and answers each in order.
func (s *Server) serveConn(nc net.Conn) {
	conn := connset.Wrap(nc)
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	// A response is gathered as segments and sent with one writev: array
	// data goes out from where it lies, and the client is woken once per
	// response rather than once per buffer's worth.
	var out segments
	var wbufs net.Buffers // out's segments, as writev consumes them
	enc := msgpack.NewEncoder(&out)
	reply := func(v any) bool {
		out.reset()
		var err error
		switch r := v.(type) {
		case resultResponse:
			err = writeResponse(&out, enc, r.ID, r.Result, nil)
		case errorResponse:
			err = writeResponse(&out, enc, r.ID, nil, r.Error)
		default:
			err = enc.Encode(v)
		}
		if err != nil {
			s.logf("yaqrpc: %s: encoding a response: %v", conn.RemoteAddr(), err)
			return false
		}
		wbufs = out.buffers()
		if _, err = conn.WriteBuffers(&wbufs); err != nil {
			var te *connset.TimeoutError
			if errors.As(err, &te) { // else the peer is gone: nothing to say
				s.connError(conn, err)
			}
		}
		return err == nil
	}
	var last []byte // the last request's buffer, to reuse
	var chunks boundedio.Chunks
	for {
		// Between requests the peer may take its time; once one begins,
		// it must arrive whole within ReadTimeout.
		conn.Idle()
		if _, err := br.Peek(1); err != nil {
			s.connError(conn, err)
			return
		}
		conn.Request()
		raw, err := mpwalk.ReadInto(last, br, &chunks, s.maxMessage(), mpwalk.Limits{MaxDepth: s.maxDepth(), MaxExpansion: defaultMaxExpansion})
		if err != nil {
			// Without framing, a stream cannot be resynchronised after a
			// bad message: answer once if there is something to say, then
			// close.
			var answer *Error
			switch f := (mpwalk.Classes{}).Classify(err); f.Kind {
			case mpwalk.TooCostly, mpwalk.TooDeep:
				answer = Errorf(CodeInvalidRequest, "message refused: %s", f.Detail)
			case mpwalk.OverBudget:
				answer = Errorf(CodeInvalidRequest, "message exceeds the limit of %d bytes: %s", s.maxMessage(), f.Detail)
			case mpwalk.Invalid:
				answer = Errorf(CodeParseError, "not msgpack: %s", f.Detail)
			default:
				s.connError(conn, err)
			}
			if answer != nil {
				s.logf("yaqrpc: %s: answered %d and closing: %s", conn.RemoteAddr(), answer.Code, answer.Message)
				if reply(errorResponse{Version, nil, answer}) {
					s.drain(conn, br)
				}
			}
			return
		}
		conn.Busy(true)
		if resp := s.dispatch(raw); resp != nil && !reply(resp) {
			return
		}
		if !conn.Busy(false) {
			return // Shutdown: this request was the last
		}
		if s.ReuseRequestBuffers && cap(raw) <= int(s.maxMessage())+64<<10 {
			last = raw[:0] // answered: its arrays are no longer in use
		}
	}
}

// connError logs why a connection ends, unless it ended as connections do:
// the peer hung up, the server closed it, or it was idle too long. Timeouts
// come in bursts (every peer of an attack at once) and are logged at most
// once a second.
func (s *Server) connError(conn net.Conn, err error) {
	if err := s.conns.Ended(conn, err); err != nil {
		s.logf("yaqrpc: %s: %v", conn.RemoteAddr(), err)
	}
}

func (s *Server) maxDepth() int {
	if s.MaxDepth > 0 {
		return s.MaxDepth
	}
	return defaultMaxDepth
}

// drain is called after answering a message the server will not read. It
// closes the sending side, so the peer reads the answer and then the end of
// the stream, and reads and discards what the peer still sends, for at most
// DrainTimeout: closing a socket with unread bytes makes the kernel reset the
// connection, and the peer would lose the answer.
func (s *Server) drain(conn *connset.Conn, br *bufio.Reader) {
	conn.CloseWrite()
	d := s.DrainTimeout
	if d <= 0 {
		d = 5 * time.Second
	}
	conn.SetReadDeadline(time.Now().Add(d))
	io.Copy(io.Discard, br)
}

// dispatch answers one message; nil means no answer (a notification). raw
// is the message's own buffer: the arrays of the request alias it.
func (s *Server) dispatch(raw []byte) any {
	opts := ndpack.MessageOptions{MaxDepth: s.maxDepth(), MaxSize: s.maxMessage(), NoCopy: true, NoDialects: true}
	m, ok := parseRequest(raw, opts)
	if !ok {
		// Not the usual shape: decode it whole, and say what is wrong.
		var v any
		if err := opts.UnmarshalMessage(raw, &v); err != nil {
			return errorResponse{Version, nil, Errorf(CodeParseError, "cannot decode the message: %v", err)}
		}
		mm, isMap := v.(map[string]any)
		if !isMap {
			return errorResponse{Version, nil, Errorf(CodeInvalidRequest, "a request is a map, got %T", v)}
		}
		m = mm
	}
	id, hasID := m["id"]
	if hasID {
		if _, isInt := intID(id); !isInt {
			if _, isStr := id.(string); !isStr {
				return errorResponse{Version, nil, Errorf(CodeInvalidRequest, "id must be an integer or a string, got %T", id)}
			}
		}
	}
	bad := func(code int, format string, args ...any) any {
		if !hasID {
			return nil
		}
		return errorResponse{Version, id, Errorf(code, format, args...)}
	}
	if ver, _ := m["ver"].(string); ver != Version {
		return bad(CodeInvalidRequest, "ver must be %q, got %v", Version, m["ver"])
	}
	method, ok := m["method"].(string)
	if !ok {
		return bad(CodeInvalidRequest, "method must be a string, got %T", m["method"])
	}
	req := &Request{Method: method, ID: id}
	switch p := m["params"].(type) {
	case nil:
	case []any:
		req.Params = p
	case map[string]any:
		req.Named = p
	default:
		return bad(CodeInvalidRequest, "params must be an array or a map, got %T", p)
	}
	s.mu.RLock()
	h, ok := s.handlers[method]
	s.mu.RUnlock()
	if !ok {
		return bad(CodeMethodNotFound, "method %q not found", method)
	}
	result, err := s.call(h, req)
	if !hasID {
		return nil
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = Errorf(CodeInternalError, "%v", err)
		}
		return errorResponse{Version, id, e}
	}
	return resultResponse{Version, id, result}
}

// call runs a handler; a panic becomes an internal error, not a crash.
func (s *Server) call(h Handler, req *Request) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.logf("yaqrpc: handler %q panicked: %v", req.Method, r)
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return h(s.conns.Context(), req)
}
