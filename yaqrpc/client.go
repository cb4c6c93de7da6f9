package yaqrpc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/ndpack/ndpack/ndarray"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/internal/mpwalk"
)

// replyChans recycles the channels of calls that have been answered.
var replyChans = sync.Pool{New: func() any { return make(chan *response, 1) }}

// errNotDialed is what the methods of a zero Client return.
var errNotDialed = errors.New("yaqrpc: the Client is connected to nothing: make one with Dial")

// notDialed reports whether c is a zero Client, which Dial did not make.
func (c *Client) notDialed() bool { return c.done == nil }

// errClosed is returned by calls on a closed Client, and by a Server's
// Serve after Close. It matches net.ErrClosed and os.ErrClosed under
// errors.Is.
var errClosed = codecerr.Closed("yaqrpc: closed")

// Client calls a yaq-RPC daemon over one connection, made by Dial (the
// zero Client is connected to nothing: its calls fail). Calls may be made
// from many goroutines at once; responses are matched to calls by id.
//
// There is no reading goroutine of its own: a call that waits for its
// response reads the connection itself when no other call is reading, as a
// plain request/response loop would, and hands the responses of other calls
// to them. That saves a goroutine switch on every call, which on loopback
// is as much as the round trip itself. When responses are due that no
// call waits for any more (their contexts ended), a drainer reads them, so
// that the daemon is never left blocked writing.
type Client struct {
	conn net.Conn
	max  int64
	br   *bufio.Reader

	wmu   sync.Mutex  // one request written at a time
	out   segments    // the request being written
	wbufs net.Buffers // its segments, as writev consumes them

	rmu    sync.Mutex       // held by whichever goroutine reads the connection
	chunks boundedio.Chunks // the reader's, for large responses

	mu          sync.Mutex
	next        int64
	pending     map[int64]chan *response // calls waiting for their response
	outstanding int                      // requests sent whose response has not been read
	waiting     int                      // calls waiting for the reader to let go
	idle        chan struct{}            // closed when the reader lets go
	err         error                    // set when the connection is done; fails later calls
	done        chan struct{}

	// redial connects again, for a client made by Dial; lastUsed is when
	// the connection last carried a request (under mu).
	redial   func(context.Context) (net.Conn, error)
	lastUsed time.Time
}

// DialOptions configure a Client. A nil *DialOptions is the zero value,
// the default.
type DialOptions struct {
	// MaxSize bounds one response in bytes; 0 means ndarray.DefaultMaxSize
	// (64 MiB). A larger one, or one nested deeper than 512 levels, ends
	// the connection with an error matching ndarray.ErrTooLarge (or
	// ErrTooDeep), before anything is allocated for it.
	MaxSize int64
}

// Dial connects to a daemon at addr ("host:port"). A client made by Dial
// reconnects when the daemon has closed the connection while no call was
// in progress (daemons close connections idle for long, see
// Server.IdleTimeout), before it sends the next request, so that no request
// is ever sent twice. It fails with the dialer's error as it is: a
// *net.OpError, which matches ctx.Err() under errors.Is when ctx ends
// first.
func Dial(ctx context.Context, addr string, o *DialOptions) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := newClient(conn, o)
	c.redial = func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	return c, nil
}

// newClient returns a Client using conn, which it does not redial.
func newClient(conn net.Conn, o *DialOptions) *Client {
	maxMessageSize := int64(ndarray.DefaultMaxSize)
	if o != nil && o.MaxSize > 0 {
		maxMessageSize = o.MaxSize
	}
	return &Client{conn: conn, max: maxMessageSize, br: bufio.NewReaderSize(conn, 64<<10),
		pending: map[int64]chan *response{}, idle: make(chan struct{}), done: make(chan struct{}),
		lastUsed: time.Now()}
}

