package gr00tpolicy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// srcVar names a checkout of NVIDIA's Isaac-GR00T (or any folder holding
// gr00t/policy/server_client.py): with it set, the interop tests run
// GR00T's own MsgSerializer, PolicyServer and PolicyClient, unmodified,
// beside stand-ins for the three names it imports; without it, the
// wire's few lines in testdata/peer.py speak for them.
const srcVar = "NDPACK_GR00T_SRC"

// peerKinds are the Python peers to test against: the wire in peer.py
// always, GR00T's own code when srcVar names it.
func peerKinds(t *testing.T) []string {
	t.Helper()
	pypeer.RequireModule(t, "zmq", "python3-zmq")
	kinds := []string{"wire"}
	if os.Getenv(srcVar) != "" {
		kinds = append(kinds, "GR00T")
	}
	return kinds
}

// peerEnv is the environment of a peer of the given kind: for "GR00T", a
// folder holding the stand-ins and GR00T's server_client.py, copied from
// srcVar's folder for the test.
func peerEnv(t testing.TB, kind string) []string {
	t.Helper()
	env := os.Environ()
	if kind != "GR00T" {
		return env
	}
	src := filepath.Join(os.Getenv(srcVar), "gr00t", "policy", "server_client.py")
	code, err := os.ReadFile(src)
	if err != nil {
		t.Fatalf("%s names no GR00T source: %v", srcVar, err)
	}
	dir := t.TempDir()
	err = filepath.WalkDir("testdata/standins", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// The stand-ins are the Python package gr00t's three modules,
		// kept under testdata/standins and copied into dir/gr00t.
		rel, _ := filepath.Rel("testdata/standins", path)
		rel = filepath.Join("gr00t", rel)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gr00t", "policy", "server_client.py"), code, 0o644); err != nil {
		t.Fatal(err)
	}
	return append(env, "GR00T_STANDINS="+dir)
}

// peer is a running testdata/peer.py.
type peer struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	stderr *bytes.Buffer
	done   chan error
}

// startPeer starts peer.py with args; it is killed, by its process id,
// when the test ends.
func startPeer(t testing.TB, kind string, args ...string) *peer {
	t.Helper()
	p, _ := start(t, kind, false, args...)
	return p
}

// startPeerWithInput is startPeer with a pipe to the peer's standard input.
func startPeerWithInput(t testing.TB, kind string, args ...string) (*peer, io.Writer) {
	t.Helper()
	return start(t, kind, true, args...)
}

func start(t testing.TB, kind string, input bool, args ...string) (*peer, io.Writer) {
	t.Helper()
	cmd := exec.Command(pypeer.Python, append([]string{"-u", "testdata/peer.py"}, args...)...)
	cmd.Env = peerEnv(t, kind)
	p := &peer{cmd: cmd, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var in io.WriteCloser
	if input {
		if in, err = cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.out = bufio.NewReader(out)
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if in != nil {
			in.Close()
		}
		cmd.Process.Kill()
		<-p.done
	})
	return p, in
}

// line reads the peer's next line of output, within 60 s.
func (p *peer) line(t testing.TB) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		s, _ := p.out.ReadString('\n')
		got <- s
	}()
	select {
	case s := <-got:
		if s == "" {
			t.Fatalf("the Python peer ended: %s", p.stderr)
		}
		return strings.TrimSpace(s)
	case <-time.After(60 * time.Second):
		t.Fatalf("the Python peer printed nothing for 60 s: %s", p.stderr)
	}
	return ""
}

// wait waits, up to 60 s, for the peer to exit, and fails the test if it
// did not exit 0.
func (p *peer) wait(t testing.TB) {
	t.Helper()
	select {
	case err := <-p.done:
		p.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("the Python peer failed: %v\n%s", err, p.stderr)
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the Python peer did not exit within 60 s: %s", p.stderr)
	}
}

// must is a test value that cannot fail to be made.
func must(a *ndarray.Array, err error) *ndarray.Array {
	if err != nil {
		panic(err)
	}
	return a
}

