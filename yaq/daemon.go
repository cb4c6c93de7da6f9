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
	"sync"

	"github.com/ndpack/ndpack/internal/boundedio"
)

// Handler answers one message of a daemon's protocol. params holds the
// message's parameters in the order the protocol declares them, decoded as
// Schema.Decode describes. The result is encoded with the message's
// response schema; an error, or a value that does not fit the schema, is
// answered as a yaq error, with the error's text. The context is cancelled
// when the daemon closes.
type Handler func(ctx context.Context, params []any) (any, error)

// ErrDaemonClosed is returned by Serve after Close.
var ErrDaemonClosed = errors.New("yaq: daemon closed")

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
	// MaxFrameSize bounds one frame, and one request's value, in bytes; 0
	// means DefaultMaxFrameSize. Over it, the connection is closed before
	// anything is allocated for it.
	MaxFrameSize int
	// ErrorLog receives connection errors and handler panics; nil means the
	// log package's standard logger.
	ErrorLog *log.Logger

	proto    *Protocol
	text     []byte
	hash     [16]byte
	handlers map[string]Handler

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[net.Conn]bool
	closed    bool
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
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
	ctx, cancel := context.WithCancel(context.Background())
	return &Daemon{Name: name, proto: p, text: []byte(protocol), hash: md5.Sum([]byte(protocol)),
		handlers: map[string]Handler{}, listeners: map[net.Listener]bool{}, conns: map[net.Conn]bool{},
		ctx: ctx, cancel: cancel}, nil
}

// Protocol returns the protocol the daemon serves.
func (d *Daemon) Protocol() *Protocol { return d.proto }

// Handle registers h for method, which must be a message of the protocol.
func (d *Daemon) Handle(method string, h Handler) error {
	if d.proto.Messages[method] == nil {
		return fmt.Errorf("yaq: the protocol %s has no message %q", d.proto.Name, method)
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
	if d.MaxFrameSize > 0 {
		return d.MaxFrameSize
	}
	return DefaultMaxFrameSize
}

// Serve accepts connections on l and serves each on its own goroutine until
// Close. It returns ErrDaemonClosed after Close, or the accept error.
func (d *Daemon) Serve(l net.Listener) error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return ErrDaemonClosed
	}
	d.listeners[l] = true
	d.mu.Unlock()
	for {
		conn, err := l.Accept()
		if err != nil {
			d.mu.Lock()
			closed := d.closed
			d.mu.Unlock()
			if closed {
				return ErrDaemonClosed
			}
			return err
		}
		d.mu.Lock()
		if d.closed {
			d.mu.Unlock()
			conn.Close()
			return ErrDaemonClosed
		}
		d.conns[conn] = true
		d.wg.Add(1)
		d.mu.Unlock()
		go func() {
			defer d.wg.Done()
			d.serveConn(conn)
			d.mu.Lock()
			delete(d.conns, conn)
			d.mu.Unlock()
		}()
	}
}

// Close stops the listeners, closes every connection, cancels the
// handlers' context and waits for the connections to end.
func (d *Daemon) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.cancel()
	for l := range d.listeners {
		l.Close()
	}
	for c := range d.conns {
		c.Close()
	}
	d.mu.Unlock()
	d.wg.Wait()
	return nil
}

// Done is closed when the daemon closes (after shutdown, say).
func (d *Daemon) Done() <-chan struct{} { return d.ctx.Done() }