// reconnectIfClosed replaces the connection when the daemon has closed it
// while nothing was in progress: no request being written, none read, none
// outstanding (see connset.PeerClosed). Any other state is left for the
// call to meet. If connecting again fails, that is the error, and the next
// call tries again.
func (c *Client) reconnectIfClosed(ctx context.Context) error {
	c.mu.Lock()
	due := c.redial != nil && c.err == nil && c.outstanding == 0 && time.Since(c.lastUsed) >= connset.ProbeIdleAfter
	c.mu.Unlock()
	if !due || !c.wmu.TryLock() {
		return nil
	}
	defer c.wmu.Unlock()
	if !c.rmu.TryLock() {
		return nil
	}
	defer c.rmu.Unlock()
	c.mu.Lock()
	quiet := c.outstanding == 0 && c.err == nil
	c.mu.Unlock()
	if !quiet {
		return nil
	}
	if !connset.PeerClosed(c.conn, c.br, nil) {
		return nil // alive, or something to read: the call will see it
	}
	conn, err := c.redial(ctx)
	if err != nil {
		// Nothing is sent on a connection known to be closed; the next
		// call tries again.
		return fmt.Errorf("yaqrpc: %s closed the idle connection, and connecting again failed: %w", c.conn.RemoteAddr(), err)
	}
	c.mu.Lock()
	if c.err != nil { // closed meanwhile
		c.mu.Unlock()
		conn.Close()
		return nil
	}
	old := c.conn
	c.conn = conn
	c.br.Reset(conn)
	c.lastUsed = time.Now()
	c.mu.Unlock()
	old.Close()
	return nil
}

// Call calls method with params (nil, a slice for positional parameters, a
// map or struct for named ones) and decodes the result into result (a
// pointer, or nil to discard it). A daemon's error comes back as *Error.
// When ctx ends first, Call returns ctx.Err(), the late response is
// dropped, and the client stays usable.
//
// Arrays in the result are the caller's to keep: each response is read into
// memory of its own. CallReusing reads responses into the same memory.
//
// A result that does not fit result fails with an error wrapping ndpack's
// decoding error (matching ndarray.ErrMalformed, for one), and the client
// stays usable. So does a client made by Dial that cannot connect again:
// the call fails with an error wrapping the dialer's, and the next tries
// again.
//
// Other failures end the client, and every later call fails with the same
// error: a connection that ends (the daemon hung up, which matches io.EOF;
// the network failed; a request write was cut part-way), a response over
// DialOptions.MaxSize or nested more than 512 levels deep, or bytes that
// are no response. The error says which, wrapping the net or io error
// where there is one, and matches none of the module's sentinels. A daemon
// that will not read a request (one over its size limit) answers with an
// *Error and closes: that *Error is then the call's and the later calls'
// error. After Close, calls fail with net.ErrClosed (which matches
// os.ErrClosed), unless the client had failed before.
func (c *Client) Call(ctx context.Context, method string, params any, result any) error {
	return c.call(ctx, method, params, result, nil)
}

// A ResultBuffer holds the memory of a response for the next call made with
// it to read its response into, so that a loop fetching one large array
// after another allocates (and zeroes) none of them. The zero value is
// ready to use. A ResultBuffer serves one call at a time.
type ResultBuffer struct {
	msg []byte
}

// CallReusing is Call with the response read into buf's memory when it has
// the room (else into new memory, which buf keeps for the next call). The
// result's arrays then alias buf: they are valid until the next call with
// buf, which overwrites them; clone what must outlive it. It fails as Call
// does.
func (c *Client) CallReusing(ctx context.Context, method string, params any, result any, buf *ResultBuffer) error {
	return c.call(ctx, method, params, result, buf)
}

