package ndpack_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/gr00tpolicy"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/openpi"
	"github.com/ndpack/ndpack/remote"
	"github.com/ndpack/ndpack/yaq"
	"github.com/ndpack/ndpack/yaq/kit"
	"github.com/ndpack/ndpack/yaqrpc"
)

const def = ndarray.DefaultMaxSize

// apiLines returns the lines of the API listing that declare a field
// called name.
func apiLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("api/v1.txt")
	require.NoError(t, err)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, " struct, "+name+" ") {
			lines = append(lines, strings.TrimPrefix(l, "pkg github.com/ndpack/ndpack"))
		}
	}
	return lines
}

// checkEveryField runs the case of every field the listing declares, and
// fails for a field without one, or a case without a field.
func checkEveryField(t *testing.T, name string, cases map[string]func(*testing.T)) {
	lines := apiLines(t, name)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		c, ok := cases[l]
		if !ok {
			t.Errorf("%q: no case says what its zero means", l)
			continue
		}
		t.Run(l, c)
	}
	for l := range cases {
		if !strings.Contains(strings.Join(lines, "\n"), l) {
			t.Errorf("a case for %q, which the API listing does not have", l)
		}
	}
}

// Every MaxSize of the API bounds what it bounds at ndarray.DefaultMaxSize
// when it is zero: each is held to it with inputs just over the default
// and at (or, where framing adds bytes the caller does not choose, just
// under) it.
func TestEveryMaxSizeZeroIsDefaultMaxSize(t *testing.T) {
	checkEveryField(t, "MaxSize", map[string]func(*testing.T){
		", type MessageOptions struct, MaxSize int64":          messageMaxSize,
		", type ConvertOptions struct, MaxSize int64":          convertMaxSize,
		"/ext110, type Decoder struct, MaxSize int64":          ext110DecoderMaxSize,
		"/gr00tpolicy, type DialOptions struct, MaxSize int64": gr00tDialMaxSize,
		"/gr00tpolicy, type Server struct, MaxSize int64":      gr00tServerMaxSize,
		"/openpi, type DialOptions struct, MaxSize int64":      openpiDialMaxSize,
		"/openpi, type Server struct, MaxSize int64":           openpiServerMaxSize,
		"/refs, type ParseOptions struct, MaxSize int64":       refsParseMaxSize,
		"/yaq, type DialOptions struct, MaxSize int64":         yaqDialMaxSize,
		"/yaq, type Daemon struct, MaxSize int64":              yaqDaemonMaxSize,
		"/yaq/kit, type Daemon struct, MaxSize int64 (promoted)": func(t *testing.T) {
			promotedFromYaqDaemon(t, "MaxSize") // yaq.Daemon's own field: its case holds it
		},
		"/yaqrpc, type DialOptions struct, MaxSize int64": yaqrpcDialMaxSize,
		"/yaqrpc, type Server struct, MaxSize int64":      yaqrpcServerMaxSize,
		"/zarr, type ReadOptions struct, MaxSize int64":   zarrReadMaxSize,
		"/zarr, type WriteOptions struct, MaxSize int64":  zarrWriteMaxSize,
	})
}

func promotedFromYaqDaemon(t *testing.T, field string) {
	f, ok := reflect.TypeFor[kit.Daemon]().FieldByName(field)
	require.True(t, ok)
	require.Len(t, f.Index, 2, "kit.Daemon's %s is its embedded *yaq.Daemon's", field)
	require.Equal(t, reflect.TypeFor[*yaq.Daemon](), reflect.TypeFor[kit.Daemon]().Field(f.Index[0]).Type)
}

// binMessage is a msgpack message of exactly n bytes: one bin.
func binMessage(n int) []byte {
	b := mpwire.AppendBinHeader(make([]byte, 0, n), n-5)
	return b[:n]
}

func requireTooLarge(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	require.True(t, errors.Is(err, ndarray.ErrTooLarge), "%s: %v", what, err)
}

func messageMaxSize(t *testing.T) {
	var v []byte
	requireTooLarge(t, ndpack.MessageOptions{}.UnmarshalMessage(binMessage(def+1), &v), "a message one byte over")
	require.ErrorContains(t, ndpack.MessageOptions{}.UnmarshalMessage(binMessage(def+1), &v), fmt.Sprint(def))
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(binMessage(def), &v))
	require.Len(t, v, def-5)
	err := ndpack.NewMessageDecoder(bytes.NewReader(binMessage(def + 1))).Decode(&v)
	requireTooLarge(t, err, "a stream's message one byte over")
	require.NoError(t, ndpack.NewMessageDecoder(bytes.NewReader(binMessage(def))).Decode(&v))
}

