package yaq

import (
	"bufio"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/ndpack/ndpack/internal/avrorpc"
	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/internal/yaqtoml"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
)

// Handler answers one message of a daemon's protocol. params holds the
// message's parameters in the order the protocol declares them, decoded as
// avro.Schema.Decode describes. The result is encoded with the message's
// response schema; an error, or a value that does not fit the schema, is
// answered as a yaq error, with the error's text. The context is cancelled
// when the daemon closes.
type Handler func(ctx context.Context, params []any) (any, error)

// Daemon serves a yaq protocol over Avro RPC, as yaqd-core daemons do: the
// handshake, one goroutine per connection, requests dispatched to Go
// handlers. The is-daemon trait's messages (id, busy, get_config,
// get_config_filepath, get_state, shutdown) are answered from its fields
// unless a handler is registered for them. Make it with NewDaemon (a
// Daemon made otherwise refuses to serve, with an error), and set its fields
// and handlers before Serve. Package yaq/kit builds daemons on it that
// answer yaq's traits as yaqd-core does.
type Daemon struct {
	// Name is the daemon's name, the table of its config file; id()
	// answers it with the protocol's name as kind.
	Name string
	// Make, Model and Serial complete id()'s answer; nil when unknown.
	Make, Model, Serial *string
	// Config and ConfigFile are what get_config (as TOML) and
	// get_config_filepath answer. The TOML is BurntSushi/toml's, keys
	// sorted and nil values left out; a value TOML cannot hold (a string
	// that is not UTF-8, nil in an array, nesting over 64 levels) is
	// answered as a yaq error naming its key.
	Config     map[string]any
	ConfigFile string
	// State, when set, gives what get_state answers (as TOML, as
	// get_config's).
	State func() map[string]any
	// Busy, when set, gives what busy answers; nil answers false.
	Busy func() bool
	// ReuseRequestBuffers lets each connection read a request's parameters
	// into the memory of the last request's, once that has been answered,
	// instead of fresh buffers: for daemons whose handlers keep no part of
	// a request (its arrays included) after returning, it saves allocating
	// and zeroing the size of every request.
	ReuseRequestBuffers bool
	// MaxSize bounds one frame, and one request's value, in bytes; 0
	// means ndarray.DefaultMaxSize (64 MiB). Over it, the connection is
	// closed before anything is allocated for it.
	MaxSize int64
	// MaxConnections caps the connections served at once; 0 means
	// 1024, or three quarters of the process's
	// soft open-file limit (RLIMIT_NOFILE) if that is less, and a negative
	// value means no cap. At the cap, the connection that has waited
	// longest between requests is closed to make room for the new one, so
	// that peers that shake hands and sit idle cannot lock clients out for
	// the idle timeout; yaqc, and a Client made by Dial, reconnect when they
	// find their idle connection closed. Only when every connection is
	// mid-request (a new one before its handshake included) or writing is
	// a new one accepted and closed at once, so that a flood of
	// connections can neither exhaust the process's descriptors nor fill
	// the listen backlog. Each burst of closings, and of refusals, is
	// logged in one line. (Whatever the cap, running out of descriptors
	// only pauses accepting: Serve retries, backing off from 5 ms to 1 s.)
	// Run sets it from the config key max_connections.
	MaxConnections int
	// IdleTimeout bounds how long a connection may wait between requests
	// (from an answer to the next request's first byte) before it is
	// closed; 0 means an hour, a negative value none.
	// yaqc finds its connection closed at its next call, reconnects and
	// repeats the call, and a Client made by Dial checks before its next
	// call and reconnects, so an idle client notices nothing. Run sets it
	// from the config key idle_timeout.
	IdleTimeout time.Duration
	// ReadTimeout bounds how long a request may take to arrive, from its
	// first byte to its last, and how long a new connection may take to
	// send its handshake (yaq clients shake hands as they connect), so that
	// a peer cannot hold a connection by trickling a request; 0 means
	// a minute, a negative value none. Run sets it
	// from the config key read_timeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds how long a peer that has stopped reading holds
	// its connection: once, with answers waiting for it, it has taken less
	// than 64 KiB of them (and not all it was sent) for WriteTimeout, the
	// connection closes; 0 means 20 s, a negative
	// value none. Slow links still receive large arrays whole, however long
	// they take. Without it, a peer that pipelines calls and never reads
	// makes the daemon hold megabytes of answers per connection in the
	// kernel's socket buffers for as long as it likes; with it, for 20 to
	// 22 s (on Linux, where the kernel says what the peer has
	// acknowledged; elsewhere the clock starts once those buffers are
	// full). On Linux, too, a peer that pipelines calls and reads just fast
	// enough has its next request read only once less than
	// 256 KiB of its answers is unacknowledged,
	// so that what is queued for it stays under that and one answer. Run
	// sets it from the config key write_timeout.
	WriteTimeout time.Duration
	// ErrorLog receives connection errors and handler panics; nil means the
	// log package's standard logger.
	ErrorLog *log.Logger

	proto *Protocol
	text  []byte
	hash  [16]byte
	// both and none are the handshake's answers, encoded once: frames
	// refer to them, never change them.
	both, none []byte
	handlers   map[string]Handler

	conns *connset.Set
}