// image is peer.py's image(k): 224x224x3 bytes (i*7+k) mod 256.
func image(k int) *ndarray.Array {
	b := make([]uint8, 224*224*3)
	for i := range b {
		b[i] = uint8((i*7 + k) % 256)
	}
	return must(ndarray.FromSlice(b, 224, 224, 3))
}

// observation is peer.py's observation().
func observation() map[string]any {
	f32 := make([]float32, 32)
	for i := range f32 {
		f32[i] = float32(i)/8 - 1
	}
	f64 := make([]float64, 7)
	for i := range f64 {
		f64[i] = float64(i) * -1.5
	}
	i64 := make([]int64, 6)
	for i := range i64 {
		i64[i] = int64(i-3) << 40
	}
	return map[string]any{
		"language": map[string]any{"annotation.human.task_description": "pick up the red cube \u2713"},
		"state": map[string]any{
			"f32":   must(ndarray.FromSlice(f32, 32)),
			"f64":   must(ndarray.FromSlice(f64, 7)),
			"flags": must(ndarray.FromSlice([]bool{true, false, true}, 3)),
			"i64":   must(ndarray.FromSlice(i64, 6)),
			"scale": ndarray.Scalar(float32(0.5)),
			"step":  ndarray.Scalar(int64(7)),
		},
		"video": map[string]any{"cam0": image(0), "cam1": image(1), "cam2": image(2)},
	}
}

// modality is peer.py's modality().
func modality() map[string]ModalityConfig {
	return map[string]ModalityConfig{
		"action": {
			DeltaIndices:         []int{0, 1, 2, -1},
			ModalityKeys:         []string{"action.x", "action.gripper"},
			MeanStdEmbeddingKeys: []string{"action.x"},
			ActionConfigs: []ActionConfig{
				{Rep: "RELATIVE", Type: "EEF", Format: "XYZ_ROT6D", StateKey: "state.f32"},
				{Rep: "ABSOLUTE", Type: "NON_EEF", Format: "DEFAULT"},
			},
		},
		"video": {DeltaIndices: []int{0}, ModalityKeys: []string{"video.cam0", "video.cam1", "video.cam2"}},
	}
}

