package openpi

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/internal/membudget"
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
// Its error is f's, or for a nil f one saying it answers nothing.
func (f PolicyFunc) Infer(ctx context.Context, obs map[string]any) (map[string]any, error) {
	if f == nil {
		return nil, errNilPolicyFunc
	}
	return f(ctx, obs)
}

// errNilPolicyFunc is what the zero PolicyFunc answers.
var errNilPolicyFunc = errors.New("openpi: a nil PolicyFunc answers no observation")

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
//
// Unlike it too, a Server bounds what its peers can take: the memory of
// their messages together (MaxMemory), the connections (MaxConnections,
// under Serve), and the time a connection may wait, trickle a message or
// leave its answers unread (IdleTimeout, ReadTimeout, WriteTimeout); it
// pings connections that wait, as websockets does, and closes those that
// do not answer (PingInterval). For each limit, 0 means its default and a
// negative value none.
type Server struct {
	// Policy answers the observations (Echo sends each back).
	Policy Policy
	// Metadata is sent to each client when it connects; nil sends {}.
	Metadata map[string]any
	// MaxSize bounds each observation, in bytes; 0 means ndarray.DefaultMaxSize (64 MiB).
	// A larger one closes the connection with status 1009. An observation
	// whose Go values would take more than 8 times its size (and 1 MiB) is
	// refused too: arrays and byte strings alias the message, and only
	// lists, maps, strings and numbers count.
	MaxSize int64
	// MaxMemory bounds the memory all connections take at once for their
	// messages: observations as they are read, the Go values they decode
	// to, and the actions encoded to be sent. 0 means 4 times MaxSize
	// (256 MiB by default). A message that needs memory other connections
	// hold waits up to 5 s for them to give it back, and is then refused:
	// the client gets a text message saying so, and a close with status
	// 1013 (try again later). The last 64th of the budget is kept for
	// pieces of at most a 256th (1 MiB by default), so that large messages
	// cannot keep a robot's small observations waiting. A connection keeps
	// the memory of its last messages for the next for a second while it
	// waits, then gives it back.
	MaxMemory int64
	// MaxConnections caps the connections Serve serves at once; 0 means
	// 1024, or three quarters of the process's soft open-file limit
	// (RLIMIT_NOFILE) if that is less. At the cap, the connection that has
	// waited for an observation the longest (or, before its handshake,
	// since it connected) is closed to make room for the new one, so that
	// peers that connect and sit idle cannot lock robots out; only when
	// none waits is the new connection refused. Each burst of closings
	// and of refusals is logged in one line. Running out of descriptors
	// only pauses accepting: Serve retries, backing off from 5 ms to 1 s.
	MaxConnections int
	// IdleTimeout bounds how long a connection may wait for its next
	// observation before it is closed; 0 means an hour. openpi's clients,
	// and this package's, do not reconnect: their next call fails.
	IdleTimeout time.Duration
	// ReadTimeout bounds how long a handshake may take to arrive, and an
	// observation from its first byte to its last, so that a peer cannot
	// hold a connection (and the memory of a half-read message) by
	// trickling it; 0 means a minute.
	ReadTimeout time.Duration
	// WriteTimeout bounds how long a client that has stopped reading holds
	// its connection: once it has taken less than 64 KiB of an answer in
	// WriteTimeout (and not all of it), the connection closes; 0 means
	// 20 s. Slow links still receive large actions whole.
	WriteTimeout time.Duration
	// PingInterval is how often a connection that waits for an observation
	// is pinged, as openpi's server (websockets) pings every 20 s; a client
	// that has not answered a ping by the next is closed. 0 means 20 s.
	PingInterval time.Duration
	// ErrorLog receives connection and policy errors; nil means the log
	// package's standard logger. Timeouts that many peers cause at once
	// are logged at most once a second.
	ErrorLog *log.Logger

	once sync.Once
	mem  *membudget.Budget
}

// The defaults of Server's limits that connset does not set.
const (
	defaultPingInterval = 20 * time.Second
	memoryPerMaxSize    = 4
)

// keepBuffers is how long a connection waiting for its next observation
// keeps the memory of its last messages: a robot sends its next
// observation within it, and a connection that sits idle holds none of
// the server's memory budget.
var keepBuffers = time.Second

func (s *Server) maxSize() int64 {
	if s.MaxSize > 0 {
		return s.MaxSize
	}
	return ndarray.DefaultMaxSize
}

