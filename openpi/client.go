package openpi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/ndpack/ndpack/ndarray"
)

// DialOptions are the options of Dial; nil means the zero value.
type DialOptions struct {
	// APIKey, if not empty, is sent as "Authorization: Api-Key KEY", as
	// openpi's WebsocketClientPolicy sends its api_key.
	APIKey string
	// Header holds more headers for the handshake request.
	Header http.Header
	// MaxSize bounds each message read from the server, in bytes; 0 means
	// ndarray.DefaultMaxSize (64 MiB). A larger message fails with
	// ndarray.ErrTooLarge, and so does one whose Go values would take more
	// than 8 times its size and 1 MiB (arrays and byte strings alias the
	// message: only lists, maps, strings and numbers count).
	MaxSize int64
	// Wait makes Dial wait for a server that is not listening yet: while
	// the connection is refused it tries again (every second at most)
	// until ctx ends, as WebsocketClientPolicy waits for its server.
	Wait bool
}

// Client is a connection to an OpenPI policy server, made by Dial (the
// zero Client is connected to nothing: its calls fail). Its methods may be
// called from several goroutines; calls of Infer take turns, as the
// protocol answers one observation at a time. Between calls it answers
// the server's pings, which openpi's server sends every 20 s to
// connections that wait, closing those that do not answer.
type Client struct {
	url     string
	conn    *websocket.Conn
	meta    map[string]any
	maxSize int64

	mu   sync.Mutex // held through a call
	out  []byte     // the last observation's encoding, reused
	hint int        // the size of the last answer, for the next buffer
	err  error      // why the connection can no longer be used

	// The reader reads every message the server sends, so that its pings
	// are answered while no call waits (openpi's server closes a
	// connection that leaves them unanswered for 20 s): a call hands it
	// the memory to read the answer into (want), and waits for the answer
	// (got). dead ends it once the connection is no longer used.
	want     chan []byte
	got      chan answer
	dead     chan struct{}
	deadOnce sync.Once

	closeOnce sync.Once
	closed    chan struct{}
}

// answer is a message the reader read, or why it could not.
type answer struct {
	typ   websocket.MessageType
	msg   []byte
	asked bool // a call handed the reader its memory: the message answers it
	err   error
}