// sameValue reports where got differs from want: arrays by dtype, shape
// and bytes, maps and lists item by item, other values as Go compares
// them, integers by value whatever their type.
func sameValue(want, got any, where string) error {
	switch w := want.(type) {
	case *ndarray.Array:
		g, ok := got.(*ndarray.Array)
		if !ok {
			return errors.New(where + ": not an array")
		}
		if !w.Equal(g) {
			return errors.New(where + ": " + g.String() + " for " + w.String())
		}
		return nil
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return errors.New(where + ": not a map of the same keys")
		}
		for k, v := range w {
			if err := sameValue(v, g[k], where+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return errors.New(where + ": not a list of the same length")
		}
		for i := range w {
			if err := sameValue(w[i], g[i], where+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		return nil
	}
	if wi, ok := asInt(want); ok {
		if gi, ok := asInt(got); ok && gi == wi {
			return nil
		}
	}
	if !reflect.DeepEqual(want, got) {
		return errors.New(where + ": " + kindOf(got) + " " + strconv.Quote(fmtAny(got)) + " for " + fmtAny(want))
	}
	return nil
}

func fmtAny(v any) string { return fmt.Sprint(v) }

// recorder is a Policy that keeps the observations it is given, answers
// each with itself and {"calls": N, "options": options} as peer.py's
// client expects, refuses one holding "fail", and answers reset with {}.
type recorder struct {
	mu   sync.Mutex
	seen []map[string]any
}

func (r *recorder) GetAction(_ context.Context, obs, options map[string]any) (map[string]any, map[string]any, error) {
	if f, ok := obs["fail"]; ok {
		return nil, nil, errors.New("the policy refuses: " + f.(string))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, obs)
	return obs, map[string]any{"calls": len(r.seen), "options": noneIfNil(options)}, nil
}

func (r *recorder) Reset(context.Context, map[string]any) (map[string]any, error) {
	return map[string]any{}, nil
}

// listen listens on a port of 127.0.0.1.
func listen(t testing.TB) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// serving is a Server's Serve running until the test ends.
type serving struct {
	done chan struct{}
	err  error
}

// serve runs s on l until the test ends.
func serve(t testing.TB, s *Server, l net.Listener) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sv := &serving{done: make(chan struct{})}
	go func() {
		sv.err = s.Serve(ctx, l)
		close(sv.done)
	}()
	t.Cleanup(func() {
		cancel()
		if _, ok := sv.wait(10 * time.Second); !ok {
			t.Error("Serve did not return within 10 s of its context ending")
		}
	})
	return sv
}

// wait waits up to d for Serve to return, and returns what it returned.
func (sv *serving) wait(d time.Duration) (error, bool) {
	select {
	case <-sv.done:
		return sv.err, true
	case <-time.After(d):
		return nil, false
	}
}

// GR00T's PolicyClient against our Server: ping, the modality config,
// get_action with three camera images, state arrays of four dtypes, 0-d
// arrays, nested maps and a string, all values equal both ways; reset; an
// unknown endpoint, a policy's error and a wrong token each answered as
// GR00T's server answers them; and kill, which stops Serve.
func TestPythonClientAgainstServer(t *testing.T) {
	for _, kind := range peerKinds(t) {
		t.Run(kind, func(t *testing.T) {
			rec := &recorder{}
			var logs bytes.Buffer
			s := &Server{Policy: rec, Modality: modality(), Token: "s3cret", ErrorLog: newLogger(&logs)}
			l := listen(t)
			done := serve(t, s, l)
			p := startPeer(t, kind, "client", strconv.Itoa(l.Addr().(*net.TCPAddr).Port), "s3cret")
			for _, want := range []string{"ping", "modality", "get_action", "reset", "unknown", "policy", "token", "kill"} {
				if got := p.line(t); got != want {
					t.Fatalf("the client printed %q where %q was due: %s", got, want, p.stderr)
				}
			}
			p.wait(t)
			if err, ok := done.wait(10 * time.Second); !ok {
				t.Fatal("Serve did not return within 10 s of a kill")
			} else if !errors.Is(err, ErrKilled) {
				t.Errorf("Serve returned %v after kill, want ErrKilled", err)
			}
			if len(rec.seen) != 1 {
				t.Fatalf("the policy saw %d observations, want 1", len(rec.seen))
			}
			if err := sameValue(observation(), rec.seen[0], "observation"); err != nil {
				t.Error(err)
			}
			for _, want := range []string{"Unknown endpoint: no_such_endpoint", "the policy refuses: on purpose"} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("the log does not say %q:\n%s", want, logs.String())
				}
			}
		})
	}
}

