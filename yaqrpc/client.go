package yaqrpc

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/vmihailenco/msgpack/v5"
)

// ErrClientClosed is returned by calls on a closed Client.
var ErrClientClosed = errors.New("yaqrpc: client closed")

// Client calls a yaq-RPC daemon over one connection. Calls may be made from
// many goroutines at once; responses are matched to calls by id.
type Client struct {
	conn net.Conn
	max  int64

	wmu sync.Mutex // one request written at a time
	buf []byte     // a small request's buffer, reused

	mu      sync.Mutex
	next    int64
	pending map[int64]chan *response
	err     error // set when the connection is done; fails later calls
	done    chan struct{}
}

// Dial connects to a daemon at addr ("host:port").
func Dial(ctx context.Context, addr string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	return NewClient(conn, 0), nil
}

// NewClient returns a Client using conn. maxMessageSize bounds one response
// (0 means DefaultMaxMessageSize); a larger one, or one nested deeper than
// DefaultMaxDepth, ends the connection.
func NewClient(conn net.Conn, maxMessageSize int64) *Client {
	if maxMessageSize <= 0 {
		maxMessageSize = DefaultMaxMessageSize
	}
	c := &Client{conn: conn, max: maxMessageSize, pending: map[int64]chan *response{}, done: make(chan struct{})}
	go c.readLoop()
	return c
}

// Call calls method with params (nil, a slice for positional parameters, a
// map or struct for named ones) and decodes the result into result (a
// pointer, or nil to discard it). A daemon's error comes back as *Error.
// When ctx ends first, Call returns ctx.Err() and the late response is
// dropped.
func (c *Client) Call(ctx context.Context, method string, params any, result any) error {
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.next++
	id := c.next
	ch := make(chan *response, 1)
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	if err := c.send(ctx, request{Version, id, method, params}); err != nil {
		forget()
		// A daemon that refuses a request it will not read (too large)
		// answers and closes: its answer says more than the broken write.
		if cerr := c.closedErr(); cerr != nil {
			return cerr
		}
		return err
	}
	select {
	case resp := <-ch:
		if resp == nil {
			return c.closedErr()
		}
		if resp.Error != nil {
			return resp.Error
		}
		if result == nil {
			return nil
		}
		raw := resp.Result
		if len(raw) == 0 {
			raw = []byte{0xc0} // the library keeps a nil result as no bytes
		}
		if err := msgpack.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("yaqrpc: %s: decoding the result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		return ctx.Err()
	case <-c.done:
		return c.closedErr()
	}
}

// Notify sends a notification: the daemon runs method and sends no answer.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.send(ctx, request{Version, nil, method, params})
}

// send writes one request. A context that has ended sends nothing; one
// that ends while the request is being written interrupts the write. A
// request cut part-way leaves the stream unreadable for the daemon, so the
// connection is then closed and later calls fail; otherwise the client
// stays usable.
func (c *Client) send(ctx context.Context, req request) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := bytes.NewBuffer(c.buf[:0])
	if err := msgpack.NewEncoder(buf).Encode(req); err != nil {
		return fmt.Errorf("yaqrpc: %s: encoding the request: %w", req.Method, err)
	}
	if buf.Cap() <= 1<<20 {
		c.buf = buf.Bytes() // small requests reuse the buffer
	}
	if dl, ok := ctx.Deadline(); ok {
		c.conn.SetWriteDeadline(dl)
	}
	interrupted := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.conn.SetWriteDeadline(time.Unix(1, 0))
		close(interrupted)
	})
	n, err := c.conn.Write(buf.Bytes())
	if !stop() {
		// The interruption has started: let it finish, so that clearing
		// the deadline below is the last word.
		<-interrupted
	}
	c.conn.SetWriteDeadline(time.Time{})
	if err == nil {
		return nil
	}
	if n > 0 {
		c.fail(fmt.Errorf("yaqrpc: connection abandoned: a request was cut after %d of %d bytes: %w", n, buf.Len(), err))
		c.conn.Close()
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Close closes the connection; pending calls fail with ErrClientClosed.
func (c *Client) Close() error {
	c.fail(ErrClientClosed)
	return c.conn.Close()
}

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

func (c *Client) readLoop() {
	br := bufio.NewReaderSize(c.conn, 64<<10)
	for {
		raw, err := mpwalk.Read(br, c.max, mpwalk.Limits{MaxDepth: DefaultMaxDepth, MaxExpansion: DefaultMaxExpansion})
		if err != nil {
			c.fail(fmt.Errorf("yaqrpc: connection ended: %w", err))
			c.conn.Close()
			return
		}
		var resp response
		if err := msgpack.Unmarshal(raw, &resp); err != nil {
			c.fail(fmt.Errorf("yaqrpc: undecodable response: %w", err))
			c.conn.Close()
			return
		}
		id, ok := intID(resp.ID)
		if !ok {
			// Errors about unreadable requests carry no id; they cannot
			// be matched, and the daemon closes the connection after them.
			if resp.Error != nil {
				c.fail(resp.Error)
				c.conn.Close()
				return
			}
			continue
		}
		c.mu.Lock()
		ch := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ch != nil {
			ch <- &resp
		}
	}
}