func (c *Client) call(ctx context.Context, method string, params any, result any, buf *ResultBuffer) error {
	if c.notDialed() {
		return errNotDialed
	}
	if err := c.reconnectIfClosed(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.lastUsed = time.Now()
	c.next++
	id := c.next
	ch := replyChans.Get().(chan *response)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.send(ctx, request{Version, id, method, params}, true); err != nil {
		c.forget(id)
		if errors.Is(err, errEncoding) {
			return err // nothing was written: the client is as it was
		}
		// A daemon that refuses a request it will not read (too large)
		// answers and closes: its answer says more than the broken write.
		if cerr := c.closedErr(); cerr != nil {
			return cerr
		}
		if ctx.Err() == nil { // the write itself failed: the daemon may have said why
			if cerr := c.readRefusal(); cerr != nil {
				return cerr
			}
		}
		return err
	}
	var into []byte
	if buf != nil {
		into = buf.msg[:0]
	}
	resp, err := c.wait(ctx, id, ch, into)
	if err != nil {
		return err // ch may yet receive a late response: not reused
	}
	replyChans.Put(ch) // answered and empty: nothing else can send on it
	if buf != nil {
		buf.msg = resp.msg[:0] // where the result lies, for the next call
	}
	if resp.Error != nil {
		return resp.Error
	}
	if result == nil {
		return nil
	}
	raw := resp.Result
	if len(raw) == 0 {
		raw = []byte{0xc0} // a response without a result
	}
	// The result is a slice of its message's own buffer: its arrays
	// alias it instead of being copied again.
	opts := ndpack.MessageOptions{MaxDepth: defaultMaxDepth, MaxSize: c.max, NoCopy: true, NoDialects: true}
	if err := opts.UnmarshalMessage(raw, result); err != nil {
		return fmt.Errorf("yaqrpc: %s: decoding the result: %w", method, err)
	}
	return nil
}

// wait returns the response to call id: read by this goroutine when no
// other is reading, else handed over by the one that is.
// into, if not nil, is memory for the response to be read into.
func (c *Client) wait(ctx context.Context, id int64, ch chan *response, into []byte) (*response, error) {
	for {
		select {
		case resp := <-ch:
			return resp, nil
		case <-c.done:
			return nil, c.closedErr()
		default:
		}
		c.mu.Lock()
		idle := c.idle
		c.mu.Unlock()
		if c.rmu.TryLock() {
			resp, err := c.readUntil(ctx, id, into)
			into = nil // used once at most
			c.letGo()
			switch {
			case resp != nil:
				return resp, nil
			case err != nil && ctx.Err() != nil:
				c.forget(id)
				return nil, ctx.Err()
			case err != nil:
				return nil, err
			}
			continue // handed our response by ourselves: read it from ch
		}
		c.mu.Lock()
		c.waiting++
		c.mu.Unlock()
		select {
		case resp := <-ch:
			c.stopWaiting()
			return resp, nil
		case <-idle:
			c.stopWaiting()
		case <-ctx.Done():
			c.stopWaiting()
			c.forget(id)
			return nil, ctx.Err()
		case <-c.done:
			c.stopWaiting()
			return nil, c.closedErr()
		}
	}
}

func (c *Client) stopWaiting() {
	c.mu.Lock()
	c.waiting--
	c.mu.Unlock()
}

// letGo ends this goroutine's turn as the reader: waiting calls are woken to
// take over, and if responses are due that nobody waits for, a drainer
// reads them.
func (c *Client) letGo() {
	c.rmu.Unlock()
	c.mu.Lock()
	close(c.idle)
	c.idle = make(chan struct{})
	drain := c.outstanding > 0 && c.waiting == 0 && c.err == nil
	c.mu.Unlock()
	if drain {
		go c.drain()
	}
}

// drain reads responses nobody is reading while some are due.
func (c *Client) drain() {
	if !c.rmu.TryLock() {
		return // someone reads already
	}
	for {
		c.mu.Lock()
		stop := c.outstanding == 0 || c.waiting > 0 || c.err != nil
		c.mu.Unlock()
		if stop {
			break
		}
		if _, err := c.readOne(context.Background(), -1, nil); err != nil {
			break
		}
	}
	c.letGo()
}

// readUntil reads responses, handing each to its call, until the one for
// id, which it returns; or until ctx ends while no response is arriving.
func (c *Client) readUntil(ctx context.Context, id int64, into []byte) (*response, error) {
	for {
		c.mu.Lock()
		ch, mine := c.pending[id]
		c.mu.Unlock()
		if !mine || len(ch) > 0 {
			return nil, nil // already answered: the caller reads ch
		}
		resp, err := c.readOne(ctx, id, into)
		into = nil
		if resp != nil || err != nil {
			return resp, err
		}
	}
}

// readOne reads one response and delivers it: returned if it answers id,
// sent to its call otherwise. It stops for ctx only before a response has
// begun to arrive, so that the stream stays whole.
//
// into, if not nil, is memory the call for id lends for its response. The
// response read into it may turn out to be another call's: that call then
// owns the memory, and the lender, whose ResultBuffer takes the memory of
// its own response, never uses it again.
func (c *Client) readOne(ctx context.Context, id int64, into []byte) (*response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var err error
	if ctx.Done() == nil { // a context that never ends: nothing to watch
		_, err = c.br.Peek(1)
	} else {
		interrupted := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			c.conn.SetReadDeadline(time.Unix(1, 0))
			close(interrupted)
		})
		_, err = c.br.Peek(1)
		if !stop() {
			<-interrupted
			c.conn.SetReadDeadline(time.Time{})
			if err != nil && ctx.Err() != nil {
				return nil, ctx.Err()
			}
		}
	}
	if err != nil {
		c.fail(c.connError("waiting for a response", err))
		c.conn.Close()
		return nil, c.closedErr()
	}
	raw, err := mpwalk.ReadInto(into, c.br, &c.chunks, c.max, mpwalk.Limits{MaxDepth: defaultMaxDepth, MaxExpansion: defaultMaxExpansion})
	if err != nil {
		c.fail(c.connError("reading a response", err))
		c.conn.Close()
		return nil, c.closedErr()
	}
	resp, err := parseResponse(raw)
	if err != nil {
		c.fail(fmt.Errorf("yaqrpc: %s: undecodable response: %w", c.conn.RemoteAddr(), err))
		c.conn.Close()
		return nil, c.closedErr()
	}
	resp.msg = raw
	rid, ok := intID(resp.ID)
	if !ok {
		// Errors about unreadable requests carry no id; they cannot be
		// matched, and the daemon closes the connection after them.
		if resp.Error != nil {
			c.fail(resp.Error)
			c.conn.Close()
			return nil, resp.Error
		}
		return nil, nil
	}
	c.mu.Lock()
	ch := c.pending[rid]
	delete(c.pending, rid)
	c.outstanding--
	c.mu.Unlock()
	if rid == id {
		return resp, nil
	}
	if ch != nil {
		ch <- resp
	}
	return nil, nil
}

