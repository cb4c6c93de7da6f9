package openpi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/coder/websocket"
	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/internal/membudget"
	"github.com/ndpack/ndpack/ndarray"
)

// serverConn is one websocket connection of a Server: the metadata, then
// observations and actions until the client goes or something fails.
type serverConn struct {
	s    *Server
	ws   *websocket.Conn
	nc   *connset.Conn
	set  *connset.Set // nil for a connection of another HTTP server
	peer string
	// mem is what the connection holds of the server's memory budget:
	// in's and out's capacity, and an observation's decoded values.
	mem membudget.Lease

	// mu guards in, out, mem and idle between the connection's goroutine
	// and release, which gives back in's and out's memory when the
	// connection has waited keepBuffers; and idle and waits for the
	// pinger.
	mu      sync.Mutex
	in, out []byte // the last observation read and action sent, reused
	idle    bool   // waiting for an observation
	waits   int    // how many times it has
	release *time.Timer
	done    chan struct{} // closed when run returns
}

// run serves the connection until the client goes (nil) or something
// fails (the error, for the log).
func (c *serverConn) run(ctx context.Context) error {
	c.ws.SetReadLimit(c.s.maxSize())
	c.done = make(chan struct{})
	c.release = time.AfterFunc(time.Hour, c.releaseIdle)
	c.release.Stop()
	defer c.finish()
	if every := orDefault(c.s.PingInterval, defaultPingInterval); every > 0 {
		go c.pinger(ctx, every)
	}
	meta := c.s.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	if err := c.encode(ctx, meta, "", nil); err != nil {
		return c.refuse(ctx, fmt.Errorf("the server's metadata: %w", err))
	}
	if err := c.ws.Write(ctx, websocket.MessageBinary, c.out); err != nil {
		return c.ended(err)
	}
	var prevTotal time.Duration
	for calls := 0; ; calls++ {
		start := time.Now()
		obs, cost, err := c.read(ctx)
		if err != nil || obs == nil {
			return err
		}
		t := time.Now()
		action, err := c.s.infer(ctx, obs)
		inferTime := time.Since(t)
		if err == nil {
			timing := map[string]any{"infer_ms": ms(inferTime)}
			if calls > 0 {
				timing["prev_total_ms"] = ms(prevTotal)
			}
			err = c.encode(ctx, action, "server_timing", timing)
		}
		c.mem.Give(cost) // the observation's values: the action is encoded
		if err != nil {
			return c.refuse(ctx, err)
		}
		if err := c.ws.Write(ctx, websocket.MessageBinary, c.out); err != nil {
			return c.ended(err)
		}
		prevTotal = time.Since(start)
	}
}

// read waits for the next observation and decodes it, taking the memory
// of its bytes and of its values from the server's budget; it returns the
// observation and the memory its values take. A nil observation and error
// is a client that went.
func (c *serverConn) read(ctx context.Context) (map[string]any, int64, error) {
	c.await()
	typ, r, err := c.ws.Reader(ctx)
	c.begin()
	if err != nil {
		return nil, 0, c.ended(err)
	}
	c.nc.Reading()
	if typ != websocket.MessageBinary {
		return nil, 0, c.refuse(ctx, errAt(errMalformed, -1, "a text message where an observation (binary) was expected"))
	}
	// The buffer is readBody's alone while it reads: once it has grown,
	// the memory given back is nobody's.
	buf := c.in
	c.in = nil
	msg, err := readBody(ctx, r, buf, c.s.maxSize(), &c.mem, "an observation")
	c.in = msg[:0]
	var be *membudget.Error
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		return nil, 0, fmt.Errorf("%w: an observation over the limit of %d bytes (MaxSize)", ndarray.ErrTooLarge, c.s.maxSize())
	case errors.As(err, &be):
		return nil, 0, c.refuse(ctx, err)
	case err != nil:
		return nil, 0, c.ended(err)
	}
	cost, err := checkMessage(msg)
	if err == nil {
		err = c.mem.Take(ctx, cost, "decoding an observation")
	}
	if err != nil {
		return nil, 0, c.refuse(ctx, err)
	}
	obs, err := decodeChecked(msg)
	if err != nil {
		c.mem.Give(cost)
		return nil, 0, c.refuse(ctx, err)
	}
	return obs, cost, nil
}