// Our Client against GR00T's PolicyServer serving a small numpy policy:
// ping, the modality config, get_action's values, reset, the token check,
// an unknown endpoint, a policy's error, and kill, after which the server
// process ends.
func TestClientAgainstPythonServer(t *testing.T) {
	for _, kind := range peerKinds(t) {
		t.Run(kind, func(t *testing.T) {
			l := listen(t)
			port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
			l.Close() // for the peer to bind; nothing else here takes ports
			p := startPeer(t, kind, "server", port, "s3cret")
			p.line(t)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			c, err := Dial(ctx, "127.0.0.1:"+port, &DialOptions{Token: "s3cret", Wait: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			mc, err := c.ModalityConfig(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(mc, modality()) {
				t.Errorf("modality config %+v, want %+v", mc, modality())
			}
			obs := observation()
			action, info, err := c.GetAction(ctx, obs, map[string]any{"temperature": 0.5})
			if err != nil {
				t.Fatal(err)
			}
			f32 := obs["state"].(map[string]any)["f32"].(*ndarray.Array)
			x, _ := ndarray.Values[float32](f32)
			doubled := make([]float32, len(x))
			for i, v := range x {
				doubled[i] = v * 2
			}
			want := map[string]any{"echo": obs, "action.x": must(ndarray.FromSlice(doubled, 4, 8))}
			if err := sameValue(want, action, "action"); err != nil {
				t.Error(err)
			}
			if err := sameValue(map[string]any{"calls": 1, "options": map[string]any{"temperature": 0.5}}, info, "info"); err != nil {
				t.Error(err)
			}
			r, err := c.Reset(ctx, nil)
			if err != nil || sameValue(map[string]any{"reset": true, "options": nil}, r, "reset") != nil {
				t.Errorf("reset: %v, %v", r, err)
			}
			var se *ServerError
			if _, err := c.Call(ctx, "no_such_endpoint", map[string]any{"x": 1}); !errors.As(err, &se) || se.Text != "Unknown endpoint: no_such_endpoint" {
				t.Errorf("an unknown endpoint: %v", err)
			}
			if _, _, err := c.GetAction(ctx, map[string]any{"fail": "on purpose"}, nil); !errors.As(err, &se) || se.Text != "the policy refuses: on purpose" {
				t.Errorf("a policy's error: %v", err)
			}
			bad, err := Dial(ctx, "127.0.0.1:"+port, &DialOptions{Token: "wrong"})
			if err != nil {
				t.Fatal(err)
			}
			if err := bad.Ping(ctx); !errors.As(err, &se) || se.Text != "Unauthorized: Invalid API token" {
				t.Errorf("a wrong token: %v", err)
			}
			bad.Close()
			if err := c.Ping(ctx); err != nil {
				t.Errorf("ping after errors: %v", err)
			}
			if err := c.Kill(ctx); err != nil {
				t.Fatal(err)
			}
			p.wait(t)
		})
	}
}

// readPacked reads the messages peer.py pack writes: each its length (8
// bytes, little-endian) and its bytes.
func readPacked(t testing.TB, b []byte) [][]byte {
	t.Helper()
	var msgs [][]byte
	for len(b) > 0 {
		if len(b) < 8 {
			t.Fatalf("%d bytes after the last message", len(b))
		}
		n := binary.LittleEndian.Uint64(b)
		if uint64(len(b)-8) < n {
			t.Fatalf("a message of %d bytes in %d", n, len(b)-8)
		}
		msgs = append(msgs, b[8:8+n])
		b = b[8+n:]
	}
	return msgs
}

// The messages this package writes are byte for byte those MsgSerializer
// writes for the same values: a get_action request with its token, a
// modality config, a get_action answer.
func TestMessagesAreMsgSerializers(t *testing.T) {
	for _, kind := range peerKinds(t) {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(pypeer.Python, "testdata/peer.py", "pack")
			cmd.Env = peerEnv(t, kind)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("peer.py pack: %v\n%s", err, stderr.String())
			}
			msgs := readPacked(t, out)
			modalities := map[string]any{}
			for name, mc := range modality() {
				modalities[name] = mc.wire()
			}
			values := []any{
				ordered{{"endpoint", "get_action"}, {"data", ordered{{"observation", observation()}, {"options", nil}}}, {"api_token", "s3cret"}},
				modalities,
				[]any{map[string]any{"action.x": must(ndarray.FromSlice([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 2, 8))}, map[string]any{"calls": 1}},
			}
			if len(msgs) != len(values) {
				t.Fatalf("%d messages from the peer", len(msgs))
			}
			for i, v := range values {
				got, err := encode(nil, v)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, msgs[i]) {
					at := 0
					for at < min(len(got), len(msgs[i])) && got[at] == msgs[i][at] {
						at++
					}
					t.Errorf("message %d: %d bytes, MsgSerializer's %d; first difference at %d", i, len(got), len(msgs[i]), at)
				}
			}
		})
	}
}
