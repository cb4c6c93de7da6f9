package openpi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/ndarray"
)

// Policy answers observations with actions, as openpi's BasePolicy.infer.
//
// obs holds what the client sent, decoded as Client.Infer decodes an
// action; its arrays and byte strings alias the connection's memory and
// are valid until Infer returns (clone what must be kept). The returned map is encoded
// after Infer returns and before the connection reads again, so it may
// hold obs's arrays (an echo); the server adds "server_timing" to what it
// sends without changing the map. An error is sent to the client as the
// text message openpi's server sends for an exception, and the connection
// is then closed with status 1011. Infer is called from one goroutine per
// connection, so a policy shared by several clients must be safe for
// concurrent use. ctx ends when the server stops.
type Policy interface {
	Infer(ctx context.Context, obs map[string]any) (map[string]any, error)
}

// PolicyFunc makes a function a Policy.
type PolicyFunc func(ctx context.Context, obs map[string]any) (map[string]any, error)

// Infer calls f.
// Its error is f's.
func (f PolicyFunc) Infer(ctx context.Context, obs map[string]any) (map[string]any, error) {
	return f(ctx, obs)
}

// Echo is a Policy that answers each observation with the observation
// itself: a stand-in policy for trying robots and clients (ndpack openpi
// serve --echo). A numpy scalar comes back as a 0-d array, as Infer and
// a Policy see one.
var Echo Policy = PolicyFunc(func(_ context.Context, obs map[string]any) (map[string]any, error) { return obs, nil })

// errNoPolicy is the error of a Server that has no Policy.
var errNoPolicy = errors.New("openpi: the Server has no Policy to answer with (openpi.Echo answers each observation with itself)")

// Server serves a Policy as openpi's WebsocketPolicyServer does: to each
// websocket connection it sends Metadata first, then answers each
// observation with the policy's action plus "server_timing" ({"infer_ms":
// ..., "prev_total_ms": ...} from the second call on); GET /healthz
// answers 200 "OK\n". It is an http.Handler, so it can also be mounted
// on a mux of one's own. It needs a Policy: a Server without one fails to
// Serve, and answers a websocket handshake with HTTP status 500, rather
// than drive a robot with a guess.
//
// Unlike websockets' server, a handshake that carries an Origin header
// naming another host than the request's is refused (403): robots send
// none, and a browser page elsewhere should not drive a robot's policy.
type Server struct {
	// Policy answers the observations (Echo sends each back).
	Policy Policy
	// Metadata is sent to each client when it connects; nil sends {}.
	Metadata map[string]any
	// MaxSize bounds each observation, in bytes; 0 means ndarray.DefaultMaxSize (64 MiB).
	// A larger one closes the connection with status 1009.
	MaxSize int64
	// ErrorLog receives connection and policy errors; nil means the log
	// package's standard logger.
	ErrorLog *log.Logger
}

// Serve accepts connections on l until ctx ends, then closes l and every
// connection, waits for their handlers to return and returns nil; or it
// returns the error of l's Accept that stopped it. A Server without a
// Policy returns an error at once, having closed l.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if s.Policy == nil {
		l.Close()
		return errNoPolicy
	}
	var (
		mu      sync.Mutex
		running int
		idle    = sync.NewCond(&mu)
	)
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			running++
			mu.Unlock()
			defer func() {
				mu.Lock()
				running--
				idle.Broadcast()
				mu.Unlock()
			}()
			s.ServeHTTP(w, r)
		}),
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          s.ErrorLog,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	hs.Close() // the listener and the connections not yet upgraded
	// Upgraded connections read with contexts derived from ctx: once it
	// ends, they close.
	if err != nil && ctx.Err() == nil {
		// l failed while ctx goes on: the handlers end with the server.
		return fmt.Errorf("openpi: serving %s: %w", l.Addr(), err)
	}
	mu.Lock()
	for running > 0 {
		idle.Wait()
	}
	mu.Unlock()
	if err == nil {
		<-errc
	}
	return nil
}