// Dial connects to the policy server at url ("ws://HOST:PORT",
// "wss://...", or "HOST:PORT" for ws://), and reads the metadata it sends
// first. ctx bounds the connection and that first message (and, with
// opts.Wait, the waiting).
// It fails with an error wrapping ErrNotWebsocket when the peer does not
// answer as a websocket server, ndarray.ErrMalformed, ndarray.ErrTooLarge or ndarray.ErrTruncated
// when the metadata message is not one openpi sends, io.EOF when the
// server closes first, a *ServerError when it sends a traceback instead,
// and with ctx's or the network's error (syscall.ECONNREFUSED, which
// opts.Wait waits out).
func Dial(ctx context.Context, url string, opts *DialOptions) (*Client, error) {
	var o DialOptions
	if opts != nil {
		o = *opts
	}
	if !strings.Contains(url, "://") {
		url = "ws://" + url
	}
	if o.MaxSize <= 0 {
		o.MaxSize = ndarray.DefaultMaxSize
	}
	header := o.Header.Clone()
	if o.APIKey != "" {
		if header == nil {
			header = http.Header{}
		}
		header.Set("Authorization", "Api-Key "+o.APIKey)
	}
	delay := 50 * time.Millisecond
	for {
		c, err := dial(ctx, url, header, o.MaxSize)
		if err == nil || !o.Wait || !errors.Is(err, syscall.ECONNREFUSED) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("openpi: %s: waiting for the server: %w (last: %w)", url, ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(2*delay, time.Second)
	}
}

func dial(ctx context.Context, url string, header http.Header, maxSize int64) (*Client, error) {
	conn, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{
		HTTPHeader:      header,
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		var op *net.OpError
		switch {
		case resp != nil:
			return nil, fmt.Errorf("openpi: %s: %w: the handshake was answered with HTTP status %q", url, ErrNotWebsocket, resp.Status)
		case ctx.Err() != nil, errors.As(err, &op) && op.Op == "dial":
			return nil, fmt.Errorf("openpi: %s: %w", url, err)
		}
		return nil, fmt.Errorf("openpi: %s: %w: %w", url, ErrNotWebsocket, escapedError{err})
	}
	conn.SetReadLimit(maxSize)
	c := &Client{url: url, conn: conn, maxSize: maxSize, closed: make(chan struct{}),
		want: make(chan []byte, 1), got: make(chan answer, 1), dead: make(chan struct{})}
	typ, r, err := conn.Reader(ctx)
	var msg []byte
	if err == nil {
		msg, err = readBody(ctx, r, nil, maxSize, nil, "")
	}
	if err == nil && typ == websocket.MessageText {
		err = newServerError(string(msg))
	}
	if err == nil {
		c.meta, err = decodeMessage(msg)
	}
	if err != nil {
		conn.CloseNow()
		return nil, c.connError("reading the server's metadata", err)
	}
	go c.reader()
	return c, nil
}

// reader reads the server's messages until the connection ends, each into
// the memory the call waiting for it handed over (see Client.want).
func (c *Client) reader() {
	for {
		// Without a deadline: only the connection's end ends the wait.
		typ, r, err := c.conn.Reader(context.Background())
		a := answer{typ: typ, err: err}
		if err == nil {
			var buf []byte
			select {
			case buf = <-c.want:
				a.asked = true
			default: // a message no call asked for: an error, read to say so
			}
			a.msg, a.err = readBody(context.Background(), r, buf, c.maxSize, nil, "")
		}
		select {
		case c.got <- a:
		case <-c.dead:
			return
		}
		if a.err != nil || !a.asked {
			return
		}
	}
}

// end says the connection is no longer used: the reader need not deliver
// what it reads.
func (c *Client) end() { c.deadOnce.Do(func() { close(c.dead) }) }

// Metadata returns the metadata the server sent when the client
// connected (an empty map for a server that has none). It is the
// client's: do not change it.
func (c *Client) Metadata() map[string]any { return c.meta }

// Infer sends one observation and returns the server's action.
//
// obs is a map as a Python robot builds its dict: *ndarray.Array values
// (sent as openpi's msgpack_numpy arrays), strings, numbers, bools, nil,
// []byte, []any and nested map[string]any; other Go values are sent as
// the root package's MarshalMessage writes them. The action holds the same
// kinds of values, decoded as msgpack_numpy.unpackb decodes them: arrays
// (and numpy scalars, as 0-d arrays) as *ndarray.Array, nested dicts as
// map[string]any, integers as int64, floats as float64 (float32 if sent so),
// lists as []any. An openpi server adds "server_timing".
//
// An error from the policy comes back as *ServerError, and the server then
// closes the connection: so does a ctx that ends during the call, as an
// answer can no longer be matched to its observation. After either, and
// after any failure of the connection, the client returns that error
// (wrapped) from every call.
func (c *Client) Infer(ctx context.Context, obs map[string]any) (map[string]any, error) {
	return c.infer(ctx, obs, nil)
}

// A ResultBuffer holds the memory of an answer for the next call made with
// it to read its answer into, so that a control loop fetching one action
// after another allocates (and zeroes) no memory the size of an action.
// The zero value is ready to use. A ResultBuffer serves one call at a time.
type ResultBuffer struct {
	msg []byte
}

// InferReusing is Infer with the answer read into buf's memory when it
// has the room (else into new memory, which buf keeps for the next call).
// The action's arrays and byte strings then alias buf: they are valid
// until the next call with buf, which overwrites them; clone what must
// outlive it. The observation's encoding reuses the client's memory in
// both.
// It fails as Infer does.
func (c *Client) InferReusing(ctx context.Context, obs map[string]any, buf *ResultBuffer) (map[string]any, error) {
	return c.infer(ctx, obs, buf)
}

func (c *Client) infer(ctx context.Context, obs map[string]any, buf *ResultBuffer) (map[string]any, error) {
	if c.conn == nil {
		return nil, errNotDialed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.closed:
		return nil, errClosed
	default:
	}
	if c.err != nil {
		return nil, fmt.Errorf("openpi: %s: the connection ended earlier: %w", c.url, c.err)
	}
	if obs == nil {
		obs = map[string]any{}
	}
	out, err := appendMessage(c.out[:0], obs, "", nil)
	if err != nil {
		return nil, err // nothing was sent: the connection is still good
	}
	c.out = out
	select {
	case a := <-c.got: // the connection ended, or the server spoke unasked
		return nil, c.fail("sending the observation", a.failure())
	default:
	}
	var into []byte
	if buf != nil {
		into = buf.msg
	} else {
		into = make([]byte, 0, c.hint)
	}
	c.want <- into // before the observation: the answer finds it there
	if err := c.conn.Write(ctx, websocket.MessageBinary, out); err != nil {
		return nil, c.fail("sending the observation", err)
	}
	var a answer
	select {
	case a = <-c.got:
	case <-ctx.Done():
		return nil, c.fail("reading the action", ctx.Err())
	}
	msg := a.msg
	if buf != nil && cap(msg) > cap(buf.msg) {
		buf.msg = msg[:0]
	}
	if err := a.failure(); err != nil {
		return nil, c.fail("reading the action", err)
	}
	if a.typ == websocket.MessageText {
		se := newServerError(string(msg))
		c.err = se
		c.end()
		// The server closes after its traceback: answer its close.
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		go func() { <-closeCtx.Done(); c.conn.CloseNow() }()
		c.conn.Close(websocket.StatusNormalClosure, "")
		return nil, se
	}
	c.hint = len(msg) + 512
	action, err := decodeMessage(msg)
	if err != nil {
		return nil, c.fail("decoding the action", fmt.Errorf("%s: %w", c.url, err))
	}
	return action, nil
}

// failure is the error of an answer: the reader's, or that no call
// asked for it.
func (a answer) failure() error {
	switch {
	case a.err != nil:
		return a.err
	case !a.asked && a.typ == websocket.MessageText:
		return newServerError(string(a.msg))
	case !a.asked:
		return errAt(errMalformed, -1, "the server sent a message of %d bytes that no observation asked for", len(a.msg))
	}
	return nil
}

// fail ends the connection after err, which every later call returns.
func (c *Client) fail(doing string, err error) error {
	select {
	case <-c.closed:
		return errClosed
	default:
	}
	err = c.connError(doing, err)
	c.err = err
	c.end()
	c.conn.CloseNow()
	return err
}

// connError describes a failure of the connection while doing something.
func (c *Client) connError(doing string, err error) error {
	var se *ServerError
	var me *msgError
	switch {
	case errors.As(err, &se):
		return err
	case errors.As(err, &me):
		return fmt.Errorf("openpi: %s: %s: %w", c.url, doing, err)
	case errors.Is(err, websocket.ErrMessageTooBig):
		return fmt.Errorf("openpi: %s: %s: %w: a message over the limit of %d bytes (MaxSize)", c.url, doing, ndarray.ErrTooLarge, c.maxSize)
	case websocket.CloseStatus(err) == websocket.StatusMessageTooBig:
		return fmt.Errorf("openpi: %s: the server refused a message over its size limit while the client was %s: %w: %w", c.url, doing, ndarray.ErrTooLarge, escapedError{err})
	case websocket.CloseStatus(err) != -1, errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("openpi: %s: the server closed the connection while the client was %s: %w: %w", c.url, doing, io.EOF, escapedError{err})
	}
	return fmt.Errorf("openpi: %s: %s: %w", c.url, doing, escapedError{err})
}

// Close closes the connection; calls then fail with net.ErrClosed. Closing a
// closed client does nothing.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	c.closeOnce.Do(func() {
		close(c.closed)
		c.end()
		done := make(chan struct{})
		go func() {
			// A server that does not answer the close in a second is left.
			select {
			case <-done:
			case <-time.After(time.Second):
				c.conn.CloseNow()
			}
		}()
		c.conn.Close(websocket.StatusNormalClosure, "")
		close(done)
	})
	return nil
}
