package gr00tpolicy

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"runtime/debug"

	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/internal/membudget"
	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/internal/zmtp"
)

// serverConn is one connection of a Server: a REQ peer's requests, read,
// answered and written one after the other.
type serverConn struct {
	s    *Server
	nc   *connset.Conn
	mem  membudget.Lease // what the connection holds of the server's budget
	kill func()          // stops Serve, once a kill request is answered
}

// run serves the connection until the peer goes, breaks the protocol, or
// the server stops.
func (c *serverConn) run(ctx context.Context) {
	defer c.nc.Close()
	defer func() { c.mem.Give(c.mem.Held()) }()
	c.nc.Greet()
	z, err := zmtp.Handshake(c.nc, "REP", int(min(c.s.maxSize(), math.MaxInt)))
	if err != nil {
		c.ended("greeting", err)
		return
	}
	z.Charge = func(n int) error { return c.mem.Take(ctx, int64(n), "a request") }
	for {
		c.nc.Idle()
		if err := z.Await(); err != nil {
			c.ended("waiting for a request", err)
			return
		}
		c.nc.Request()
		frames, err := z.ReadMessage()
		if err != nil {
			c.ended("reading a request", err)
			return
		}
		c.nc.Busy(true)
		envelope, body, err := split(frames)
		if err != nil {
			c.ended("reading a request", err)
			return
		}
		answer, killed := c.answer(ctx, body)
		buf := getBuffer()
		out, err := encode(*buf, answer)
		if err != nil {
			out, _ = encode(*buf, errorAnswer(fmt.Errorf("encoding the answer: %w", err)))
		}
		*buf = out
		c.mem.Force(int64(len(out)))
		err = z.WriteMessage(append(envelope, out)...)
		putBuffer(buf)
		c.mem.Give(c.mem.Held())
		if err != nil {
			c.ended("writing an answer", err)
			return
		}
		if killed {
			c.kill()
			return
		}
		if !c.nc.Busy(false) {
			return
		}
	}
}

// split takes a request's envelope (its frames up to the empty
// delimiter, which the answer repeats) from its body (the one frame
// after it).
func split(frames [][]byte) (envelope [][]byte, body []byte, err error) {
	for i, f := range frames {
		if len(f) == 0 {
			if len(frames) != i+2 {
				return nil, nil, fmt.Errorf("%w: a request of %d frames after its delimiter, not 1", zmtp.ErrProtocol, len(frames)-i-1)
			}
			return frames[:i+1], frames[i+1], nil
		}
	}
	return nil, nil, fmt.Errorf("%w: a request without the empty delimiter a REQ socket sends", zmtp.ErrProtocol)
}

// answer decodes a request and answers it; killed reports a kill request,
// answered.
func (c *serverConn) answer(ctx context.Context, body []byte) (answer any, killed bool) {
	v, err := decode(body, func(n int64) error { return c.mem.Take(ctx, n, "decoding a request") })
	if err != nil {
		return c.failed("", err), false
	}
	req, ok := v.(map[string]any)
	if !ok {
		return c.failed("", fmt.Errorf("%w: the request is %s, not a map", errMalformed, kindOf(v))), false
	}
	if c.s.Token != "" {
		tok, _ := req["api_token"].(string)
		if subtle.ConstantTimeCompare([]byte(tok), []byte(c.s.Token)) != 1 {
			return errorAnswer(errUnauthorized), false
		}
	}
	endpoint := "get_action"
	if e, ok := req["endpoint"]; ok {
		if endpoint, ok = e.(string); !ok {
			return c.failed("", fmt.Errorf("Unknown endpoint: %v", e)), false
		}
	}
	h := c.s.handler(endpoint)
	builtinKill := h == nil && endpoint == "kill" && !c.s.removed(endpoint)
	if h == nil && !builtinKill {
		return c.failed(endpoint, fmt.Errorf("Unknown endpoint: %s", endpoint)), false
	}
	if builtinKill {
		return nil, true
	}
	var data map[string]any
	if d, ok := req["data"]; ok && d != nil {
		if data, ok = d.(map[string]any); !ok {
			return c.failed(endpoint, fmt.Errorf("%s: data is %s, not a map", endpoint, kindOf(d))), false
		}
	}
	out, err := c.call(ctx, endpoint, h, data)
	if err != nil {
		return c.failed(endpoint, err), false
	}
	return out, false
}

// call runs a handler, one at a time across the server; a panic is an
// error, logged with its stack.
func (c *serverConn) call(ctx context.Context, endpoint string, h Handler, data map[string]any) (out any, err error) {
	c.s.turn.Lock()
	defer c.s.turn.Unlock()
	defer func() {
		if p := recover(); p != nil {
			c.s.logf("gr00tpolicy: %s: %s: panic: %v\n%s", c.nc.RemoteAddr(), peertext.Line(endpoint), p, debug.Stack())
			out, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, data)
}

// failed logs a request's failure and returns its answer.
func (c *serverConn) failed(endpoint string, err error) ordered {
	if endpoint == "" {
		c.s.logf("gr00tpolicy: %s: %s", c.nc.RemoteAddr(), peertext.Line(err.Error()))
	} else {
		c.s.logf("gr00tpolicy: %s: %s: %s", c.nc.RemoteAddr(), peertext.Line(endpoint), peertext.Line(err.Error()))
	}
	return errorAnswer(err)
}

// ended logs why a connection ended, unless it ended as connections do
// every day (the peer hung up, the server stopped or made room).
func (c *serverConn) ended(doing string, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		return
	}
	c.s.logf("gr00tpolicy: %s: %s: %s", c.nc.RemoteAddr(), doing, peertext.Line(err.Error()))
}