// NewDaemon returns a daemon called name serving the protocol whose JSON
// text is protocol (an .avpr, as yaq daemons declare it); that text is what
// it serves in the handshake, and what its hash is taken of. Clients can
// call only the messages the protocol declares: yaq daemons' protocols
// declare their traits' messages too, as yaq-traits composes them, and the
// is-daemon ones need no handler.
// It fails as ParseProtocol does, with an error wrapping avro.ErrSchema.
func NewDaemon(name, protocol string) (*Daemon, error) {
	p, err := ParseProtocol(protocol)
	if err != nil {
		return nil, err
	}
	d := &Daemon{Name: name, proto: p, text: []byte(protocol), hash: md5.Sum([]byte(protocol)),
		handlers: map[string]Handler{}}
	d.both = avrorpc.HandshakeResponse{Match: avrorpc.MatchBoth}.Append(nil)
	d.none = avrorpc.HandshakeResponse{Match: avrorpc.MatchNone, ServerProtocol: &protocol, ServerHash: &d.hash}.Append(nil)
	d.conns = connset.New(func(format string, args ...any) { d.logf("yaq: %s: "+format, append([]any{d.Name}, args...)...) })
	return d, nil
}

// Protocol returns the protocol the daemon serves; nil for a Daemon not
// made by NewDaemon.
func (d *Daemon) Protocol() *Protocol {
	if d == nil {
		return nil
	}
	return d.proto
}

// errNotMade is what a Daemon not made by NewDaemon answers to Handle and
// Serve.
var errNotMade = errors.New("yaq: the Daemon was not made by NewDaemon, so it has no protocol")

// Handle registers h for method, which must be a message of the protocol,
// replacing any handler registered for it before. It fails with ErrNoMethod
// for a method the protocol does not declare.
func (d *Daemon) Handle(method string, h Handler) error {
	if d == nil || d.proto == nil {
		return errNotMade
	}
	if d.proto.Messages[method] == nil {
		return classed(ErrNoMethod, "yaq: the protocol %s has no message %q", d.proto.Name, method)
	}
	d.handlers[method] = h
	return nil
}

func (d *Daemon) logf(format string, args ...any) {
	if d.ErrorLog != nil {
		d.ErrorLog.Printf(format, args...)
	} else {
		log.Printf(format, args...)
	}
}

func (d *Daemon) maxFrame() int64 {
	if d.MaxSize > 0 {
		return d.MaxSize
	}
	return ndarray.DefaultMaxSize
}

// Serve accepts connections on l and serves each on its own goroutine until
// Close, under the daemon's connection limits. It returns net.ErrClosed
// after Close, or an accept error that does not pass by itself (such as
// the listener closed by someone else); running out of descriptors, buffers
// or memory only pauses accepting.
func (d *Daemon) Serve(l net.Listener) error {
	if d == nil || d.proto == nil {
		return errNotMade
	}
	lim := connset.Limits{MaxConns: d.MaxConnections, IdleTimeout: d.IdleTimeout,
		ReadTimeout: d.ReadTimeout, WriteTimeout: d.WriteTimeout}
	return d.conns.Serve(l, lim, d.serveConn, errClosed)
}

// Close stops the listeners, closes every connection, cancels the
// handlers' context and waits for the connections to end.
// Its error is always nil.
func (d *Daemon) Close() error {
	if d == nil || d.conns == nil {
		return nil
	}
	d.conns.Close()
	return nil
}