// connError says that the connection to the daemon ended while doing
// what, naming the daemon; an end of stream says the daemon closed it,
// rather than a bare "EOF".
func (c *Client) connError(doing string, err error) error {
	switch {
	case errors.Is(err, io.EOF):
		return fmt.Errorf("yaqrpc: %s: the daemon closed the connection while the client was %s: %w", c.conn.RemoteAddr(), doing, err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("yaqrpc: %s: the daemon closed the connection in the middle of a response: %w", c.conn.RemoteAddr(), err)
	}
	if class := overLimit(err); class != nil {
		err = classedError{class, err}
	}
	return fmt.Errorf("yaqrpc: %s: connection ended while %s: %w", c.conn.RemoteAddr(), doing, err)
}

// classedError is err, matching class under errors.Is too.
type classedError struct{ class, err error }

func (e classedError) Error() string   { return e.err.Error() }
func (e classedError) Unwrap() []error { return []error{e.class, e.err} }

// overLimit is the shared sentinel of a response past the client's
// limits, read by the bounded walk: ndarray.ErrTooDeep for nesting,
// ndarray.ErrTooLarge (the module's one ErrTooLarge) for size and the
// memory decoding would take; nil for other errors.
func overLimit(err error) error { return limitClasses.Classify(err).Class }

var limitClasses = mpwalk.Classes{TooDeep: ndarray.ErrTooDeep, OverBudget: ndarray.ErrTooLarge, TooCostly: ndarray.ErrTooLarge}

// readRefusal reads, after a request could not be written, the answer a
// daemon sends before closing (a request over its size limit).
func (c *Client) readRefusal() error {
	if !c.rmu.TryLock() {
		return nil
	}
	defer c.letGo()
	c.conn.SetReadDeadline(time.Now().Add(time.Second))
	defer c.conn.SetReadDeadline(time.Time{})
	c.readOne(context.Background(), -1, nil)
	return c.closedErr()
}

// forget drops call id, whose caller no longer waits: its response, if it
// comes, is read and discarded.
func (c *Client) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Notify sends a notification: the daemon runs method and sends no answer.
// It fails with ctx.Err() when ctx ends before the notification is sent or
// while it is written, with an error wrapping the encoding error when
// params cannot be encoded (nothing is sent then), with the write's error
// (a write cut part-way ends the client, as for Call), or, for a client
// made by Dial that cannot connect again, with an error wrapping the
// dialer's; on a closed client with net.ErrClosed, and on one that has failed
// with the error it failed with, as Call does.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if c.notDialed() {
		return errNotDialed
	}
	if err := c.reconnectIfClosed(ctx); err != nil {
		return err
	}
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.lastUsed = time.Now()
	c.mu.Unlock()
	return c.send(ctx, request{Version, nil, method, params}, false)
}

