package yaq

import (
	"bufio"
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/ndpack/ndpack/internal/avrorpc"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/connset"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
)

// Caps on what a peer sends of the RPC's own machinery, far below the
// frame limit: yaq peers send empty meta maps and protocols of 7 to 11
// KiB.
const (
	maxMetaSize      = 64 << 10 // a call's meta map, or an answer's
	maxHandshakeSize = 64 << 10 // a handshake answer, beyond the protocol
	maxProtocolSize  = 1 << 20  // the protocol a daemon serves, for a client
)

// errClosed is returned by calls on a closed Client, and by a Daemon's
// Serve after Close. Like every "used after Close" error of the module
// it matches net.ErrClosed and os.ErrClosed under errors.Is.
var errClosed = codecerr.Closed("yaq: closed")

// RemoteError is an error a daemon answered a call with: the text it sent
// (for yaqd-core daemons, the repr of the Python exception).
type RemoteError struct {
	Method  string // the message called
	Message string // the daemon's text, as it sent it
}

// Error formats the failure as "yaq: METHOD: MESSAGE".
func (e *RemoteError) Error() string { return "yaq: " + e.Method + ": " + e.Message }

// Client calls one yaq daemon over Avro RPC, as yaqc does: one connection,
// calls serialized on it. It is safe for concurrent use. A call whose
// context ends before its answer has arrived leaves the connection in an
// unknown state; the next call then reconnects and shakes hands again, as
// yaqc does.
type Client struct {
	addr     string
	maxFrame int64

	mu     sync.Mutex // one call at a time
	conn   net.Conn
	proto  *Protocol
	hash   [16]byte
	stale  bool // the stream can no longer be trusted: reconnect first
	done   bool
	br     *bufio.Reader                               // the connection's
	in     *avrorpc.FrameReader                        // the answers, as they arrive
	out    avrorpc.FrameWriter                         // a call's frames
	pieces [][]byte                                    // a parameter's encoding
	dial   func(ctx context.Context) (net.Conn, error) // for tests; nil dials addr
	// lastUsed is when the connection last carried a call: one idle for
	// longer than connset.ProbeIdleAfter is checked before the next call.
	lastUsed time.Time
}

// onlyEmptyFrames says whether b holds nothing but empty frames (and the
// start of one), which yaq answers end with and a client reads only at its
// next call.
func onlyEmptyFrames(b []byte) bool {
	for i := 0; i+4 <= len(b); i += 4 {
		if binary.BigEndian.Uint32(b[i:]) != 0 {
			return false
		}
	}
	return true
}

// DialOptions configure a Client. A nil *DialOptions is the zero value,
// the default.
type DialOptions struct {
	// MaxSize bounds one frame, and one answer's value, read from the
	// daemon, in bytes; 0 means ndarray.DefaultMaxSize (64 MiB). An answer
	// over it fails with an error matching ndarray.ErrTooLarge, before anything is
	// allocated for it, and the next call reconnects.
	MaxSize int64
}