// budget returns the server's memory budget, made on first use.
func (s *Server) budget() *membudget.Budget {
	s.once.Do(func() {
		limit := s.MaxMemory
		if limit == 0 {
			limit = memoryPerMaxSize * min(s.maxSize(), math.MaxInt64/memoryPerMaxSize)
		}
		s.mem = &membudget.Budget{Limit: limit}
	})
	return s.mem
}

func (s *Server) limits() connset.Limits {
	return connset.Limits{MaxConns: s.MaxConnections, IdleTimeout: s.IdleTimeout,
		ReadTimeout: s.ReadTimeout, WriteTimeout: s.WriteTimeout}
}

// orDefault is d, def for 0, or none (0) for a negative d.
func orDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Serve accepts connections on l until ctx ends, then closes l and every
// connection, waits for their handlers to return and returns nil; or it
// returns the error of l's Accept that stopped it (running out of
// descriptors, buffers or memory only pauses accepting). A Server without
// a Policy returns an error at once, having closed l.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	if s.Policy == nil {
		l.Close()
		return errNoPolicy
	}
	set := connset.New(func(format string, args ...any) { s.logf("openpi: "+format, args...) })
	hl := &connListener{addr: l.Addr(), conns: make(chan net.Conn), closed: make(chan struct{})}
	hs := &http.Server{
		Handler:           s,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: orDefault(s.ReadTimeout, connset.DefaultReadTimeout),
		IdleTimeout:       orDefault(s.IdleTimeout, connset.DefaultIdleTimeout),
		ErrorLog:          s.ErrorLog,
	}
	go hs.Serve(hl)
	errc := make(chan error, 1)
	go func() {
		errc <- set.Serve(l, s.limits(), func(nc net.Conn) { hl.serve(set, nc.(*connset.Conn)) }, net.ErrClosed)
	}()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	hl.Close() // no connection waits for the HTTP server any more
	// Upgraded connections read with contexts derived from ctx: once it
	// ends, they close; Close closes the others, and waits for them all.
	set.Close()
	hs.Close()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("openpi: serving %s: %w", l.Addr(), err)
	}
	if err == nil {
		<-errc
	}
	return nil
}

// connListener hands the connections a connset.Set accepted to an
// http.Server.
type connListener struct {
	addr   net.Addr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func (l *connListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *connListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *connListener) Addr() net.Addr { return l.addr }

// serve hands c, which set accepted, to the HTTP server, and returns once
// that, or the websocket it became, has closed it.
func (l *connListener) serve(set *connset.Set, c *connset.Conn) {
	c.Greet() // a new connection may be closed for room, as an idle one
	sc := &servedConn{Conn: c, set: set, closed: make(chan struct{})}
	select {
	case l.conns <- sc:
	case <-l.closed:
		c.Close()
		return
	}
	<-sc.closed
}

// servedConn is a connection of Serve, as the HTTP server and the
// websocket see it.
type servedConn struct {
	*connset.Conn
	set    *connset.Set
	once   sync.Once
	closed chan struct{}
}

func (c *servedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { close(c.closed) })
	return err
}

// hijacker hands the websocket a connection whose reads and writes are
// bounded by the server's limits: Serve's own, or, for a connection of
// another HTTP server, one made here.
type hijacker struct {
	http.ResponseWriter
	lim  connset.Limits
	conn *connset.Conn
	set  *connset.Set // nil for another HTTP server's connection
}

func (h *hijacker) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if sc, ok := nc.(*servedConn); ok {
		h.conn, h.set = sc.Conn, sc.set
		return nc, brw, nil
	}
	h.conn = connset.Limited(nc, h.lim)
	return h.conn, bufio.NewReadWriter(brw.Reader, bufio.NewWriter(h.conn)), nil
}

func (h *hijacker) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// ServeHTTP answers GET /healthz with 200 "OK\n", and serves the policy
// on a websocket for any other path, as openpi's server does. A
// connection it serves has the Server's limits, but for MaxConnections,
// which only Serve can apply.
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
	hj := &hijacker{ResponseWriter: w, lim: s.limits()}
	ws, err := websocket.Accept(hj, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		s.logf("openpi: %s: %v", r.RemoteAddr, err)
		return
	}
	defer ws.CloseNow()
	c := &serverConn{s: s, ws: ws, nc: hj.conn, set: hj.set, peer: r.RemoteAddr, mem: membudget.Lease{B: s.budget()}}
	if err := c.run(r.Context()); err != nil {
		c.logf("%s: %v", r.RemoteAddr, err)
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