// Shutdown stops the daemon gracefully: it stops accepting, closes idle
// connections, lets each request in hand be answered, then closes as Close
// does. The shutdown message does this. If ctx ends first, the rest is
// closed at once and ctx.Err() returned.
// Its error is ctx.Err() when ctx ends first, else nil.
func (d *Daemon) Shutdown(ctx context.Context) error {
	if d == nil || d.conns == nil {
		return nil
	}
	return d.conns.Shutdown(ctx)
}

// Context returns a context that ends when the daemon closes: the one its
// handlers are called with, for work a daemon runs beside them.
func (d *Daemon) Context() context.Context {
	if d == nil || d.conns == nil {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	return d.conns.Context()
}

// serveConn answers one connection's requests until it closes or sends
// what cannot be read.
func (d *Daemon) serveConn(nc net.Conn) {
	conn := connset.Wrap(nc)
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	c := &daemonConn{d: d, conn: conn, in: avrorpc.NewFrameReader(br, avrorpc.ReaderOptions{MaxSize: d.maxFrame(), Peer: "client " + nc.RemoteAddr().String()})}
	for d.awaitRequest(conn, br, c.in, c.shaken) {
		method, failure, err := c.answer()
		if err != nil {
			return
		}
		if method == "shutdown" && failure == nil {
			// Requests other clients have in hand are answered first.
			go d.Shutdown(context.Background())
			return
		}
		if !conn.Busy(false) {
			return // Shutdown: this request was the last
		}
	}
}

// daemonConn is one connection's state between requests.
type daemonConn struct {
	d      *Daemon
	conn   *connset.Conn
	in     *avrorpc.FrameReader
	shaken bool
	out    avrorpc.FrameWriter
	pieces [][]byte // an answer's encoding, reused
	reuse  [][]byte // each parameter's memory, with ReuseRequestBuffers
}

// answer reads one request and sends its answer. It returns the method
// called and the handler's failure (a handshake's null answer counts as
// no method); err, already logged, ends the connection.
func (c *daemonConn) answer() (method string, failure error, err error) {
	c.out.Reset()
	forceNull := false
	if !c.shaken {
		hr, err := c.in.ReadHandshakeRequest()
		if err != nil {
			return "", nil, c.fail(err)
		}
		// As yaqd-core: BOTH once the client sends a protocol and expects
		// this one; else NONE with the protocol, and the call that came
		// with the handshake answered null.
		if hr.ClientProtocol != nil && hr.ServerHash == c.d.hash {
			c.shaken = true
			c.out.Add(c.d.both)
		} else {
			c.out.Add(c.d.none)
			forceNull = true
		}
	}
	meta, err := c.in.CappedValue(metaSchema, maxMetaSize, "meta map")
	if err != nil {
		return "", nil, c.fail(err)
	}
	// Echoed in the answer; encoded now, before meta's bytes are read over.
	metaBytes := emptyMeta
	if len(meta.(map[string]any)) > 0 {
		metaBytes, _ = metaSchema.Append(nil, meta)
	}
	c.out.Add(metaBytes)
	name, err := c.in.SmallValue(stringSchema)
	if err != nil {
		return "", nil, c.fail(err)
	}
	method = name.(string)
	msg := c.d.proto.Messages[method]
	params, err := c.params(msg)
	if err != nil {
		return "", nil, c.fail(err)
	}
	c.conn.Busy(true)
	var value [][]byte
	switch {
	case forceNull || method == "":
		// A handshake's request, or a no-op: a null answer.
		method = ""
	case msg == nil:
		failure = fmt.Errorf("KeyError('%s')", method)
	default:
		var result any
		result, failure = c.d.call(method, params)
		if failure == nil {
			if value, failure = msg.Response.AppendPieces(c.pieces[:0], result); failure != nil {
				failure = fmt.Errorf("the answer does not fit the protocol: %w", failure)
			}
		}
	}
	if failure != nil {
		e, _ := errorsOf(msg).Append(nil, failure.Error())
		c.out.Add(flagError)
		c.out.Add(e)
	} else {
		c.out.Add(flagOK)
		c.out.Add(value...)
	}
	c.out.Add() // the terminator
	err = c.out.Send(c.conn)
	c.pieces = value[:0]
	clear(value)
	if err != nil {
		var te *connset.TimeoutError
		if errors.As(err, &te) { // else the peer is gone: nothing to say
			c.d.connError(c.conn, err)
		}
		return "", nil, err
	}
	return method, failure, nil
}

// params reads a request's parameters as msg declares them, into the
// memory of the last request's with ReuseRequestBuffers.
func (c *daemonConn) params(msg *avro.Message) ([]any, error) {
	if msg == nil {
		return nil, nil
	}
	var params []any
	for i, f := range msg.Request {
		if c.d.ReuseRequestBuffers {
			var mem []byte // the last request was answered: its memory is free
			if i < len(c.reuse) {
				mem = c.reuse[i]
			}
			c.in.Lend(mem)
		}
		p, err := c.in.Value(f.Type)
		if c.d.ReuseRequestBuffers {
			if mem := c.in.Lent(); mem != nil {
				for len(c.reuse) <= i {
					c.reuse = append(c.reuse, nil)
				}
				c.reuse[i] = mem
			}
		}
		if err != nil {
			return nil, err
		}
		params = append(params, p)
	}
	return params, nil
}

// fail logs why the connection ends and returns err.
func (c *daemonConn) fail(err error) error {
	c.d.connError(c.conn, err)
	return err
}

// The flag frames of an answer.
var flagOK, flagError = []byte{0x00}, []byte{0x01}

// stringErrors is the union an error answer to a message the protocol
// does not declare is encoded with.
var stringErrors = mustSchema(`["string"]`)

// errorsOf is the union an error answer to m is encoded with.
func errorsOf(m *avro.Message) *avro.Schema {
	if m == nil || m.Errors == nil {
		return stringErrors
	}
	return m.Errors
}

// awaitRequest waits until the next request begins and starts its read
// timeout. Between requests the peer may take IdleTimeout; a connection
// that has not shaken hands is due to at once, as yaq clients shake hands
// as they connect. The empty frame that ends a request is not the next one:
// yaqc sends it in a write of its own, which may arrive after the request
// has been answered. It reports false when the connection is to close.
func (d *Daemon) awaitRequest(conn *connset.Conn, br *bufio.Reader, in *avrorpc.FrameReader, shaken bool) bool {
	for shaken && in.Pending() == 0 {
		conn.Idle()
		if _, err := br.Peek(1); err != nil {
			d.connError(conn, err)
			return false
		}
		conn.Request()
		skipped, err := in.SkipEmptyFrame()
		if err != nil {
			d.connError(conn, err)
			return false
		}
		if !skipped {
			return true
		}
	}
	if !shaken && in.Pending() == 0 {
		// Until its handshake begins, a new connection may be closed to
		// make room at the connection limit.
		conn.Greet()
		if _, err := br.Peek(1); err != nil {
			d.connError(conn, err)
			return false
		}
	}
	conn.Request()
	return true
}

// connError logs why a connection ends, unless it ended as connections do:
// the peer hung up, the daemon closed it, or it was idle too long. Timeouts
// come in bursts (every peer of an attack at once) and are logged at most
// once a second.
func (d *Daemon) connError(conn net.Conn, err error) {
	if err := d.conns.Ended(conn, err); err != nil {
		d.logf("yaq: %s: %s: %v; closing the connection", d.Name, conn.RemoteAddr(), err)
	}
}

// call runs a handler, or a built-in is-daemon message; a panic is
// answered as an error, not a crash.
func (d *Daemon) call(method string, params []any) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			d.logf("yaq: %s: handler %q panicked: %v", d.Name, method, r)
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	if h := d.handlers[method]; h != nil {
		return h(d.conns.Context(), params)
	}
	switch method {
	case "id":
		return map[string]any{"name": d.Name, "kind": d.proto.Name, "make": strOrNil(d.Make),
			"model": strOrNil(d.Model), "serial": strOrNil(d.Serial)}, nil
	case "busy":
		return d.Busy != nil && d.Busy(), nil
	case "get_config":
		return tomlText("config", d.Config)
	case "get_config_filepath":
		return d.ConfigFile, nil
	case "get_state":
		if d.State == nil {
			return "", nil
		}
		return tomlText("state", d.State())
	case "shutdown":
		return nil, nil
	}
	return nil, fmt.Errorf("NotImplementedError('%s')", method)
}

// tomlText is get_config's or get_state's answer.
func tomlText(what string, m map[string]any) (any, error) {
	text, err := yaqtoml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("the %s cannot be written as TOML: %w", what, err)
	}
	return string(text), nil
}

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