// frames reads a peer's values with yaq's framing rules: empty frames before
// a value are skipped, a value may continue into the next frame, and what
// is left of a frame after a value is the start of the next.
type frames struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func (f *frames) value(s *Schema) (any, error) {
	if s.Type == "null" {
		return nil, nil
	}
	for {
		if len(f.buf) > 0 {
			v, n, err := s.Decode(f.buf)
			if err == nil {
				f.buf = f.buf[n:]
				return v, nil
			}
			if !errors.Is(err, ErrTruncated) {
				return nil, err
			}
		}
		var h [4]byte
		if _, err := io.ReadFull(f.br, h[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(h[:])
		if int64(n)+int64(len(f.buf)) > int64(f.max) {
			return nil, errAt(ErrMalformed, -1, "a frame of %d bytes, over the limit of %d", n, f.max)
		}
		// Memory grows as the frame arrives, not from its claimed length.
		frame, err := boundedio.ReadFull(f.br, int(n))
		if err != nil {
			return nil, err
		}
		if len(f.buf) == 0 {
			f.buf = frame // the common case: a value in a frame of its own
		} else {
			f.buf = append(f.buf, frame...)
		}
	}
}

// serveConn answers one connection's requests until it closes or sends
// what cannot be read.
func (d *Daemon) serveConn(conn net.Conn) {
	defer conn.Close()
	in := &frames{br: bufio.NewReaderSize(conn, 64<<10), max: d.maxFrame()}
	shaken := false
	for {
		var out [][]byte
		forceNull := false
		if !shaken {
			v, err := in.value(handshakeRequest)
			if err != nil {
				d.connError(conn, err)
				return
			}
			hr := v.(map[string]any)
			_, named := hr["clientProtocol"].(string)
			sh, _ := hr["serverHash"].([]byte)
			if named && bytes.Equal(sh, d.hash[:]) {
				shaken = true
				out = append(out, []byte{0x00, 0x00, 0x00, 0x00}) // BOTH
			} else {
				resp := append([]byte{0x04, 0x02}, appendVarint(nil, int64(len(d.text)))...)
				resp = append(append(resp, d.text...), 0x02)
				out = append(out, append(append(resp, d.hash[:]...), 0x00)) // NONE
				forceNull = true
			}
		}
		meta, err := in.value(metaSchema)
		if err != nil {
			d.connError(conn, err)
			return
		}
		name, err := in.value(stringSchema)
		if err != nil {
			d.connError(conn, err)
			return
		}
		method := name.(string)
		msg := d.proto.Messages[method]
		var params []any
		if msg != nil {
			for _, f := range msg.Request {
				p, err := in.value(f.Type)
				if err != nil {
					d.connError(conn, err)
					return
				}
				params = append(params, p)
			}
		}
		metaBytes, _ := metaSchema.Append(nil, meta)
		out = append(out, metaBytes)
		var value []byte
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
				if value, failure = msg.Response.Append(nil, result); failure != nil {
					failure = fmt.Errorf("the answer does not fit the protocol: %w", failure)
				}
			}
		}
		if failure != nil {
			e, _ := msg.errorsOrString().Append(nil, failure.Error())
			out = append(out, []byte{0x01}, e)
		} else {
			out = append(out, []byte{0x00}, value)
		}
		out = append(out, nil) // the terminator
		if err := writeFrames(conn, out); err != nil {
			return
		}
		if method == "shutdown" && failure == nil && !forceNull {
			go d.Close()
			return
		}
	}
}

// errorsOrString is the union an error answer is encoded with.
func (m *Message) errorsOrString() *Schema {
	if m == nil || m.Errors == nil {
		return &Schema{Type: "union", Branches: []*Schema{stringSchema}}
	}
	return m.Errors
}

func (d *Daemon) connError(conn net.Conn, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	d.logf("yaq: %s: %s: %v; closing the connection", d.Name, conn.RemoteAddr(), err)
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
		return h(d.ctx, params)
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

// writeFrames writes the frames of one message in one write (writev on a
// connection, so that array data is not copied), so that no frame header
// is split from its frame: the Python peers cannot read one that is.
func writeFrames(w io.Writer, payloads [][]byte) error {
	headers := make([]byte, 4*len(payloads))
	bufs := make(net.Buffers, 0, 2*len(payloads))
	for i, p := range payloads {
		h := headers[4*i : 4*i+4]
		binary.BigEndian.PutUint32(h, uint32(len(p)))
		bufs = append(bufs, h)
		if len(p) > 0 {
			bufs = append(bufs, p)
		}
	}
	_, err := bufs.WriteTo(w)
	return err
}
