package gr00tpolicy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ndpack/ndpack/internal/zmtp"
	"github.com/ndpack/ndpack/ndarray"
)

// DefaultPort is the port GR00T's PolicyServer and PolicyClient use unless
// told otherwise.
const DefaultPort = 5555

// DialOptions are the options of Dial; nil means the zero value.
type DialOptions struct {
	// Token, if not empty, is sent with every request as "api_token", as
	// PolicyClient sends its api_token.
	Token string
	// MaxSize bounds each answer read from the server, in bytes; 0 means
	// ndarray.DefaultMaxSize (64 MiB). A larger answer fails with
	// ndarray.ErrTooLarge before it is read, and the connection is made
	// again for the next call.
	MaxSize int64
	// Wait makes Dial and each call wait for a server that is not
	// listening yet: while the connection is refused it tries again (every
	// 100 ms, then every second) until the call's context ends, as a ZeroMQ
	// REQ socket waits for its peer.
	Wait bool
}

// Client is a REQ connection to a GR00T policy server, made by Dial (the
// zero Client is connected to nothing: its calls fail). Its methods may be
// called from several goroutines; calls take turns, as a REQ socket sends
// one request and waits for its answer.
//
// A call that fails on the connection (its context ended, the server
// went, an answer was over MaxSize or not ZeroMQ) closes it, and the next
// call connects again: a REQ socket that timed out waiting must be made
// anew, as GR00T's PolicyClient does. A server's {"error": ...} answer is
// a *ServerError and leaves the connection as it was.
type Client struct {
	addr    string
	token   string
	maxSize int64
	wait    bool

	mu sync.Mutex // held through a call

	connMu sync.Mutex // guards conn and closed, for Close during a call
	conn   *zmtp.Conn
	closed bool
}

// Dial connects to the GR00T policy server at addr ("HOST:PORT",
// "tcp://HOST:PORT", or a bare port on this machine) and greets it as a
// REQ socket, within ctx. Without opts.Wait, a server that is not
// listening fails at once.
func Dial(ctx context.Context, addr string, opts *DialOptions) (*Client, error) {
	if opts == nil {
		opts = &DialOptions{}
	}
	hostport, err := tcpAddress(addr)
	if err != nil {
		return nil, err
	}
	c := &Client{addr: hostport, token: opts.Token, maxSize: opts.MaxSize, wait: opts.Wait}
	if c.maxSize <= 0 {
		c.maxSize = ndarray.DefaultMaxSize
	}
	z, err := c.connect(ctx)
	if err != nil {
		return nil, err
	}
	c.conn = z
	return c, nil
}

