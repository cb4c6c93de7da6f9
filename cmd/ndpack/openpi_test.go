package main

import (
	"bufio"
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/openpi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openpiServer serves policy on 127.0.0.1 for the test's length.
func openpiServer(t *testing.T, s *openpi.Server) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l.Addr().String()
}

func writeNPZ(t *testing.T, name string, arrays ...npybridge.NamedArray) {
	require.NoError(t, npybridge.WriteNPZFile(name, arrays, false))
}

func TestOpenpiCommand(t *testing.T) {
	dir := t.TempDir()
	img, _ := ndarray.FromSlice([]uint8{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	state, _ := ndarray.FromSlice([]float32{0.5, -1}, 2)
	obsFile := filepath.Join(dir, "obs.npz")
	writeNPZ(t, obsFile, npybridge.NamedArray{Name: "observation/image", Array: img}, npybridge.NamedArray{Name: "state", Array: state})
	jsonFile := filepath.Join(dir, "prompt.json")
	require.NoError(t, os.WriteFile(jsonFile, []byte(`{"prompt": "pick up the fork", "episode": 3, "gain": 0.5}`), 0o644))

	seen := make(chan map[string]any, 16)
	actions, _ := ndarray.FromSlice([]float32{1, 2, 3, 4, 5, 6}, 3, 2)
	addr := openpiServer(t, &openpi.Server{
		Metadata: map[string]any{"name": "test policy"},
		Policy: openpi.PolicyFunc(func(_ context.Context, obs map[string]any) (map[string]any, error) {
			if obs["prompt"] == "fail" {
				return nil, errors.New("Traceback (most recent call last):\n  File \"policy.py\"\nValueError: no fork")
			}
			select {
			case seen <- map[string]any{"prompt": obs["prompt"], "episode": obs["episode"], "gain": obs["gain"],
				"image": obs["observation"].(map[string]any)["image"].(*ndarray.Array).Clone()}:
			default:
			}
			return map[string]any{"actions": actions, "extra": map[string]any{"gripper": state}, "note": "ok"}, nil
		}),
	})

	r := cli(t, nil, "openpi", addr)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "  name: \"test policy\"\n", r.stdout)

	out := filepath.Join(dir, "action.npz")
	r = cli(t, nil, "openpi", "--json", jsonFile, "ws://"+addr, obsFile, out)
	require.Equal(t, 0, r.code, r.stderr)
	got := <-seen
	assert.Equal(t, "pick up the fork", got["prompt"])
	assert.Equal(t, int64(3), got["episode"])
	assert.Equal(t, 0.5, got["gain"])
	assert.True(t, img.Equal(got["image"].(*ndarray.Array)), "the image as sent")
	assert.Contains(t, r.stdout, "actions: <f4 (3, 2)")
	saved, err := npybridge.ReadOptions{}.ReadNPZFile(out)
	require.NoError(t, err)
	require.Len(t, saved, 2)
	assert.Equal(t, "actions", saved[0].Name)
	assert.True(t, actions.Equal(saved[0].Array))
	assert.Equal(t, "extra/gripper", saved[1].Name)
	assert.True(t, state.Equal(saved[1].Array))

	// The whole action as msgpack, arrays as openpi's maps; OBS as msgpack.
	obsMsgpack := filepath.Join(dir, "obs.msgpack")
	b, err := ndpack.MessageOptions{}.MarshalMessage(map[string]any{"observation": map[string]any{"image": img}, "prompt": "from msgpack"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(obsMsgpack, b, 0o644))
	outMsgpack := filepath.Join(dir, "action.mpk")
	r = cli(t, nil, "openpi", addr, obsMsgpack, outMsgpack)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "from msgpack", (<-seen)["prompt"])
	var action map[string]any
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(readFile(t, outMsgpack), &action))
	assert.True(t, actions.Equal(action["actions"].(*ndarray.Array)))
	assert.Equal(t, "ok", action["note"])
	assert.Contains(t, action, "server_timing")
	assert.Contains(t, string(readFile(t, outMsgpack)), "__ndarray__")

	r = cli(t, nil, "openpi", "--repeat", "5", addr, obsFile)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `\n5 calls: min [0-9.]+ ms, median [0-9.]+ ms, p99 [0-9.]+ ms\n$`, r.stdout)

	// The policy's error: its traceback, then one ndpack line; no file.
	require.NoError(t, os.WriteFile(jsonFile, []byte(`{"prompt": "fail"}`), 0o644))
	failed := filepath.Join(dir, "failed.npz")
	r = cli(t, nil, "openpi", "--json", jsonFile, addr, obsFile, failed)
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "Traceback (most recent call last):\n"), r.stderr)
	assert.True(t, strings.HasSuffix(r.stderr, "\nValueError: no fork\nndpack: openpi: server error: ValueError: no fork\n"), r.stderr)
	assert.NoFileExists(t, failed)
}