// ext110Object is an ext 110 object of a |u1 array whose payload is n
// bytes long (n over a few MiB).
func ext110Object(t *testing.T, n int) []byte {
	probe, err := ext110.Size(&ndarray.Array{DType: ndarray.MustParseDType("|u1"), Shape: []int{1 << 20}, Data: make([]byte, 1<<20)})
	require.NoError(t, err)
	overhead := probe - 6 - 1<<20 // an ext32 header, then the payload
	a, err := ndarray.Zeros(ndarray.MustParseDType("|u1"), n-overhead)
	require.NoError(t, err)
	b, err := ext110.Marshal(a)
	require.NoError(t, err)
	require.Len(t, b, 6+n)
	return b
}

func ext110DecoderMaxSize(t *testing.T) {
	over := append(binary.BigEndian.AppendUint32([]byte{0xc9}, def+1), 110) // a payload one byte over
	_, err := ext110.NewDecoder(bytes.NewReader(over)).Decode()
	requireTooLarge(t, err, "a payload one byte over")
	require.ErrorContains(t, err, fmt.Sprint(def))
	a, err := ext110.NewDecoder(bytes.NewReader(ext110Object(t, def))).Decode()
	require.NoError(t, err)
	require.Greater(t, len(a.Data), def-100)
}

func convertMaxSize(t *testing.T) {
	// An ext 110 object from a stream.
	over := append(binary.BigEndian.AppendUint32([]byte{0xc9}, def+1), 110)
	err := ndpack.ConvertOptions{}.Ext110ToNPY(io.Discard, bytes.NewReader(over))
	requireTooLarge(t, err, "a streamed object one byte over")
	var e *ndarray.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, "ConvertOptions.MaxSize", e.Option)
	require.NoError(t, ndpack.ConvertOptions{}.Ext110ToNPY(io.Discard, bytes.NewReader(ext110Object(t, def))))
	// A Fortran-order .npy, transposed in memory.
	fortran := func(cols int) []byte {
		text := fmt.Sprintf("{'descr': '|u1', 'fortran_order': True, 'shape': (2, %d), }", cols)
		text += strings.Repeat(" ", 64-(10+len(text)+1)%64) + "\n"
		h := append([]byte(npybridge.Magic), 1, 0, byte(len(text)&0xff), byte(len(text)>>8))
		return append(h, text...)
	}
	// (From a stream, which does not say how much it holds: refused before
	// its data is read.)
	err = ndpack.ConvertOptions{}.NPYToExt110(io.Discard, io.MultiReader(bytes.NewReader(fortran(def/2+1))))
	requireTooLarge(t, err, "a Fortran-order array two bytes over")
	npy := append(fortran(def/2), make([]byte, def)...)
	require.NoError(t, ndpack.ConvertOptions{}.NPYToExt110(io.Discard, bytes.NewReader(npy)))
}

func openpiServe(t *testing.T, s *openpi.Server) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); <-done })
	return "ws://" + l.Addr().String()
}

func ctx30(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func openpiDialMaxSize(t *testing.T) {
	url := openpiServe(t, &openpi.Server{Policy: openpi.Echo, MaxSize: 2 * def})
	c, err := openpi.Dial(ctx30(t), url, nil)
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Infer(ctx30(t), map[string]any{"x": make([]byte, def+1024)})
	requireTooLarge(t, err, "an action over the default")
	c, err = openpi.Dial(ctx30(t), url, nil)
	require.NoError(t, err)
	defer c.Close()
	action, err := c.Infer(ctx30(t), map[string]any{"x": make([]byte, def-4096)})
	require.NoError(t, err)
	require.Len(t, action["x"], def-4096)
}

// gr00tServe serves s on a port of 127.0.0.1 until the test ends.
func gr00tServe(t *testing.T, s *gr00tpolicy.Server) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(ctx, l) }()
	t.Cleanup(func() { cancel(); <-done })
	return l.Addr().String()
}