// send writes one request. A context that has ended sends nothing; one
// that ends while the request is being written interrupts the write. A
// request cut part-way leaves the stream unreadable for the daemon, so the
// connection is then closed and later calls fail; otherwise the client
// stays usable. answered says a response is due.
func (c *Client) send(ctx context.Context, req request, answered bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	c.out.reset()
	if err := encodeRequest(&c.out, req); err != nil {
		return fmt.Errorf("yaqrpc: %s: encoding the request: %w", req.Method, errors.Join(errEncoding, err))
	}
	total := c.out.total
	c.wbufs = c.out.buffers()
	var n int64
	var err error
	if ctx.Done() == nil { // a context that never ends: nothing to watch
		n, err = c.wbufs.WriteTo(c.conn) // writev: array data goes out as it is
	} else {
		if dl, ok := ctx.Deadline(); ok {
			c.conn.SetWriteDeadline(dl)
		}
		interrupted := make(chan struct{})
		stop := context.AfterFunc(ctx, func() {
			c.conn.SetWriteDeadline(time.Unix(1, 0))
			close(interrupted)
		})
		n, err = c.wbufs.WriteTo(c.conn)
		if !stop() {
			// The interruption has started: let it finish, so that
			// clearing the deadline below is the last word.
			<-interrupted
		}
		c.conn.SetWriteDeadline(time.Time{})
	}
	if err == nil {
		if answered {
			c.mu.Lock()
			c.outstanding++
			c.mu.Unlock()
		}
		return nil
	}
	if n > 0 {
		c.fail(fmt.Errorf("yaqrpc: connection abandoned: a request was cut after %d of %d bytes: %w", n, total, err))
		c.conn.Close()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Close closes the connection; pending and later calls fail with
// net.ErrClosed (or, on a client that had failed, with what it failed with).
// It returns the connection's Close error; closing a client
// closed already (or one whose connection failed and was closed) returns
// nil.
func (c *Client) Close() error {
	if c.notDialed() {
		return errNotDialed
	}
	c.mu.Lock()
	closedAlready := c.err != nil
	c.mu.Unlock()
	c.fail(errClosed)
	c.mu.Lock()
	conn := c.conn // as reconnectIfClosed may replace it
	c.mu.Unlock()
	if err := conn.Close(); err != nil && !(closedAlready && errors.Is(err, net.ErrClosed)) {
		return err
	}
	return nil
}

// errEncoding marks a request that could not be encoded (a parameter of a
// type msgpack has none for): nothing was written.
var errEncoding = errors.New("the request could not be encoded")

func (c *Client) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// fail ends the client with err and wakes every pending call.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.done)
}