func TestOpenpiCommandErrors(t *testing.T) {
	dir := t.TempDir()
	obs := filepath.Join(dir, "obs.npz")
	a, _ := ndarray.FromSlice([]int64{1}, 1)
	writeNPZ(t, obs, npybridge.NamedArray{Name: "x", Array: a})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	l.Close()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"openpi"}, 2, "name the server"},
		{[]string{"openpi", closed, filepath.Join(dir, "obs.npy")}, 2, "OBS must be an .npz"},
		{[]string{"openpi", closed, obs, filepath.Join(dir, "a.npy")}, 2, "ACTION must be an .npz"},
		{[]string{"openpi", "--repeat", "0", closed, obs}, 2, "--repeat 0"},
		{[]string{"openpi", "--json", "x.json", closed}, 2, "name OBS"},
		{[]string{"openpi", "serve"}, 2, "--addr"},
		{[]string{"openpi", "serve", "--addr", "127.0.0.1:0"}, 2, "one of --echo and --replay"},
		{[]string{"openpi", "serve", "--addr", "127.0.0.1:0", "--echo", "--replay", obs}, 2, "one of --echo and --replay"},
		{[]string{"openpi", "--timeout", "5s", closed}, 1, "connection refused"},
		{[]string{"openpi", closed, filepath.Join(dir, "missing.npz")}, 1, "missing.npz"},
	} {
		r := cli(t, nil, c.args...)
		assert.Equal(t, c.code, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.msg, "%v", c.args)
		if c.code == 1 {
			assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			assert.True(t, strings.HasPrefix(r.stderr, "ndpack: "), r.stderr)
		}
	}
}

// startServe runs "ndpack openpi serve" with args and returns the address
// it prints; the process is killed when the test ends.
func startServe(t *testing.T, args ...string) string {
	_, url, _ := startServeCmd(t, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	return url
}

// startServeCmd runs "ndpack openpi serve" with args and returns it, the
// URL it prints and its log; the process is killed when the test ends.
func startServeCmd(t *testing.T, args ...string) (*exec.Cmd, string, *hostile.Log) {
	cmd := exec.Command(ndpackBin, append([]string{"openpi", "serve"}, args...)...)
	var logged hostile.Log
	cmd.Stderr = &logged
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "serving on ")
	require.True(t, ok, line)
	return cmd, url, &logged
}

