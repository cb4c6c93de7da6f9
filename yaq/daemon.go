package yaq

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"time"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/connset"
)

// Handler answers one message of a daemon's protocol. params holds the
// message's parameters in the order the protocol declares them, decoded as
// Schema.Decode describes. The result is encoded with the message's
// response schema; an error, or a value that does not fit the schema, is
// answered as a yaq error, with the error's text. The context is cancelled
// when the daemon closes.
type Handler func(ctx context.Context, params []any) (any, error)

// ErrDaemonClosed is returned by Serve after Close. It matches ErrClosed
// (and os.ErrClosed) under errors.Is.
var ErrDaemonClosed = codecerr.Closed("yaq: daemon closed")

// The defaults of a Daemon's connection limits: no yaq client in normal use
// meets them.
const (
	// DefaultMaxConnections caps the connections a daemon serves at once,
	// unless three quarters of the process's open-file limit is less.
	DefaultMaxConnections = connset.DefaultMaxConns
	// DefaultIdleTimeout bounds the wait for a connection's next request.
	DefaultIdleTimeout = connset.DefaultIdleTimeout
	// DefaultReadTimeout bounds the arrival of a request, from its first
	// byte to its last, and of a new connection's handshake.
	DefaultReadTimeout = connset.DefaultReadTimeout
	// DefaultWriteTimeout bounds how long a peer that has stopped reading
	// holds its connection.
	DefaultWriteTimeout = connset.DefaultWriteTimeout
)

// Daemon serves a yaq protocol over Avro RPC, as yaqd-core daemons do: the
// handshake, one goroutine per connection, requests dispatched to Go
// handlers. The is-daemon trait's messages (id, busy, get_config,
// get_config_filepath, get_state, shutdown) are answered from its fields
// unless a handler is registered for them. Set its fields and handlers
// before Serve.
type Daemon struct {
	// Name is the daemon's name, the table of its config file; id()
	// answers it with the protocol's name as kind.
	Name string
	// Make, Model and Serial complete id()'s answer; nil when unknown.
	Make, Model, Serial *string
	// Config and ConfigFile are what get_config (as TOML) and
	// get_config_filepath answer.
	Config     map[string]any
	ConfigFile string
	// State, when set, gives what get_state answers (as TOML).
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
	// means DefaultMaxSize. Over it, the connection is closed before
	// anything is allocated for it.
	MaxSize int
	// MaxFrameSize is MaxSize under the name it first had, honoured when
	// MaxSize is 0.
	//
	// Deprecated: use MaxSize, the name every package gives this limit.
	MaxFrameSize int
	// MaxConnections caps the connections served at once; 0 means
	// DefaultMaxConnections (1024), or three quarters of the process's
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
	// closed; 0 means DefaultIdleTimeout (an hour), a negative value none.
	// yaqc finds its connection closed at its next call, reconnects and
	// repeats the call, and a Client made by Dial checks before its next
	// call and reconnects, so an idle client notices nothing. Run sets it
	// from the config key idle_timeout.
	IdleTimeout time.Duration
	// ReadTimeout bounds how long a request may take to arrive, from its
	// first byte to its last, and how long a new connection may take to
	// send its handshake (yaq clients shake hands as they connect), so that
	// a peer cannot hold a connection by trickling a request; 0 means
	// DefaultReadTimeout (a minute), a negative value none. Run sets it
	// from the config key read_timeout.
	ReadTimeout time.Duration
	// WriteTimeout bounds how long a peer that has stopped reading holds
	// its connection: once, with answers waiting for it, it has taken less
	// than 64 KiB of them (and not all it was sent) for WriteTimeout, the
	// connection closes; 0 means DefaultWriteTimeout (20 s), a negative
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

	// What the traits' default answers of a daemon made by a Program need
	// from it; each is read only by the traits that use it, and left
	// unset, those answer as yaqd-core's base classes do.

	// Position drives has-position (and has-limits, is-discrete,
	// has-transformed-position).
	Position Positioner
	// Sensor describes an is-sensor daemon's channels, and measures for
	// has-measure-trigger.
	Sensor Sensor
	// TurretOptions answers get_turret_options (has-turret); SetTurret,
	// called with one of them after the daemon is made busy, moves the
	// turret and stores the state field "turret" (nil: stored at once).
	TurretOptions []string
	SetTurret     func(name string) error
	// Home homes the device (is-homeable).
	Home func(ctx context.Context) error
	// DependentHardware answers get_dependent_hardware (has-dependents).
	DependentHardware func() map[string]string
	// SerialWrite answers direct_serial_write (uses-serial).
	SerialWrite func(message []byte) error

	proto    *Protocol
	text     []byte
	hash     [16]byte
	handlers map[string]Handler
	// defaults answer the traits' messages no handler is registered for;
	// a Program sets them from the protocol's traits.
	defaults map[string]Handler
	kit      *kit

	conns *connset.Set
}