// Dial connects to the daemon at addr ("host:port") and shakes hands,
// learning its protocol. It fails with the dial's error, or one matching
// ErrHandshake when the peer does not answer as a yaq daemon.
func Dial(ctx context.Context, addr string, o *DialOptions) (*Client, error) {
	c := &Client{addr: addr, maxFrame: ndarray.DefaultMaxSize}
	if o != nil && o.MaxSize > 0 {
		c.maxFrame = o.MaxSize
	}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Protocol returns the daemon's protocol as learnt in the handshake: its
// name, traits and messages with their parameter and response schemas.
func (c *Client) Protocol() *Protocol {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.proto
}

// Close closes the connection.
// Its error is the connection's close error; calls after it fail with
// an error matching net.ErrClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done = true
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// connect dials and shakes hands: first with no protocol (the daemon
// answers NONE with its protocol and hash), then echoing them (BOTH), as
// yaqc does.
func (c *Client) connect(ctx context.Context) error {
	var conn net.Conn
	var err error
	if c.dial != nil {
		conn, err = c.dial(ctx)
	} else {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", c.addr)
	}
	if err != nil {
		return err
	}
	c.conn, c.stale = conn, false
	peer := "the daemon"
	if c.addr != "" {
		peer = "daemon " + c.addr
	}
	c.br = bufio.NewReaderSize(conn, 64<<10)
	c.in = avrorpc.NewFrameReader(c.br, avrorpc.ReaderOptions{MaxSize: c.maxFrame, Peer: peer, DropRest: true})
	stop := c.watch(ctx)
	defer stop()
	var spaces [16]byte
	for i := range spaces {
		spaces[i] = ' '
	}
	err = c.shakeHands(spaces)
	if err != nil {
		conn.Close()
		c.conn = nil
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// shakeHands asks with no protocol; the daemon answers NONE with its
// protocol and hash, which the second request echoes to be answered BOTH.
func (c *Client) shakeHands(spaces [16]byte) error {
	match, text, hash, err := c.handshake(spaces, nil, spaces)
	if err != nil {
		return err
	}
	if match == avrorpc.MatchBoth && c.proto != nil {
		return nil // a daemon that knows us from before
	}
	if text == nil {
		return classed(ErrHandshake, "yaq: %s: the daemon answered %s without its protocol", c.addr, match)
	}
	if md5.Sum(text) != hash {
		return classed(ErrHandshake, "yaq: %s: the protocol the daemon sent does not match its hash", c.addr)
	}
	proto, err := ParseProtocol(string(text))
	if err != nil {
		return classed(ErrHandshake, "yaq: %s: the daemon's protocol: %w", c.addr, err)
	}
	if match, _, _, err = c.handshake(hash, text, hash); err != nil {
		return err
	}
	if match != avrorpc.MatchBoth {
		return classed(ErrHandshake, "yaq: %s: the daemon did not accept its own protocol (%s)", c.addr, match)
	}
	c.proto, c.hash = proto, hash
	return nil
}

// The values of a call and its answer beside its parameters and result.
var (
	metaSchema    = mustSchema(`{"type": "map", "values": "bytes"}`) // a request's meta, echoed in its answer
	booleanSchema = mustSchema(`"boolean"`)                          // an answer's error flag
	stringSchema  = mustSchema(`"string"`)                           // a call's method name
)

func mustSchema(text string) *avro.Schema {
	s, err := avro.ParseSchema(text)
	if err != nil {
		panic(err)
	}
	return s
}

// handshake sends a HandshakeRequest with the (empty) method yaqc sends
// with it, and reads the answer.
func (c *Client) handshake(clientHash [16]byte, protocol []byte, serverHash [16]byte) (match avrorpc.HandshakeMatch, text []byte, hash [16]byte, err error) {
	req := avrorpc.HandshakeRequest{ClientHash: clientHash, ServerHash: serverHash}
	if protocol != nil {
		p := string(protocol)
		req.ClientProtocol = &p
	}
	var out avrorpc.FrameWriter
	out.Add(req.Append(nil))
	out.Add(emptyMeta)
	out.AddString("") // the empty method
	if err := out.Send(c.conn); err != nil {
		return 0, nil, hash, err
	}
	resp, err := c.in.ReadHandshakeResponse(maxProtocolSize + maxHandshakeSize)
	if err != nil {
		return 0, nil, hash, err
	}
	if s := resp.ServerProtocol; s != nil {
		// Parsing a protocol takes several times its bytes; real ones
		// are some 10 KiB.
		if len(*s) > maxProtocolSize {
			return 0, nil, hash, classed(ndarray.ErrTooLarge, "yaq: %s served a protocol of %d bytes, over the limit of %d a client parses", c.in.Peer(), len(*s), maxProtocolSize)
		}
		text = []byte(*s)
	}
	if resp.ServerHash != nil {
		hash = *resp.ServerHash
	}
	// The answer to the empty method: meta, a flag, and a null.
	if _, err := c.in.CappedValue(metaSchema, maxMetaSize, "meta map"); err != nil {
		return 0, nil, hash, err
	}
	if _, err := c.in.Value(booleanSchema); err != nil {
		return 0, nil, hash, err
	}
	return resp.Match, text, hash, nil
}

// Call calls method with params, positional in the order the protocol
// declares them (trailing ones with a declared default may be left out),
// and decodes the answer into result: a pointer to a Go
// value the answer converts to, or to any, where records become
// map[string]any, unions their branch's value and ndarray records
// *ndarray.Array; or nil to discard it. Each parameter is checked against
// its schema before anything is sent; an error names it. An error answer
// comes back as *RemoteError.
//
// Arrays in the result are the caller's to keep: each answer is read into
// memory of its own. CallReusing reads answers into the same memory.
func (c *Client) Call(ctx context.Context, method string, params []any, result any) error {
	return c.call(ctx, method, params, result, nil)
}

// A ResultBuffer holds the memory of an answer for the next call made with
// it to read its answer into, so that a loop fetching one image after
// another allocates (and zeroes) none of them. The zero value is ready to
// use; a ResultBuffer serves one call at a time.
type ResultBuffer struct {
	mem []byte
}

// CallReusing is Call with the answer read into buf's memory when it has
// the room (else into new memory, which buf keeps for the next call). The
// result's arrays then alias buf: they are valid until the next call with
// buf, which overwrites them; clone what must outlive it.
// It fails as Call does.
func (c *Client) CallReusing(ctx context.Context, method string, params []any, result any, buf *ResultBuffer) error {
	return c.call(ctx, method, params, result, buf)
}

func (c *Client) call(ctx context.Context, method string, params []any, result any, buf *ResultBuffer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return errClosed
	}
	if c.conn != nil && !c.stale && c.in.Pending() == 0 && time.Since(c.lastUsed) >= connset.ProbeIdleAfter &&
		connset.PeerClosed(c.conn, c.br, onlyEmptyFrames) {
		c.stale = true // closed while idle (an idle timeout): reconnect, as yaqc does
	}
	c.lastUsed = time.Now()
	if c.conn == nil || c.stale {
		if c.conn != nil {
			c.conn.Close()
		}
		if err := c.connect(ctx); err != nil {
			return err
		}
	}
	msg := c.proto.Messages[method]
	if msg == nil {
		return classed(ErrNoMethod, "yaq: %s has no method %q", c.proto.Name, method)
	}
	// Parameters left out take their declared defaults, as yaqc fills them
	// (appended to a copy: the caller's slice may have room beyond its end).
	params = params[:len(params):len(params)]
	for len(params) < len(msg.Request) && msg.Request[len(params)].HasDefault {
		params = append(params, msg.Request[len(params)].Default)
	}
	if len(params) != len(msg.Request) {
		n := fmt.Sprintf("%d parameters", len(msg.Request))
		if len(msg.Request) == 1 {
			n = "1 parameter"
		}
		return classed(ErrParams, "yaq: %s takes %s (%s), got %d", method, n, fieldNames(msg.Request), len(params))
	}
	out := &c.out
	out.Reset()
	out.Add(emptyMeta)
	out.AddString(method)
	pieces := c.pieces[:0]
	for i, p := range params {
		var err error
		if pieces, err = msg.Request[i].Type.AppendPieces(pieces[:0], p); err != nil {
			clear(pieces)
			return inParameter(err, method, msg.Request[i].Name)
		}
		out.Add(pieces...)
	}
	clear(pieces) // out holds them now
	c.pieces = pieces[:0]
	out.Add() // the call's end
	stop := c.watch(ctx)
	defer stop()
	v, err := c.exchange(msg, out, buf)
	if err != nil {
		if ctx.Err() != nil {
			c.stale = true
			return ctx.Err()
		}
		var re *RemoteError
		if !errors.As(err, &re) {
			c.stale = true
		}
		return err
	}
	return assign(result, v)
}

// inParameter says which parameter err, the codec's, is about, as the
// client's own error: "yaq: value does not fit its schema: echo:
// parameter "a": a string is not a ndarray". It matches what err matches
// under errors.Is and errors.As (the *ndarray.Error among them).
func inParameter(err error, method, name string) error {
	where := fmt.Sprintf("%s: parameter %q", method, name)
	var e *ndarray.Error
	if errors.As(err, &e) {
		return &classedError{class: err, err: errors.New(codecerr.Format("yaq", e.Err, e.Offset, where+": "+e.Detail, e.Cause))}
	}
	return fmt.Errorf("yaq: %s: %w", where, err)
}

// emptyMeta is a call's meta: an empty map.
var emptyMeta = []byte{0x00}

func fieldNames(fields []avro.Field) string {
	var names []string
	for _, f := range fields {
		names = append(names, f.Name)
	}
	if names == nil {
		return "none"
	}
	return fmt.Sprint(names)
}

// exchange sends a call's frames and reads its answer.
// The answer's frames are read into buf's memory if buf is not nil.
func (c *Client) exchange(msg *avro.Message, out *avrorpc.FrameWriter, buf *ResultBuffer) (any, error) {
	if err := out.Send(c.conn); err != nil {
		return nil, err
	}
	if _, err := c.in.CappedValue(metaSchema, maxMetaSize, "meta map"); err != nil {
		return nil, err
	}
	failed, err := c.in.SmallValue(booleanSchema)
	if err != nil {
		return nil, err
	}
	if failed.(bool) {
		e, err := c.in.Value(msg.Errors)
		if err != nil {
			return nil, err
		}
		return nil, &RemoteError{Method: msg.Name, Message: fmt.Sprint(e)}
	}
	if buf == nil {
		return c.in.Value(msg.Response)
	}
	c.in.Lend(buf.mem)
	v, err := c.in.Value(msg.Response)
	if mem := c.in.Lent(); mem != nil {
		buf.mem = mem // where the result lies, for the next call
	}
	return v, err
}

// watch makes ctx's end interrupt the connection's reads and writes. The
// interruption waits for ctx itself to end rather than setting the
// context's deadline on the connection, so that a call cut short always
// reports ctx.Err(); stop waits for an interruption already under way, so
// that clearing the deadline is the last word and the next call is not
// cut short by this one's context.
func (c *Client) watch(ctx context.Context) (stop func()) {
	if ctx.Done() == nil {
		return func() {}
	}
	conn := c.conn
	interrupted := make(chan struct{})
	s := context.AfterFunc(ctx, func() {
		conn.SetDeadline(time.Unix(1, 0))
		close(interrupted)
	})
	return func() {
		if !s() {
			<-interrupted
		}
		conn.SetDeadline(time.Time{})
	}
}

// assign stores the decoded value v in *result, converting where the Go
// types differ but the values fit: numbers between number types, []any
// into slices of a type, map[string]any into maps of a type.
func assign(result any, v any) error {
	if result == nil {
		return nil
	}
	rv := reflect.ValueOf(result)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return classed(ErrResult, "yaq: result must be a non-nil pointer, got %T", result)
	}
	return assignValue(rv.Elem(), v)
}

func assignValue(dst reflect.Value, v any) error {
	if v == nil {
		dst.Set(reflect.Zero(dst.Type()))
		return nil
	}
	src := reflect.ValueOf(v)
	switch {
	case src.Type().AssignableTo(dst.Type()):
		dst.Set(src)
		return nil
	case dst.Kind() == reflect.Pointer:
		// An optional value (a union with null): nil above, else its
		// value behind a new pointer.
		p := reflect.New(dst.Type().Elem())
		if err := assignValue(p.Elem(), v); err != nil {
			return err
		}
		dst.Set(p)
		return nil
	case dst.Kind() == reflect.Struct && src.Kind() == reflect.Map && src.Type().Key().Kind() == reflect.String:
		return assignStruct(dst, src)
	case dst.Kind() == reflect.Slice && src.Kind() == reflect.Slice && src.Type().Elem().Kind() == reflect.Interface:
		out := reflect.MakeSlice(dst.Type(), src.Len(), src.Len())
		for i := 0; i < src.Len(); i++ {
			if err := assignValue(out.Index(i), src.Index(i).Interface()); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		dst.Set(out)
		return nil
	case dst.Kind() == reflect.Map && src.Kind() == reflect.Map:
		out := reflect.MakeMapWithSize(dst.Type(), src.Len())
		for _, k := range src.MapKeys() {
			e := reflect.New(dst.Type().Elem()).Elem()
			if err := assignValue(e, src.MapIndex(k).Interface()); err != nil {
				return fmt.Errorf("%v: %w", k, err)
			}
			out.SetMapIndex(k.Convert(dst.Type().Key()), e)
		}
		dst.Set(out)
		return nil
	case isNumber(src.Kind()) && isNumber(dst.Kind()):
		// Only where the number survives: 2.5 into an int, 300 into a
		// uint8 or -1 into a uint would store another number.
		out := src.Convert(dst.Type())
		back := out.Convert(src.Type())
		if back.Equal(src) && negative(src) == negative(out) || isNaN(src) && isNaN(out) {
			dst.Set(out)
			return nil
		}
		return classed(ErrResult, "yaq: cannot store %v in a %s without changing it", v, dst.Type())
	}
	return classed(ErrResult, "yaq: cannot store a %T in a %s", v, dst.Type())
}

// assignStruct stores a record or map in a struct, field by field: a
// field takes the entry its `yaq:"name"` tag names, or else its
// `json:"name"` tag, or else the entry whose name equals the field's
// ignoring case and underscores (MeasurementID for measurement_id).
// Entries no field takes are left out; fields no entry names keep their
// zero value.
func assignStruct(dst, src reflect.Value) error {
	byKey := make(map[string]reflect.Value, src.Len())
	for _, k := range src.MapKeys() {
		byKey[k.String()] = k
	}
	fold := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "_", "")) }
	t := dst.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaq"), ",")
		if name == "" {
			name, _, _ = strings.Cut(f.Tag.Get("json"), ",")
		}
		if name == "-" {
			continue
		}
		key, ok := byKey[name]
		if name == "" {
			for k, kv := range byKey {
				if fold(k) == fold(f.Name) {
					key, ok = kv, true
					break
				}
			}
		}
		if !ok {
			continue
		}
		if err := assignValue(dst.Field(i), src.MapIndex(key).Interface()); err != nil {
			return fmt.Errorf("%s: %w", key.String(), err)
		}
	}
	return nil
}

func negative(v reflect.Value) bool {
	switch {
	case v.CanInt():
		return v.Int() < 0
	case v.CanFloat():
		return v.Float() < 0
	}
	return false
}

func isNaN(v reflect.Value) bool {
	return (v.Kind() == reflect.Float32 || v.Kind() == reflect.Float64) && math.IsNaN(v.Float())
}

func isNumber(k reflect.Kind) bool {
	return (k >= reflect.Int && k <= reflect.Uint64) || k == reflect.Float32 || k == reflect.Float64
}