func gr00tDialMaxSize(t *testing.T) {
	addr := gr00tServe(t, &gr00tpolicy.Server{Policy: gr00tpolicy.Echo, MaxSize: 2 * def})
	c, err := gr00tpolicy.Dial(ctx30(t), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	_, _, err = c.GetAction(ctx30(t), map[string]any{"x": make([]byte, def+1024)}, nil)
	requireTooLarge(t, err, "an action over the default")
	action, _, err := c.GetAction(ctx30(t), map[string]any{"x": make([]byte, def-4096)}, nil)
	require.NoError(t, err)
	require.Len(t, action["x"], def-4096)
}

func gr00tServerMaxSize(t *testing.T) {
	var logged syncBuffer
	addr := gr00tServe(t, &gr00tpolicy.Server{Policy: gr00tpolicy.Echo, ErrorLog: log.New(&logged, "", 0)})
	c, err := gr00tpolicy.Dial(ctx30(t), addr, &gr00tpolicy.DialOptions{MaxSize: 2 * def})
	require.NoError(t, err)
	defer c.Close()
	_, _, err = c.GetAction(ctx30(t), map[string]any{"x": make([]byte, def+1024)}, nil)
	require.Error(t, err, "an observation over the default")
	waitFor(t, &logged, fmt.Sprintf("a message of more than %d bytes", def))
	_, _, err = c.GetAction(ctx30(t), map[string]any{"x": make([]byte, def-4096)}, nil)
	require.NoError(t, err)
}

func openpiServerMaxSize(t *testing.T) {
	url := openpiServe(t, &openpi.Server{Policy: openpi.Echo})
	c, err := openpi.Dial(ctx30(t), url, &openpi.DialOptions{MaxSize: 2 * def})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Infer(ctx30(t), map[string]any{"x": make([]byte, def+1024)})
	requireTooLarge(t, err, "an observation over the default")
	c, err = openpi.Dial(ctx30(t), url, &openpi.DialOptions{MaxSize: 2 * def})
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Infer(ctx30(t), map[string]any{"x": make([]byte, def-4096)})
	require.NoError(t, err)
}

// yaqDaemon serves d's protocol with "blob" (n bytes back) and "sink" (a
// byte string in, its length back), with d's MaxSize.
func yaqDaemon(t *testing.T, maxSize int64) string {
	d, err := yaq.NewDaemon("knobs", `{"protocol": "knobs", "messages": {
		"blob": {"request": [{"name": "n", "type": "long"}], "response": "bytes"},
		"sink": {"request": [{"name": "b", "type": "bytes"}], "response": "long"}}}`)
	require.NoError(t, err)
	d.MaxSize = maxSize
	require.NoError(t, d.Handle("blob", func(_ context.Context, p []any) (any, error) {
		return make([]byte, int(p[0].(int64))), nil
	}))
	require.NoError(t, d.Handle("sink", func(_ context.Context, p []any) (any, error) {
		return int64(len(p[0].([]byte))), nil
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	t.Cleanup(func() { d.Close() })
	return l.Addr().String()
}

func yaqDialMaxSize(t *testing.T) {
	addr := yaqDaemon(t, 2*def)
	c, err := yaq.Dial(ctx30(t), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var b []byte
	requireTooLarge(t, c.Call(ctx30(t), "blob", []any{int64(def + 1024)}, &b), "an answer over the default")
	require.NoError(t, c.Call(ctx30(t), "blob", []any{int64(def - 4096)}, &b))
	require.Len(t, b, def-4096)
}

func yaqDaemonMaxSize(t *testing.T) {
	addr := yaqDaemon(t, 0)
	c, err := yaq.Dial(ctx30(t), addr, &yaq.DialOptions{MaxSize: 2 * def})
	require.NoError(t, err)
	defer c.Close()
	var n int64
	require.Error(t, c.Call(ctx30(t), "sink", []any{make([]byte, def+1024)}, &n), "a request over the default")
	require.NoError(t, c.Call(ctx30(t), "sink", []any{make([]byte, def-4096)}, &n))
	require.Equal(t, int64(def-4096), n)
}

func yaqrpcServer(t *testing.T, maxSize int64) string {
	s := &yaqrpc.Server{MaxSize: maxSize}
	require.NoError(t, s.Handle("blob", func(_ context.Context, r *yaqrpc.Request) (any, error) {
		n, err := yaqrpc.ParamAs[int](r, 0, "n")
		return make([]byte, n), err
	}))
	require.NoError(t, s.Handle("sink", func(_ context.Context, r *yaqrpc.Request) (any, error) {
		b, err := yaqrpc.ParamAs[[]byte](r, 0, "b")
		return len(b), err
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return l.Addr().String()
}

func yaqrpcDialMaxSize(t *testing.T) {
	addr := yaqrpcServer(t, 2*def)
	c, err := yaqrpc.Dial(ctx30(t), addr, nil)
	require.NoError(t, err)
	var b []byte
	requireTooLarge(t, c.Call(ctx30(t), "blob", []any{def + 1024}, &b), "a response over the default")
	c.Close()
	c, err = yaqrpc.Dial(ctx30(t), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Call(ctx30(t), "blob", []any{def - 4096}, &b))
	require.Len(t, b, def-4096)
}

func yaqrpcServerMaxSize(t *testing.T) {
	addr := yaqrpcServer(t, 0)
	c, err := yaqrpc.Dial(ctx30(t), addr, &yaqrpc.DialOptions{MaxSize: 2 * def})
	require.NoError(t, err)
	var n int
	err = c.Call(ctx30(t), "sink", []any{make([]byte, def+1024)}, &n)
	require.ErrorContains(t, err, fmt.Sprintf("exceeds the limit of %d bytes", def))
	c.Close()
	c, err = yaqrpc.Dial(ctx30(t), addr, &yaqrpc.DialOptions{MaxSize: 2 * def})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Call(ctx30(t), "sink", []any{make([]byte, def-4096)}, &n))
	require.Equal(t, def-4096, n)
}

// syncBuffer is a bytes.Buffer the log package and a test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// standardLog captures the standard logger's output while the test runs.
func standardLog(t *testing.T) *syncBuffer {
	var b syncBuffer
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(&b)
	t.Cleanup(func() { log.SetOutput(out); log.SetFlags(flags) })
	return &b
}

// waitFor waits, for at most 10 s, until the log holds want.
func waitFor(t *testing.T, logged *syncBuffer, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logged.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the standard logger got %q, not %q", logged.String(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Every ErrorLog of the API left nil logs to the standard logger, as
// net/http.Server's does.
func TestEveryNilErrorLogIsTheStandardLogger(t *testing.T) {
	checkEveryField(t, "ErrorLog", map[string]func(*testing.T){
		"/gr00tpolicy, type Server struct, ErrorLog *log.Logger": func(t *testing.T) {
			logged := standardLog(t)
			addr := gr00tServe(t, &gr00tpolicy.Server{Policy: gr00tpolicy.Echo, MaxSize: 100})
			c, err := gr00tpolicy.Dial(ctx30(t), addr, nil)
			require.NoError(t, err)
			defer c.Close()
			_, _, err = c.GetAction(ctx30(t), map[string]any{"x": make([]byte, 200)}, nil)
			require.Error(t, err)
			waitFor(t, logged, "a message of more than 100 bytes")
		},
		"/openpi, type Server struct, ErrorLog *log.Logger": func(t *testing.T) {
			logged := standardLog(t)
			url := openpiServe(t, &openpi.Server{Policy: openpi.Echo, MaxSize: 100})
			c, err := openpi.Dial(ctx30(t), url, nil)
			require.NoError(t, err)
			defer c.Close()
			_, err = c.Infer(ctx30(t), map[string]any{"x": make([]byte, 200)})
			require.Error(t, err)
			waitFor(t, logged, "an observation over the limit of 100 bytes")
		},
		"/yaq, type Daemon struct, ErrorLog *log.Logger": func(t *testing.T) {
			logged := standardLog(t)
			conn, err := net.Dial("tcp", yaqDaemon(t, 100))
			require.NoError(t, err)
			defer conn.Close()
			conn.Write([]byte{0, 0, 1, 0, 1}) // a frame of 256 bytes, over the daemon's 100
			waitFor(t, logged, "closing the connection")
		},
		"/yaq/kit, type Daemon struct, ErrorLog *log.Logger (promoted)": func(t *testing.T) {
			promotedFromYaqDaemon(t, "ErrorLog") // yaq.Daemon's own field: its case holds it
		},
		"/yaqrpc, type Server struct, ErrorLog *log.Logger": func(t *testing.T) {
			logged := standardLog(t)
			conn, err := net.Dial("tcp", yaqrpcServer(t, 0))
			require.NoError(t, err)
			defer conn.Close()
			conn.Write([]byte{0xc1})
			waitFor(t, logged, "answered -32700 and closing")
		},
		"/remote, type Options struct, ErrorLog *log.Logger": func(t *testing.T) {
			logged := standardLog(t)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Length", "10")
				w.Write(make([]byte, 10)) // whatever Range asked for
			}))
			defer srv.Close()
			obj, err := remote.Options{}.Open(ctx30(t), srv.URL+"/x.npy")
			require.NoError(t, err)
			defer obj.Close()
			_, err = io.ReadAll(bufio.NewReader(io.NewSectionReader(obj, 2, 4)))
			require.NoError(t, err)
			waitFor(t, logged, "ignores Range requests")
		},
	})
}