// NewDaemon returns a daemon called name serving the protocol whose JSON
// text is protocol (an .avpr, as yaq daemons declare it); that text is what
// it serves in the handshake, and what its hash is taken of. Clients can
// call only the messages the protocol declares: yaq daemons' protocols
// declare their traits' messages too, as yaq-traits composes them, and the
// is-daemon ones need no handler.
func NewDaemon(name, protocol string) (*Daemon, error) {
	p, err := ParseProtocol(protocol)
	if err != nil {
		return nil, err
	}
	d := &Daemon{Name: name, proto: p, text: []byte(protocol), hash: md5.Sum([]byte(protocol)),
		handlers: map[string]Handler{}}
	d.conns = connset.New(func(format string, args ...any) { d.logf("yaq: %s: "+format, append([]any{d.Name}, args...)...) })
	return d, nil
}

// Protocol returns the protocol the daemon serves.
func (d *Daemon) Protocol() *Protocol { return d.proto }

// Handle registers h for method, which must be a message of the protocol.
func (d *Daemon) Handle(method string, h Handler) error {
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

func (d *Daemon) maxFrame() int {
	switch {
	case d.MaxSize > 0:
		return d.MaxSize
	case d.MaxFrameSize > 0:
		return d.MaxFrameSize
	}
	return DefaultMaxSize
}

// Serve accepts connections on l and serves each on its own goroutine until
// Close, under the daemon's connection limits. It returns ErrDaemonClosed
// after Close, or an accept error that does not pass by itself (such as
// the listener closed by someone else); running out of descriptors, buffers
// or memory only pauses accepting.
func (d *Daemon) Serve(l net.Listener) error {
	lim := connset.Limits{MaxConns: d.MaxConnections, IdleTimeout: d.IdleTimeout,
		ReadTimeout: d.ReadTimeout, WriteTimeout: d.WriteTimeout}
	return d.conns.Serve(l, lim, d.serveConn, ErrDaemonClosed)
}

// Close stops the listeners, closes every connection, cancels the
// handlers' context and waits for the connections to end.
func (d *Daemon) Close() error {
	d.conns.Close()
	return nil
}

// Shutdown stops the daemon gracefully: it stops accepting, closes idle
// connections, lets each request in hand be answered, then closes as Close
// does. The shutdown message does this. If ctx ends first, the rest is
// closed at once and ctx.Err() returned.
func (d *Daemon) Shutdown(ctx context.Context) error { return d.conns.Shutdown(ctx) }

// Done is closed when the daemon closes (after shutdown, say).
func (d *Daemon) Done() <-chan struct{} { return d.conns.Context().Done() }

// serveConn answers one connection's requests until it closes or sends
// what cannot be read.
func (d *Daemon) serveConn(nc net.Conn) {
	conn := connset.Wrap(nc)
	defer conn.Close()
	br := bufio.NewReaderSize(conn, 64<<10)
	in := &frames{br: br, max: d.maxFrame(), peer: "client " + nc.RemoteAddr().String()}
	var reuse [][]byte // each parameter's memory, with ReuseRequestBuffers
	shaken := false
	var o outFrames
	var pieces [][]byte
	for {
		if !d.awaitRequest(conn, br, in, shaken) {
			return
		}
		o.reset()
		forceNull := false
		if !shaken {
			v, err := in.value(handshakeHead)
			if err == nil {
				err = in.skip(handshakeMeta) // neither used nor echoed: not built
			}
			if err != nil {
				d.connError(conn, err)
				return
			}
			hr := v.(map[string]any)
			_, named := hr["clientProtocol"].(string)
			sh, _ := hr["serverHash"].([]byte)
			if named && bytes.Equal(sh, d.hash[:]) {
				shaken = true
				o.frame([]byte{0x00, 0x00, 0x00, 0x00}) // BOTH
			} else {
				resp := append([]byte{0x04, 0x02}, appendVarint(nil, int64(len(d.text)))...)
				resp = append(append(resp, d.text...), 0x02)
				o.frame(append(append(resp, d.hash[:]...), 0x00)) // NONE
				forceNull = true
			}
		}
		meta, err := in.cappedValue(metaSchema, maxMetaSize, "meta map")
		if err != nil {
			d.connError(conn, err)
			return
		}
		// Echoed in the answer; encoded now, before meta's bytes are read
		// over.
		metaBytes := emptyMeta
		if len(meta.(map[string]any)) > 0 {
			metaBytes, _ = metaSchema.Append(nil, meta)
		}
		o.frame(metaBytes)
		name, err := in.smallValue(stringSchema)
		if err != nil {
			d.connError(conn, err)
			return
		}
		method := name.(string)
		msg := d.proto.Messages[method]
		var params []any
		if msg != nil {
			for i, f := range msg.Request {
				if d.ReuseRequestBuffers {
					var mem []byte // the last request was answered: its memory is free
					if i < len(reuse) {
						mem = reuse[i]
					}
					in.lend(mem)
				}
				p, err := in.value(f.Type)
				if d.ReuseRequestBuffers {
					if mem := in.lent(); mem != nil {
						for len(reuse) <= i {
							reuse = append(reuse, nil)
						}
						reuse[i] = mem
					}
				}
				if err != nil {
					d.connError(conn, err)
					return
				}
				params = append(params, p)
			}
		}
		conn.Busy(true)
		var value [][]byte
		var failure error
		switch {
		case forceNull || method == "":
			// A handshake's request, or a no-op: a null answer.
		case msg == nil:
			failure = fmt.Errorf("KeyError('%s')", method)
		default:
			var result any
			result, failure = d.call(method, params)
			if failure == nil {
				if value, failure = msg.Response.appendPieces(pieces[:0], result); failure != nil {
					failure = fmt.Errorf("the answer does not fit the protocol: %w", failure)
				}
			}
		}
		if failure != nil {
			e, _ := msg.errorsOrString().Append(nil, failure.Error())
			o.frame(flagError)
			o.frame(e)
		} else {
			o.frame(flagOK)
			o.frame(value...)
		}
		o.frame() // the terminator
		err = o.writeTo(conn)
		pieces = value[:0]
		clear(value)
		if err != nil {
			var te *connset.TimeoutError
			if errors.As(err, &te) { // else the peer is gone: nothing to say
				d.connError(conn, err)
			}
			return
		}
		if method == "shutdown" && failure == nil && !forceNull {
			// Requests other clients have in hand are answered first.
			go d.Shutdown(context.Background())
			return
		}
		if !conn.Busy(false) {
			return // Shutdown: this request was the last
		}
	}
}

// The flag frames of an answer.
var flagOK, flagError = []byte{0x00}, []byte{0x01}

// errorsOrString is the union an error answer is encoded with.
func (m *Message) errorsOrString() *Schema {
	if m == nil || m.Errors == nil {
		return &Schema{Type: "union", Branches: []*Schema{stringSchema}}
	}
	return m.Errors
}

// awaitRequest waits until the next request begins and starts its read
// timeout. Between requests the peer may take IdleTimeout; a connection
// that has not shaken hands is due to at once, as yaq clients shake hands
// as they connect. The empty frame that ends a request is not the next one:
// yaqc sends it in a write of its own, which may arrive after the request
// has been answered. It reports false when the connection is to close.
func (d *Daemon) awaitRequest(conn *connset.Conn, br *bufio.Reader, in *frames, shaken bool) bool {
	for shaken && len(in.buf) == 0 {
		conn.Idle()
		if _, err := br.Peek(1); err != nil {
			d.connError(conn, err)
			return false
		}
		conn.Request()
		h, err := br.Peek(4)
		if err != nil {
			d.connError(conn, err)
			return false
		}
		if binary.BigEndian.Uint32(h) != 0 {
			return true
		}
		br.Discard(4)
		in.read += 4 // for the stream offsets errors give
	}
	if !shaken && len(in.buf) == 0 {
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
	if h := d.defaults[method]; h != nil {
		return h(d.conns.Context(), params)
	}
	switch method {
	case "id":
		return map[string]any{"name": d.Name, "kind": d.proto.Name, "make": strOrNil(d.Make),
			"model": strOrNil(d.Model), "serial": strOrNil(d.Serial)}, nil
	case "busy":
		return d.Busy != nil && d.Busy(), nil
	case "get_config":
		return tomlText(d.Config), nil
	case "get_config_filepath":
		return d.ConfigFile, nil
	case "get_state":
		if d.State == nil {
			return "", nil
		}
		return tomlText(d.State()), nil
	case "shutdown":
		return nil, nil
	}
	return nil, fmt.Errorf("NotImplementedError('%s')", method)
}

func strOrNil(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// writeFrames writes payloads, one frame each, as outFrames does.
func writeFrames(w io.Writer, payloads [][]byte) error {
	var o outFrames
	for _, p := range payloads {
		o.frame(p)
	}
	return o.writeTo(w)
}

// outFrames holds the frames of one message for one vectored write (writev
// on a connection): the Python peers cannot read a frame whose header is
// split from it, and large array data goes out from the array itself. One
// outFrames serves a connection's messages one after another.
type outFrames struct {
	bufs      net.Buffers
	arena     []byte     // frame headers and small payloads
	arenaRoom [256]byte  // the arena, until it outgrows it
	bufRoom   [16][]byte // bufs, likewise
}

// reset empties o for the next message, letting go of what a message
// that was never written referred to.
func (o *outFrames) reset() {
	clear(o.bufRoom[:])
	o.arena, o.bufs = o.arenaRoom[:0], o.bufRoom[:0]
}

// frame adds a frame whose payload is the concatenation of pieces.
func (o *outFrames) frame(pieces ...[]byte) {
	if o.arena == nil {
		o.reset()
	}
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	// What bufs holds of the arena stays where it is, should the arena move.
	at := len(o.arena)
	o.arena = binary.BigEndian.AppendUint32(o.arena, uint32(n))
	o.bufs = append(o.bufs, o.arena[at:at+4:at+4])
	for _, p := range pieces {
		if len(p) > 0 {
			o.bufs = append(o.bufs, p)
		}
	}
}

// frameString adds a frame holding s as an Avro string.
func (o *outFrames) frameString(s string) {
	if o.arena == nil {
		o.reset()
	}
	at := len(o.arena)
	o.arena = binary.BigEndian.AppendUint32(o.arena, uint32(varintLen(int64(len(s)))+len(s)))
	o.arena = append(appendVarint(o.arena, int64(len(s))), s...)
	o.bufs = append(o.bufs, o.arena[at:len(o.arena):len(o.arena)])
}

// writeTo writes the frames and lets go of what they referred to. A
// daemon's connection writes them itself, under its write timeout; on
// another writer, net.Buffers uses writev where it can.
func (o *outFrames) writeTo(w io.Writer) error {
	var err error
	if bw, ok := w.(interface {
		WriteBuffers(*net.Buffers) (int64, error)
	}); ok {
		_, err = bw.WriteBuffers(&o.bufs)
	} else {
		_, err = o.bufs.WriteTo(w)
	}
	clear(o.bufRoom[:])
	o.bufs = nil
	return err
}