// tcpAddress reads an address as Dial takes it.
func tcpAddress(addr string) (string, error) {
	a := strings.TrimPrefix(addr, "tcp://")
	if _, err := strconv.ParseUint(a, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", a), nil
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || port == "" {
		return "", fmt.Errorf("gr00tpolicy: the address %s is not HOST:PORT, tcp://HOST:PORT or a port", quote(addr))
	}
	if host == "*" || host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// connect dials the server and greets it, waiting for it if c.wait.
func (c *Client) connect(ctx context.Context) (*zmtp.Conn, error) {
	var d net.Dialer
	pause := 100 * time.Millisecond
	for {
		nc, err := d.DialContext(ctx, "tcp", c.addr)
		if err == nil {
			stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
			z, err := zmtp.Handshake(nc, "REQ", int(min(c.maxSize, int64(^uint(0)>>1))))
			if !stop() || err != nil {
				nc.Close()
				if ctx.Err() != nil {
					err = ctx.Err()
				}
				return nil, fmt.Errorf("gr00tpolicy: greeting %s: %w", c.addr, err)
			}
			nc.SetDeadline(time.Time{})
			return z, nil
		}
		if !c.wait || !errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("gr00tpolicy: %w", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("gr00tpolicy: waiting for %s: %w", c.addr, ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, time.Second)
	}
}

// Call sends a request for endpoint with data, as PolicyClient's
// call_endpoint does (data nil sends no "data", as for an endpoint that
// takes no input), and returns the answer: *ndarray.Array for arrays,
// map[string]any for maps, []any for lists, and plain values. An answer
// that is a map holding "error" fails with a *ServerError, as
// PolicyClient raises it; so does the bare answer "ERROR".
func (c *Client) Call(ctx context.Context, endpoint string, data map[string]any) (any, error) {
	var d any
	if data != nil {
		d = data
	}
	return c.call(ctx, endpoint, d, data != nil)
}

// call sends one request and reads its answer.
func (c *Client) call(ctx context.Context, endpoint string, data any, withData bool) (any, error) {
	if c.addr == "" {
		return nil, errNotDialed
	}
	req := ordered{{"endpoint", endpoint}}
	if withData {
		req = append(req, kv{"data", data})
	}
	if c.token != "" {
		req = append(req, kv{"api_token", c.token})
	}
	buf := getBuffer()
	defer putBuffer(buf)
	body, err := encode(*buf, req)
	if err != nil {
		return nil, fmt.Errorf("gr00tpolicy: %s: encoding the request: %w", quote(endpoint), err)
	}
	*buf = body
	c.mu.Lock()
	defer c.mu.Unlock()
	reply, err := c.roundTrip(ctx, body)
	if err != nil {
		return nil, fmt.Errorf("gr00tpolicy: %s: %w", quote(endpoint), err)
	}
	if string(reply) == "ERROR" {
		return nil, &ServerError{Endpoint: endpoint, Text: "ERROR"}
	}
	v, err := decode(reply, nil)
	if err != nil {
		return nil, fmt.Errorf("gr00tpolicy: %s: the answer: %w", quote(endpoint), err)
	}
	if m, ok := v.(map[string]any); ok {
		if e, ok := m["error"]; ok {
			text, ok := e.(string)
			if !ok {
				text = fmt.Sprint(e)
			}
			return nil, &ServerError{Endpoint: endpoint, Text: text}
		}
	}
	return v, nil
}

// roundTrip sends a request's body and reads the answer's, on the
// connection, made first if there is none; a failure closes it.
func (c *Client) roundTrip(ctx context.Context, body []byte) ([]byte, error) {
	c.connMu.Lock()
	z, closed := c.conn, c.closed
	c.connMu.Unlock()
	if closed {
		return nil, errClosed
	}
	if z == nil {
		var err error
		if z, err = c.connect(ctx); err != nil {
			return nil, err
		}
		c.connMu.Lock()
		if c.closed {
			c.connMu.Unlock()
			z.Close()
			return nil, errClosed
		}
		c.conn = z
		c.connMu.Unlock()
	}
	stop := context.AfterFunc(ctx, func() { z.NetConn().SetDeadline(time.Unix(1, 0)) })
	frames, err := c.exchange(z, body)
	if !stop() {
		// ctx ended as the answer came: its deadline may yet be set on
		// the connection, which the next call must not meet.
		c.drop(z)
	}
	if err != nil {
		c.drop(z)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return frames, nil
}

// exchange writes REQ's delimiter and the body, and reads the answer: the
// delimiter and one frame.
func (c *Client) exchange(z *zmtp.Conn, body []byte) ([]byte, error) {
	if err := z.WriteMessage(nil, body); err != nil {
		return nil, err
	}
	frames, err := z.ReadMessage()
	if err != nil {
		return nil, err
	}
	if len(frames) != 2 || len(frames[0]) != 0 {
		return nil, fmt.Errorf("%w: the answer has %d frames, not the empty delimiter and a body", errMalformed, len(frames))
	}
	return frames[1], nil
}

// drop closes a connection that failed, so that the next call makes one
// anew.
func (c *Client) drop(z *zmtp.Conn) {
	z.Close()
	c.connMu.Lock()
	if c.conn == z {
		c.conn = nil
	}
	c.connMu.Unlock()
}

// Close closes the connection; a call in progress fails, and later calls
// fail with an error matching net.ErrClosed.
func (c *Client) Close() error {
	c.connMu.Lock()
	defer c.connMu.Unlock()
	c.closed = true
	if c.conn != nil {
		err := c.conn.Close()
		c.conn = nil
		return err
	}
	return nil
}

// Ping calls "ping": nil when the server answers.
func (c *Client) Ping(ctx context.Context) error {
	_, err := c.call(ctx, "ping", nil, false)
	return err
}

// GetAction calls "get_action" with the observation and options (nil is
// None), and returns the action and the info the policy answered, as
// PolicyClient.get_action does.
func (c *Client) GetAction(ctx context.Context, obs, options map[string]any) (action, info map[string]any, err error) {
	v, err := c.call(ctx, "get_action", ordered{{"observation", obs}, {"options", noneIfNil(options)}}, true)
	if err != nil {
		return nil, nil, err
	}
	pair, ok := v.([]any)
	if !ok || len(pair) != 2 {
		return nil, nil, fmt.Errorf("gr00tpolicy: \"get_action\": %w: the answer is %s, not [action, info]", errMalformed, kindOf(v))
	}
	if action, ok = pair[0].(map[string]any); !ok && pair[0] != nil {
		return nil, nil, fmt.Errorf("gr00tpolicy: \"get_action\": %w: the action is %s, not a map", errMalformed, kindOf(pair[0]))
	}
	if info, ok = pair[1].(map[string]any); !ok && pair[1] != nil {
		return nil, nil, fmt.Errorf("gr00tpolicy: \"get_action\": %w: the info is %s, not a map", errMalformed, kindOf(pair[1]))
	}
	return action, info, nil
}

// noneIfNil is a nil map as None.
func noneIfNil(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

// Reset calls "reset" with the options (nil is None) and returns what the
// policy answered (GR00T's policies answer an info map; nil is None).
func (c *Client) Reset(ctx context.Context, options map[string]any) (map[string]any, error) {
	v, err := c.call(ctx, "reset", ordered{{"options", noneIfNil(options)}}, true)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok && v != nil {
		return nil, fmt.Errorf("gr00tpolicy: \"reset\": %w: the answer is %s, not a map", errMalformed, kindOf(v))
	}
	return m, nil
}

// ModalityConfig calls "get_modality_config" and returns the policy's
// modality configs by modality name ("video", "state", "action",
// "language").
func (c *Client) ModalityConfig(ctx context.Context) (map[string]ModalityConfig, error) {
	v, err := c.call(ctx, "get_modality_config", nil, false)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("gr00tpolicy: \"get_modality_config\": %w: the answer is %s, not a map", errMalformed, kindOf(v))
	}
	out := make(map[string]ModalityConfig, len(m))
	for name, x := range m {
		mc, err := parseModality(name, x)
		if err != nil {
			return nil, fmt.Errorf("gr00tpolicy: \"get_modality_config\": %w", err)
		}
		out[name] = mc
	}
	return out, nil
}

// Kill calls "kill", which stops the server once it has answered.
func (c *Client) Kill(ctx context.Context) error {
	_, err := c.call(ctx, "kill", nil, false)
	return err
}