func TestOpenpiServe(t *testing.T) {
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta.json")
	require.NoError(t, os.WriteFile(meta, []byte(`{"name": "echo", "horizon": 10}`), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	c, err := openpi.Dial(ctx, startServe(t, "--echo", "--metadata", meta), nil)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, map[string]any{"name": "echo", "horizon": int64(10)}, c.Metadata())
	img, _ := ndarray.FromSlice([]uint8{9, 8, 7}, 1, 3)
	action, err := c.Infer(ctx, map[string]any{"image": img, "prompt": "hi"})
	require.NoError(t, err)
	assert.True(t, img.Equal(action["image"].(*ndarray.Array)))
	assert.Equal(t, "hi", action["prompt"])

	actions, _ := ndarray.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	replay := filepath.Join(dir, "actions.npz")
	writeNPZ(t, replay, npybridge.NamedArray{Name: "actions", Array: actions}, npybridge.NamedArray{Name: "arm/gripper", Array: img})
	c2, err := openpi.Dial(ctx, startServe(t, "--replay", replay), nil)
	require.NoError(t, err)
	defer c2.Close()
	assert.Equal(t, map[string]any{}, c2.Metadata())
	for range 2 {
		action, err := c2.Infer(ctx, map[string]any{"image": img})
		require.NoError(t, err)
		assert.True(t, actions.Equal(action["actions"].(*ndarray.Array)))
		assert.True(t, img.Equal(action["arm"].(map[string]any)["gripper"].(*ndarray.Array)))
		assert.NotContains(t, action, "image")
	}
	// The command's own client, against the command's server.
	obs := filepath.Join(dir, "obs.npz")
	writeNPZ(t, obs, npybridge.NamedArray{Name: "image", Array: img})
	out := filepath.Join(dir, "out.npz")
	r := cli(t, nil, "openpi", startServe(t, "--echo"), obs, out)
	require.Equal(t, 0, r.code, r.stderr)
	saved, err := npybridge.ReadOptions{}.ReadNPZFile(out)
	require.NoError(t, err)
	require.Len(t, saved, 1)
	assert.True(t, img.Equal(saved[0].Array))
}

func TestOpenpiCommandAPIKeyAndWait(t *testing.T) {
	// A port nobody listens on yet: the command waits for it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(ndpackBin, "openpi", "--wait", "--timeout", "20s", "--api-key", "s3cret", addr)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	time.Sleep(300 * time.Millisecond) // refused at least once
	l, err = net.Listen("tcp", addr)
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	auth := make(chan string, 1)
	s := &openpi.Server{Policy: openpi.Echo, Metadata: map[string]any{"ok": true}}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case auth <- r.Header.Get("Authorization"):
		default:
		}
		s.ServeHTTP(w, r)
	})}
	go hs.Serve(l)
	defer hs.Close()
	require.NoError(t, cmd.Wait(), stderr.String())
	assert.Equal(t, "  ok: true\n", stdout.String())
	assert.Equal(t, "Api-Key s3cret", <-auth)
}

// rawControl reports whether s holds a character that would drive a
// terminal: a control character other than a newline, or invalid UTF-8.
func rawControl(s string) bool {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return true
			}
		}
		if r != '\n' && (r < 0x20 || r >= 0x7f && r < 0xa0) {
			return true
		}
	}
	return false
}

// TestOpenpiCommandEscapesPeerText: a server's metadata keys and values,
// action keys and traceback reach the terminal with their control
// characters escaped (an OSC 52 clipboard write among them), keys that
// hold one quoted.
func TestOpenpiCommandEscapesPeerText(t *testing.T) {
	const osc52 = "\x1b]52;c;cm0gLXJmIH4=\a"
	a, _ := ndarray.FromSlice([]float32{1}, 1)
	addr := openpiServer(t, &openpi.Server{
		Metadata: map[string]any{osc52: "x\u009b2Jy", "list": []any{map[string]any{"\x1b[2J": 1}}},
		Policy: openpi.PolicyFunc(func(_ context.Context, obs map[string]any) (map[string]any, error) {
			if obs["fail"] != nil {
				return nil, errors.New("Traceback:\n  " + osc52 + "\r\nValueError: \x1b[31mred")
			}
			return map[string]any{"act\x1b[8m": a, "nested": map[string]any{"\u202ek": "v"}}, nil
		}),
	})
	r := cli(t, nil, "openpi", addr)
	require.Equal(t, 0, r.code, r.stderr)
	assert.False(t, rawControl(r.stdout), "%q", r.stdout)
	assert.Contains(t, r.stdout, `  "\x1b]52;c;cm0gLXJmIH4=\a": "x\u009b2Jy"`)

	dir := t.TempDir()
	obs := filepath.Join(dir, "obs.npz")
	writeNPZ(t, obs, npybridge.NamedArray{Name: "x", Array: a})
	r = cli(t, nil, "openpi", addr, obs)
	require.Equal(t, 0, r.code, r.stderr)
	assert.False(t, rawControl(r.stdout), "%q", r.stdout)
	assert.Contains(t, r.stdout, `  "act\x1b[8m": <f4 (1,)`)
	assert.Contains(t, r.stdout, `    "\u202ek": "v"`)

	fail := filepath.Join(dir, "fail.json")
	require.NoError(t, os.WriteFile(fail, []byte(`{"fail": true}`), 0o644))
	r = cli(t, nil, "openpi", "--json", fail, addr, obs)
	assert.Equal(t, 1, r.code)
	assert.False(t, rawControl(r.stderr), "%q", r.stderr)
	assert.Equal(t, "Traceback:\n  \\x1b]52;c;cm0gLXJmIH4=\\a\\r\nValueError: \\x1b[31mred\nndpack: openpi: server error: ValueError: \\x1b[31mred\n", r.stderr)
}