// ServeHTTP answers GET /healthz with 200 "OK\n", and serves the policy
// on a websocket for any other path, as openpi's server does.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/healthz" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "OK\n")
		return
	}
	if s.Policy == nil {
		s.logf("openpi: %s: %v", r.RemoteAddr, errNoPolicy)
		http.Error(w, errNoPolicy.Error(), http.StatusInternalServerError)
		return
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		s.logf("openpi: %s: %v", r.RemoteAddr, err)
		return
	}
	defer conn.CloseNow()
	if err := s.serveConn(r.Context(), conn); err != nil {
		s.logf("openpi: %s: %v", r.RemoteAddr, err)
	}
}

// logf logs a line, escaped: it may quote what a client sent.
func (s *Server) logf(format string, args ...any) {
	l := s.ErrorLog
	if l == nil {
		l = log.Default()
	}
	l.Print(peertext.Lines(fmt.Sprintf(format, args...)))
}

// internalErrorReason is the reason of openpi's close after a traceback.
const internalErrorReason = "Internal server error. Traceback included in previous frame."

// serveConn runs one connection: the metadata, then observations and
// actions until the client goes or something fails.
func (s *Server) serveConn(ctx context.Context, conn *websocket.Conn) error {
	maxSize := s.MaxSize
	if maxSize <= 0 {
		maxSize = ndarray.DefaultMaxSize
	}
	conn.SetReadLimit(maxSize)
	meta := s.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	out, err := appendMessage(nil, meta, "", nil)
	if err != nil {
		return s.refuse(ctx, conn, fmt.Errorf("the server's metadata: %w", err))
	}
	if err := conn.Write(ctx, websocket.MessageBinary, out); err != nil {
		return ended(err)
	}
	var (
		in        []byte
		prevTotal time.Duration
	)
	for calls := 0; ; calls++ {
		start := time.Now()
		typ, msg, err := readMessage(ctx, conn, in)
		in = msg[:0]
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				return fmt.Errorf("%w: an observation over the limit of %d bytes (MaxSize)", ndarray.ErrTooLarge, maxSize)
			}
			return ended(err)
		}
		if typ != websocket.MessageBinary {
			return s.refuse(ctx, conn, errAt(ErrMalformed, -1, "a text message where an observation (binary) was expected"))
		}
		obs, err := decodeMessage(msg)
		if err != nil {
			return s.refuse(ctx, conn, err)
		}
		t := time.Now()
		action, err := s.infer(ctx, obs)
		inferTime := time.Since(t)
		if err != nil {
			return s.refuse(ctx, conn, err)
		}
		timing := map[string]any{"infer_ms": ms(inferTime)}
		if calls > 0 {
			timing["prev_total_ms"] = ms(prevTotal)
		}
		if out, err = appendMessage(out[:0], action, "server_timing", timing); err != nil {
			return s.refuse(ctx, conn, err)
		}
		if err := conn.Write(ctx, websocket.MessageBinary, out); err != nil {
			return ended(err)
		}
		prevTotal = time.Since(start)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// infer calls the policy, turning a panic into an error that holds the
// stack (a traceback) and ends with the panic's value.
func (s *Server) infer(ctx context.Context, obs map[string]any) (action map[string]any, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("%s\npanic: %v", debug.Stack(), v)
		}
	}()
	return s.Policy.Infer(ctx, obs)
}

// refuse sends err's text as openpi's server sends a traceback, closes
// with status 1011, and returns err.
func (s *Server) refuse(ctx context.Context, conn *websocket.Conn, err error) error {
	if werr := conn.Write(ctx, websocket.MessageText, []byte(err.Error()+"\n")); werr == nil {
		conn.Close(websocket.StatusInternalError, internalErrorReason)
	}
	return err
}

// ended returns nil for a client that closed the connection as it
// should, else the error.
func ended(err error) error {
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway, websocket.StatusNoStatusRcvd:
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
