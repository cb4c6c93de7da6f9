package openpi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
)

// startServer serves s on 127.0.0.1 until the test ends, and returns the
// address to dial.
func startServer(t testing.TB, s *Server) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("Serve did not return after its context ended")
		}
	})
	return l.Addr().String()
}

func dialT(t testing.TB, addr string, o *DialOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctx10(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func mustArray[T ndarray.Element](t testing.TB, v []T, shape ...int) *ndarray.Array {
	t.Helper()
	a, err := ndarray.FromSlice(v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// observation is what a robot sends: images, a state, a prompt, nested
// dicts, 0-d arrays and plain values.
func observation(t testing.TB) map[string]any {
	img := make([]uint8, 224*224*3)
	for i := range img {
		img[i] = uint8(i * 7)
	}
	return map[string]any{
		"observation/image": mustArray(t, img, 224, 224, 3),
		"state":             mustArray(t, []float32{1.5, -2, float32(math.Inf(1))}, 3),
		"f8":                mustArray(t, []float64{math.Pi, -0.0}, 2, 1),
		"i8":                mustArray(t, []int64{math.MinInt64, 7}, 2),
		"flags":             mustArray(t, []bool{true, false, true}, 3),
		"zero_d":            ndarray.Scalar(float64(2.25)),
		"prompt":            "pick up the fork",
		"nested":            map[string]any{"joint": mustArray(t, []int32{1, 2, 3}, 3), "deeper": map[string]any{"n": int64(-3)}},
		"list":              []any{int64(1), "two", 3.0, nil, true},
		"raw":               []byte{0, 1, 2},
		"big":               uint64(math.MaxUint64),
		"f4":                float32(0.5),
	}
}

// sameValues compares a sent value with the one that came back.
func sameValues(t testing.TB, path string, want, got any) {
	t.Helper()
	switch w := want.(type) {
	case *ndarray.Array:
		g, ok := got.(*ndarray.Array)
		if !ok || !w.Equal(g) {
			t.Errorf("%s: got %v, want %v", path, got, w)
		}
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			t.Errorf("%s: got %#v, want %#v", path, got, w)
			return
		}
		for k := range w {
			sameValues(t, path+"/"+k, w[k], g[k])
		}
	default:
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: got %#v (%T), want %#v (%T)", path, got, got, want, want)
		}
	}
}

func TestEchoRoundTrip(t *testing.T) {
	addr := startServer(t, &Server{Policy: Echo, Metadata: map[string]any{"name": "echo", "action_horizon": int64(50)}})
	c := dialT(t, addr, nil)
	if got := c.Metadata(); !reflect.DeepEqual(got, map[string]any{"name": "echo", "action_horizon": int64(50)}) {
		t.Errorf("metadata %#v", got)
	}
	obs := observation(t)
	var buf ResultBuffer
	for i := range 3 {
		var action map[string]any
		var err error
		if i == 2 {
			action, err = c.InferReusing(ctx10(t), obs, &buf)
		} else {
			action, err = c.Infer(ctx10(t), obs)
		}
		if err != nil {
			t.Fatal(err)
		}
		timing, ok := action["server_timing"].(map[string]any)
		if !ok {
			t.Fatalf("no server_timing in %v", action)
		}
		if _, ok := timing["infer_ms"].(float64); !ok {
			t.Errorf("server_timing %v: no infer_ms", timing)
		}
		if _, ok := timing["prev_total_ms"].(float64); ok != (i > 0) {
			t.Errorf("call %d: server_timing %v", i, timing)
		}
		delete(action, "server_timing")
		sameValues(t, "", obs, action)
	}
}

// TestEncodingBytes pins the message bytes: keys sorted, arrays as openpi's
// packer writes them, numbers in msgpack-python's forms.
func TestEncodingBytes(t *testing.T) {
	got, err := appendMessage(nil, map[string]any{
		"b": int64(5), "a": mustArray(t, []float32{1}, 1), "c": float32(1), "d": []any{true, nil},
	}, "server_timing", map[string]any{"infer_ms": 1.0})
	if err != nil {
		t.Fatal(err)
	}
	want := "85" + "a161" + "84c40b5f5f6e6461727261795f5fc3c40464617461c4040000803fc4056474797065a33c6634c4057368617065" + "9101" +
		"a162" + "05" + "a163" + "ca3f800000" + "a164" + "92c3c0" +
		"ad7365727665725f74696d696e67" + "81a8696e6665725f6d73cb3ff0000000000000"
	if fmt.Sprintf("%x", got) != want {
		t.Errorf("got  %x\nwant %s", got, want)
	}
}

func TestPolicyError(t *testing.T) {
	calls := 0
	addr := startServer(t, &Server{Policy: PolicyFunc(func(ctx context.Context, obs map[string]any) (map[string]any, error) {
		calls++
		if calls == 2 {
			return nil, errors.New("the gripper is on fire")
		}
		return map[string]any{"actions": mustArray(t, []float32{1, 2}, 1, 2)}, nil
	})})
	c := dialT(t, addr, nil)
	if _, err := c.Infer(ctx10(t), map[string]any{}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Infer(ctx10(t), map[string]any{})
	var se *ServerError
	if !errors.As(err, &se) || se.LastLine != "the gripper is on fire" || !strings.HasPrefix(err.Error(), "openpi: server error: the gripper is on fire") {
		t.Fatalf("got %v, want the policy's error as a ServerError", err)
	}
	_, err = c.Infer(ctx10(t), map[string]any{})
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "ended earlier") {
		t.Errorf("after the server's error: %v", err)
	}
}

func TestPolicyPanic(t *testing.T) {
	addr := startServer(t, &Server{Policy: PolicyFunc(func(ctx context.Context, obs map[string]any) (map[string]any, error) {
		var m map[string]int
		m["x"] = 1 // a panic
		return nil, nil
	})})
	c := dialT(t, addr, nil)
	_, err := c.Infer(ctx10(t), nil)
	var se *ServerError
	if !errors.As(err, &se) || !strings.HasPrefix(se.LastLine, "panic: assignment to entry in nil map") || !strings.Contains(se.Traceback, "goroutine") {
		t.Fatalf("got %v", err)
	}
}

func TestServerErrorText(t *testing.T) {
	tb := "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nValueError: bad shape\n"
	e := &ServerError{Traceback: tb}
	if want := "openpi: server error: ValueError: bad shape\n" + strings.TrimRight(tb, "\n"); e.Error() != want {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
	if got := (&ServerError{}).Error(); got != "openpi: server error: (no message)" {
		t.Errorf("empty: %q", got)
	}
}

func TestHealthz(t *testing.T) {
	addr := startServer(t, &Server{Policy: Echo})
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "OK\n" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
}

func TestAPIKeyAndHeaders(t *testing.T) {
	got := make(chan http.Header, 1)
	s := &Server{Policy: Echo}
	addr := serveHTTP(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case got <- r.Header.Clone():
		default:
		}
		s.ServeHTTP(w, r)
	})
	c := dialT(t, "ws://"+addr+"/", &DialOptions{APIKey: "s3cret", Header: http.Header{"X-Robot": {"arm-7"}}})
	h := <-got
	if h.Get("Authorization") != "Api-Key s3cret" || h.Get("X-Robot") != "arm-7" {
		t.Errorf("headers %v", h)
	}
	c.Close()
}

func TestNotWebsocket(t *testing.T) {
	addr := serveHTTP(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	_, err := Dial(ctx10(t), addr, nil)
	if !errors.Is(err, ErrNotWebsocket) || !strings.Contains(err.Error(), "200 OK") {
		t.Errorf("HTTP server: got %v", err)
	}
	// A peer that is not HTTP at all.
	l2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	go func() {
		conn, err := l2.Accept()
		if err == nil {
			conn.Write([]byte("SSH-2.0-OpenSSH\r\n\r\n"))
			conn.Close()
		}
	}()
	if _, err = Dial(ctx10(t), l2.Addr().String(), nil); !errors.Is(err, ErrNotWebsocket) {
		t.Errorf("non-HTTP peer: got %v", err)
	}
}

func TestClosed(t *testing.T) {
	addr := startServer(t, &Server{Policy: Echo})
	c := dialT(t, addr, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	_, err := c.Infer(ctx10(t), nil)
	if !errors.Is(err, net.ErrClosed) || !errors.Is(err, os.ErrClosed) {
		t.Errorf("got %v, want net.ErrClosed", err)
	}
}

func TestServerGoes(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- (&Server{Policy: Echo}).Serve(ctx, l) }()
	c := dialT(t, l.Addr().String(), nil)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, err = c.Infer(ctx10(t), map[string]any{"x": int64(1)})
	if err == nil || !(errors.Is(err, io.EOF) || strings.Contains(err.Error(), "closed")) {
		t.Errorf("got %v, want a closed connection", err)
	}
	if _, err2 := c.Infer(ctx10(t), nil); err2 == nil || !strings.Contains(err2.Error(), "ended earlier") {
		t.Errorf("second call: %v", err2)
	}
}

func TestWait(t *testing.T) {
	// A port nobody listens on, which a server takes after the client has
	// started waiting.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	if _, err := Dial(ctx10(t), addr, nil); err == nil {
		t.Fatal("dialled a closed port")
	}
	dialed := make(chan error, 1)
	go func() {
		c, err := Dial(ctx10(t), addr, &DialOptions{Wait: true})
		if err == nil {
			c.Close()
		}
		dialed <- err
	}()
	time.Sleep(200 * time.Millisecond) // let it be refused at least once
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go (&Server{Policy: Echo}).Serve(ctx, l)
	if err := <-dialed; err != nil {
		t.Fatal(err)
	}
	// Waiting ends with its context.
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	l2, _ := net.Listen("tcp", "127.0.0.1:0")
	addr2 := l2.Addr().String()
	l2.Close()
	if _, err := Dial(short, addr2, &DialOptions{Wait: true}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the deadline", err)
	}
}

func TestMaxSize(t *testing.T) {
	addr := startServer(t, &Server{Policy: Echo, MaxSize: 1000})
	c := dialT(t, addr, &DialOptions{MaxSize: 2000})
	// Over the server's limit: it closes with 1009.
	_, err := c.Infer(ctx10(t), map[string]any{"x": make([]byte, 1500)})
	if !errors.Is(err, ndarray.ErrTooLarge) || !strings.Contains(err.Error(), "MessageTooBig") {
		t.Errorf("over the server's limit: %v", err)
	}
	// Over the client's limit: the echo of 1500 bytes to a client of 1000.
	c2 := dialT(t, startServer(t, &Server{Policy: Echo}), &DialOptions{MaxSize: 1000})
	_, err = c2.Infer(ctx10(t), map[string]any{"x": make([]byte, 1500)})
	if !errors.Is(err, ndarray.ErrTooLarge) {
		t.Errorf("over the client's limit: %v", err)
	}
}

func TestUnsendable(t *testing.T) {
	c := dialT(t, startServer(t, &Server{Policy: Echo}), nil)
	cplx, _ := ndarray.Zeros(ndarray.MustParseDType("<c8"), 2)
	if _, err := c.Infer(ctx10(t), map[string]any{"z": cplx}); err == nil {
		t.Fatal("sent a complex array, which openpi's packer refuses")
	}
	self := map[string]any{}
	self["me"] = self
	if _, err := c.Infer(ctx10(t), self); !errors.Is(err, ndarray.ErrTooDeep) {
		t.Errorf("a map that holds itself: %v", err)
	}
	// Nothing was sent: the client still works, and other Go values go
	// through the root package.
	action, err := c.Infer(ctx10(t), map[string]any{"v": []float64{1, 2}, "s": struct{ A int }{3}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(action["v"], []any{1.0, 2.0}) || !reflect.DeepEqual(action["s"], map[string]any{"A": int64(3)}) {
		t.Errorf("got %#v", action)
	}
}

// TestZeroClient: the zero Client fails its calls, and closes.
func TestZeroClient(t *testing.T) {
	var c Client
	if _, err := c.Infer(ctx10(t), nil); err == nil || !strings.Contains(err.Error(), "Dial") {
		t.Errorf("Infer: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if c.Metadata() != nil {
		t.Errorf("Metadata: %v", c.Metadata())
	}
}

// TestZeroServer: a Server without a Policy does not serve (it would
// drive a robot with its own observations): Serve fails at once, having
// closed its listener, and ServeHTTP answers the handshake with 500, its
// reason logged where a nil ErrorLog logs, the standard logger.
func TestZeroServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Server{}).Serve(context.Background(), l); err == nil || !strings.Contains(err.Error(), "no Policy") {
		t.Errorf("Serve: %v", err)
	}
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the listener after Serve: %v", err)
	}

	var logged strings.Builder
	defer log.SetOutput(log.Writer())
	log.SetOutput(&logged)
	addr := serveHTTP(t, (&Server{}).ServeHTTP)
	_, err = Dial(ctx10(t), addr, nil)
	if !errors.Is(err, ErrNotWebsocket) || !strings.Contains(err.Error(), "500") {
		t.Errorf("Dial: %v", err)
	}
	if !strings.Contains(logged.String(), "no Policy") {
		t.Errorf("the standard logger got %q", logged.String())
	}
}