// readBody reads the rest of a message of at most limit bytes (the
// connection's read limit) from r into buf's memory, growing it only as
// bytes arrive (never for a length the peer claimed), and returns the
// message. With mem, the memory of each larger buffer is taken from its
// budget before it is made, and the smaller one's given back once its
// bytes are copied: buf's capacity is what mem holds for it.
func readBody(ctx context.Context, r io.Reader, buf []byte, limit int64, mem *membudget.Lease, what string) ([]byte, error) {
	buf = buf[:0]
	for {
		if len(buf) == cap(buf) {
			grown := cap(buf) + max(4096, cap(buf))
			// websocket reads a byte past the limit before it fails: the
			// buffer needs room for that, and one more to see the failure.
			if int64(grown) > limit+2 && int64(cap(buf)) < limit+2 {
				grown = int(limit + 2)
			}
			if mem != nil {
				if err := mem.Take(ctx, int64(grown), what); err != nil {
					return buf, err
				}
			}
			b := make([]byte, len(buf), grown)
			copy(b, buf)
			old := cap(buf)
			buf = b // then the memory given back is nobody's
			if mem != nil {
				mem.Give(int64(old))
			}
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// encode encodes m (and extraKey: extraValue, see appendMessage) into
// c.out, taking the memory of a larger buffer from the budget first.
func (c *serverConn) encode(ctx context.Context, m map[string]any, extraKey string, extraValue any) error {
	if bound, ok := messageBound(m, extraKey, extraValue); ok && bound > int64(cap(c.out)) {
		if err := c.mem.Take(ctx, bound, "an action"); err != nil {
			return err
		}
		old := cap(c.out)
		c.out = nil // then the memory given back is nobody's
		c.mem.Give(int64(old))
		c.out = make([]byte, 0, bound)
	}
	out, err := appendMessage(c.out[:0], m, extraKey, extraValue)
	if grew := cap(out) - cap(c.out); grew > 0 {
		c.mem.Force(int64(grew)) // a value messageBound could not bound
	}
	c.out = out
	return err
}

// await says the connection waits for an observation: the Set may close
// it to make room, its idle timeout runs, the pinger pings it, and its
// buffers are given back if it waits long.
func (c *serverConn) await() {
	c.nc.Idle()
	c.mu.Lock()
	c.idle = true
	c.waits++
	c.mu.Unlock()
	c.release.Reset(keepBuffers)
}

// begin says the wait is over.
func (c *serverConn) begin() {
	c.release.Stop()
	c.mu.Lock()
	c.idle = false
	c.mu.Unlock()
}

// releaseIdle gives back the buffers of a connection that still waits.
func (c *serverConn) releaseIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle {
		c.dropBuffers()
	}
}

// dropBuffers gives back all the connection holds of the budget: its
// buffers, and the values of an observation it will not answer.
func (c *serverConn) dropBuffers() {
	c.in, c.out = nil, nil
	c.mem.Give(c.mem.Held())
}

// finish ends the connection's use of the budget and its pinger.
func (c *serverConn) finish() {
	close(c.done)
	c.release.Stop()
	c.mu.Lock()
	c.idle = false
	c.dropBuffers()
	c.mu.Unlock()
}

// pinger pings the connection every interval while it waits for an
// observation (the client's websocket library answers, as it reads in
// the background), and closes it when a ping goes unanswered for an
// interval while the connection still waited.
func (c *serverConn) pinger(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.done:
			return
		}
		c.mu.Lock()
		idle, waits := c.idle, c.waits
		c.mu.Unlock()
		if !idle {
			continue // the pong of a busy connection is not read
		}
		pctx, cancel := context.WithTimeout(ctx, every)
		err := c.ws.Ping(pctx)
		cancel()
		if err == nil {
			continue
		}
		c.mu.Lock()
		waited := c.idle && c.waits == waits
		c.mu.Unlock()
		if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
			return
		}
		if waited {
			c.nc.Close() // the client is gone
			return
		}
	}
}

// refuse gives back the connection's memory, sends err's text as
// openpi's server sends a traceback, closes (with status 1013, try again
// later, for a budget that is in use, else 1011), and returns err.
func (c *serverConn) refuse(ctx context.Context, err error) error {
	c.mu.Lock()
	c.dropBuffers()
	c.mu.Unlock()
	code, reason := websocket.StatusInternalError, internalErrorReason
	var be *membudget.Error
	if errors.As(err, &be) && be.Busy() {
		code, reason = websocket.StatusTryAgainLater, "The server's memory is in use. Reason included in previous frame."
	}
	if werr := c.ws.Write(ctx, websocket.MessageText, []byte(err.Error()+"\n")); werr == nil {
		c.ws.Close(code, reason)
	}
	return err
}

// ended returns nil for a connection that ended as connections do every
// day (the client closed it or hung up, the server stopped or made room,
// it waited too long), else the error, for the log. Timeouts a peer
// caused are logged here, at most once a second under Serve.
func (c *serverConn) ended(err error) error {
	switch websocket.CloseStatus(err) {
	case websocket.StatusNormalClosure, websocket.StatusGoingAway, websocket.StatusNoStatusRcvd:
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	if c.set != nil {
		return c.set.Ended(c.nc, err)
	}
	var te *connset.TimeoutError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return nil
	case errors.As(err, &te) && te.Op == "idle":
		return nil
	}
	return err
}

// logf logs as the Server does, at most once a second under Serve: many
// peers may fail at once.
func (c *serverConn) logf(format string, args ...any) {
	if c.set != nil {
		c.set.LogThrottled(format, args...) // the Set's log says "openpi: "
		return
	}
	c.s.logf("openpi: "+format, args...)
}
