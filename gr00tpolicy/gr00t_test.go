package gr00tpolicy

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/zmtp"
	"github.com/ndpack/ndpack/ndarray"
)

// startServer serves s on a port of 127.0.0.1 until the test ends and
// returns its address.
func startServer(t testing.TB, s *Server) (string, *serving) {
	t.Helper()
	l := listen(t)
	return l.Addr().String(), serve(t, s, l)
}

func dialT(t testing.TB, addr string, opts *DialOptions) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, addr, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// Our client against our server: every endpoint, the token, handlers'
// errors and panics answered without breaking the lockstep, endpoints
// added and removed, and kill.
func TestClientAgainstServer(t *testing.T) {
	var logs bytes.Buffer
	s := &Server{Policy: Echo, Modality: modality(), Token: "t", ErrorLog: newLogger(&logs)}
	s.Handle("boom", func(context.Context, map[string]any) (any, error) { return nil, errors.New("it went \x1b[31mboom") })
	s.Handle("panic", func(context.Context, map[string]any) (any, error) { panic("on purpose") })
	s.Handle("sum", func(_ context.Context, data map[string]any) (any, error) {
		a, _ := asInt(data["a"])
		b, _ := asInt(data["b"])
		return a + b, nil
	})
	addr, done := startServer(t, s)
	c := dialT(t, addr, &DialOptions{Token: "t"})
	ctx := ctxT(t)
	if err := c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	obs := observation()
	action, info, err := c.GetAction(ctx, obs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameValue(obs, action, "action"); err != nil {
		t.Error(err)
	}
	if len(info) != 0 {
		t.Errorf("info %v", info)
	}
	if r, err := c.Reset(ctx, map[string]any{"seed": 3}); err != nil || len(r) != 0 {
		t.Errorf("reset: %v, %v", r, err)
	}
	mc, err := c.ModalityConfig(ctx)
	if err != nil || len(mc) != 2 || mc["action"].ActionConfigs[0].StateKey != "state.f32" || mc["video"].ActionConfigs != nil {
		t.Errorf("modality config: %+v, %v", mc, err)
	}
	if v, err := c.Call(ctx, "sum", map[string]any{"a": 2, "b": 40}); err != nil || sameValue(42, v, "sum") != nil {
		t.Errorf("sum: %v, %v", v, err)
	}
	var se *ServerError
	for _, tc := range []struct{ endpoint, text string }{
		{"boom", "it went \x1b[31mboom"},
		{"panic", "panic: on purpose"},
		{"nothing", "Unknown endpoint: nothing"},
	} {
		_, err := c.Call(ctx, tc.endpoint, nil)
		if !errors.As(err, &se) || se.Text != tc.text || se.Endpoint != tc.endpoint {
			t.Errorf("%s: %v", tc.endpoint, err)
		}
		if err != nil && strings.ContainsAny(err.Error(), "\x1b\n") {
			t.Errorf("%s: the error holds a control character: %q", tc.endpoint, err)
		}
	}
	if _, _, err := c.GetAction(ctx, nil, nil); !errors.As(err, &se) || !strings.Contains(se.Text, "observation is None, not a map") {
		t.Errorf("get_action without an observation: %v", err)
	}
	if _, err := c.Call(ctx, "get_action", map[string]any{"observation": map[string]any{}, "extra": 1}); !errors.As(err, &se) || se.Text != "get_action() got an unexpected keyword argument 'extra'" {
		t.Errorf("get_action with an extra argument: %v", err)
	}
	bad := dialT(t, addr, nil)
	if err := bad.Ping(ctx); !errors.As(err, &se) || se.Text != "Unauthorized: Invalid API token" {
		t.Errorf("no token: %v", err)
	}
	if !strings.Contains(logs.String(), "panic: on purpose") || !strings.Contains(logs.String(), "goroutine ") {
		t.Errorf("the panic was not logged with its stack:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "\x1b") {
		t.Errorf("the log holds an escape character:\n%s", logs.String())
	}
	s.Handle("kill", nil)
	if err := c.Kill(ctx); !errors.As(err, &se) || se.Text != "Unknown endpoint: kill" {
		t.Errorf("kill removed: %v", err)
	}
	s.Handle("kill", nil)
	s.mu.Lock()
	delete(s.handlers, "kill")
	s.mu.Unlock()
	if err := c.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err, ok := done.wait(10 * time.Second); !ok || !errors.Is(err, ErrKilled) {
		t.Errorf("after kill Serve returned %v (returned: %v)", err, ok)
	}
	if err := c.Ping(ctx); err == nil {
		t.Error("a ping after kill succeeded")
	}
}

// A call whose context ends closes its connection, and the next call
// makes one anew, as a REQ socket that timed out must be made anew.
func TestTimeoutRemakesTheConnection(t *testing.T) {
	release := make(chan struct{})
	s := &Server{Policy: Echo, ErrorLog: newLogger(&bytes.Buffer{})}
	s.Handle("slow", func(context.Context, map[string]any) (any, error) {
		<-release
		return "late", nil
	})
	addr, _ := startServer(t, s)
	c := dialT(t, addr, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Call(ctx, "slow", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call past its deadline: %v", err)
	}
	close(release)
	if err := c.Ping(ctxT(t)); err != nil {
		t.Fatalf("the call after a timeout: %v", err)
	}
	if v, err := c.Call(ctxT(t), "slow", nil); err != nil || v != "late" {
		t.Errorf("slow once released: %v, %v", v, err)
	}
}

// zeroValues: a zero Client's calls fail, and a Server without a Policy
// does not serve.
func TestZeroValues(t *testing.T) {
	var c Client
	if err := c.Ping(context.Background()); err != errNotDialed {
		t.Errorf("a zero Client: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("closing a zero Client: %v", err)
	}
	var s Server
	if err := s.Serve(context.Background(), listen(t)); err != errNoPolicy {
		t.Errorf("a Server without a Policy: %v", err)
	}
	cl := dialT(t, func() string { a, _ := startServer(t, &Server{Policy: Echo}); return a }(), nil)
	cl.Close()
	if err := cl.Ping(context.Background()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("a closed Client: %v", err)
	}
	if _, err := Dial(context.Background(), "nowhere", nil); err == nil || !strings.Contains(err.Error(), "HOST:PORT") {
		t.Errorf("a bad address: %v", err)
	}
}

// fakeREP is a REP peer that answers each request with what answer
// returns for it, until the test ends.
func fakeREP(t testing.TB, answer func(req []byte) [][]byte) string {
	t.Helper()
	l := listen(t)
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(30 * time.Second))
				z, err := zmtp.Handshake(nc, "REP", 1<<20)
				if err != nil {
					return
				}
				for {
					req, err := z.ReadMessage()
					if err != nil || len(req) != 2 {
						return
					}
					if err := z.WriteMessage(answer(req[1])...); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// npyOf is the .npy file of a, as np.save writes it.
func npyOf(t testing.TB, a *ndarray.Array) []byte {
	t.Helper()
	b, err := encode(nil, a)
	if err != nil {
		t.Fatal(err)
	}
	// encode wrote the array map: take its as_npy bytes back out.
	v, err := decode(b, nil)
	if err != nil || !v.(*ndarray.Array).Equal(a) {
		t.Fatalf("the array does not come back: %v", err)
	}
	i := bytes.Index(b, []byte("\x93NUMPY"))
	return b[i:]
}