// TestOpenpiCommandActionKeysNameNoFile: action keys that would name a
// file rather than a member (an absolute path, a ".." element, a NUL,
// which numpy's loader cuts at) are refused: exit 1, one line, nothing
// written anywhere.
func TestOpenpiCommandActionKeysNameNoFile(t *testing.T) {
	a, _ := ndarray.FromSlice([]float32{1}, 1)
	keys := make(chan map[string]any, 1)
	addr := openpiServer(t, &openpi.Server{Policy: openpi.PolicyFunc(func(context.Context, map[string]any) (map[string]any, error) {
		return <-keys, nil
	})})
	dir := t.TempDir()
	obs := filepath.Join(dir, "obs.npz")
	writeNPZ(t, obs, npybridge.NamedArray{Name: "x", Array: a})
	work := filepath.Join(dir, "a", "b", "c")
	require.NoError(t, os.MkdirAll(work, 0o755))
	for _, c := range []struct {
		action map[string]any
		quoted string
	}{
		{map[string]any{"../../../x": a}, `../../../x holds a ".." element`},
		{map[string]any{"/abs/path": a}, `/abs/path starts with "/"`},
		{map[string]any{"a\x00b": a}, `"a\x00b" holds a control character`},
		{map[string]any{"ok": a, "..": map[string]any{"x": a}}, `../x holds a ".." element`},
		{map[string]any{`..\..\x`: a}, `..\..\x holds a ".." element`},
		{map[string]any{"bell\a": a}, `"bell\a" holds a control character`},
	} {
		keys <- c.action
		out := filepath.Join(work, "act.npz")
		cmd := exec.Command(ndpackBin, "openpi", addr, obs, "act.npz")
		cmd.Dir = work
		r := runCmd(t, cmd, nil)
		assert.Equal(t, 1, r.code, "%v: %s", c.action, r.stderr)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
		assert.Contains(t, r.stderr, "the server's action key "+c.quoted)
		assert.False(t, rawControl(r.stderr), "%q", r.stderr)
		assert.NoFileExists(t, out)
	}
	var found []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = append(found, p)
		}
		return nil
	})
	assert.Equal(t, []string{obs}, found, "files written")
	// A good key still writes.
	keys <- map[string]any{"arm": map[string]any{"joints": a}}
	r := cli(t, nil, "openpi", addr, obs, filepath.Join(dir, "good.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	saved, err := npybridge.ReadOptions{}.ReadNPZFile(filepath.Join(dir, "good.npz"))
	require.NoError(t, err)
	assert.Equal(t, "arm/joints", saved[0].Name)
}

// TestOpenpiBarePort: a bare PORT names 127.0.0.1:PORT, for the client as
// "ndpack yaq 39111" takes one, and for serve's --addr; and the server
// logs nothing of clients that leave as they should, where it logged
// "failed to get reader: failed to read frame header: EOF" for each.
func TestOpenpiBarePort(t *testing.T) {
	_, url, logged := startServeCmd(t, "--addr", "0", "--echo")
	port, ok := strings.CutPrefix(url, "ws://127.0.0.1:")
	require.True(t, ok, url)
	r := cli(t, nil, "openpi", port)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "\n", r.stdout, "the echo server's empty metadata")
	dir := t.TempDir()
	obs := filepath.Join(dir, "obs.npz")
	a, _ := ndarray.FromSlice([]int64{1}, 1)
	writeNPZ(t, obs, npybridge.NamedArray{Name: "x", Array: a})
	r = cli(t, nil, "openpi", "--repeat", "3", port, obs)
	require.Equal(t, 0, r.code, r.stderr)
	time.Sleep(200 * time.Millisecond) // for a line the server would log
	assert.Empty(t, logged.String(), "the server's log")
}
