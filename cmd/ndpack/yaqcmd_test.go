package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/yaqtoml"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/yaq"
	"github.com/ndpack/ndpack/yaq/avro"
	"github.com/ndpack/ndpack/yaqrpc"
)

const testProtocol = `{"protocol": "testcam", "traits": ["is-daemon", "is-sensor"], "types": [` + avro.ArraySchema + `],
 "messages": {
  "id": {"request": [], "response": {"type": "map", "values": ["null", "string"]}},
  "get_measured": {"doc": "The image.", "request": [], "response": {"type": "map", "values": ["int", "double", "ndarray"]}},
  "set_position": {"request": [{"name": "position", "type": "double"}], "response": "null"},
  "get_position": {"request": [], "response": "double"},
  "get_spectrum": {"request": [], "response": "ndarray"},
  "get_config": {"request": [], "response": "string"}}}`

// testDaemon serves testProtocol: a 2048x2048 <u2 image, a position.
func testDaemon(t *testing.T) string {
	d, err := yaq.NewDaemon("cam", testProtocol)
	require.NoError(t, err)
	d.ErrorLog = log.New(io.Discard, "", 0)
	img := make([]uint16, 2048*2048)
	for i := range img {
		img[i] = uint16(i % 4096)
	}
	a, _ := ndarray.FromSlice(img, 2048, 2048)
	a, _ = a.ToOrder('<')
	position := 0.0
	require.NoError(t, d.Handle("get_measured", func(context.Context, []any) (any, error) {
		return map[string]any{"image": a, "measurement_id": 7}, nil
	}))
	require.NoError(t, d.Handle("set_position", func(_ context.Context, p []any) (any, error) { position = p[0].(float64); return nil, nil }))
	require.NoError(t, d.Handle("get_position", func(context.Context, []any) (any, error) { position += 1; return position, nil }))
	spectrum := make([]float64, 100)
	for i := range spectrum {
		spectrum[i] = float64(i * i)
	}
	sp, _ := ndarray.FromSlice(spectrum)
	require.NoError(t, d.Handle("get_spectrum", func(context.Context, []any) (any, error) { return sp, nil }))
	require.NoError(t, d.Handle("get_config", func(context.Context, []any) (any, error) {
		return "[cam]\nport = 39111\nmake = \"fake\"\n", nil
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	t.Cleanup(func() { d.Close() })
	return l.Addr().String()
}

func TestYaqCommand(t *testing.T) {
	addr := testDaemon(t)
	r := cli(t, nil, "yaq", addr)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "cam: a testcam daemon\ntraits: is-daemon, is-sensor\n")
	assert.Contains(t, r.stdout, "  set_position(position: double) -> null\n")
	assert.Contains(t, r.stdout, "  get_measured() -> map<[int, double, ndarray]>\n      The image.\n")

	r = cli(t, nil, "yaq", addr, "get_measured")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "  image: <u2 (2048, 2048): min 0, max 4095; mean 2047.5; [0 1 2 3 ...]\n  measurement_id: 7\n", r.stdout)

	dir := t.TempDir()
	npy, npz := filepath.Join(dir, "image.npy"), filepath.Join(dir, "all.npz")
	require.Equal(t, 0, cli(t, nil, "yaq", "--save", npy, addr, "get_measured").code)
	require.Equal(t, 0, cli(t, nil, "yaq", "--save", npz, addr, "get_measured").code)
	out := pypeer.Run(t, `
import numpy as np
a = np.load(sys.argv[1])
z = np.load(sys.argv[2])
print(a.dtype.str, a.shape, int(a[1, 2]), sorted(z.files), z["measurement_id"].dtype.str, z["measurement_id"].shape, int(z["measurement_id"]))
`, nil, npy, npz)
	assert.Equal(t, "<u2 (2048, 2048) 2050 ['image', 'measurement_id'] <i4 () 7\n", string(out), "the scalar beside the image is a 0-d member")

	r = cli(t, nil, "yaq", addr, "set_position", "0.5")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "yaq", addr, "set_position", `"far"`)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: "+addr+": yaq: value does not fit its schema: set_position: parameter \"position\": a string is not a double\n", r.stderr)
	r = cli(t, nil, "yaq", addr, "set_position", "far")
	assert.Equal(t, 2, r.code, "not JSON")
	r = cli(t, nil, "yaq", addr, "home")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `has no method "home"`)
	r = cli(t, nil, "yaq", "127.0.0.1:1")
	assert.Equal(t, 1, r.code)
	assert.Regexp(t, `^ndpack: 127.0.0.1:1: .*connection refused\n$`, r.stderr)
}

// --watch repeats the call until Ctrl-C.
func TestYaqWatch(t *testing.T) {
	addr := testDaemon(t)
	cmd := exec.Command(ndpackBin, "yaq", "--watch", "50ms", addr, "get_position")
	stdout, _ := cmd.StdoutPipe()
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	var values []string
	for lines.Scan() && len(values) < 3 {
		if l := lines.Text(); l != "" && !strings.HasPrefix(l, addr) {
			values = append(values, l)
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 130, ee.ExitCode())
	assert.Equal(t, []string{"1", "2", "3"}, values)
}

// Every flag and argument is checked before a connection is made: a call
// may move an instrument, and must not happen for a command that fails.
func TestYaqChecksBeforeCalling(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	accepted := make(chan struct{}, 16)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	addr := l.Addr().String()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"--save", filepath.Join(dir, "img.msgpack"), addr, "measure"}, 2, "--save needs a .npy or .npz file name"},
		{[]string{"--save", filepath.Join(dir, "no", "img.npy"), addr, "measure"}, 1, "its directory does not exist"},
		{[]string{"--watch", "0s", addr, "get_position"}, 2, "--watch 0s: the interval must be positive"},
		{[]string{"--timeout", "-1s", addr, "get_position"}, 2, "--timeout -1s: want a positive duration, or 0 for none"},
		{[]string{addr, "set_position", "far"}, 2, "is not a JSON value"},
	} {
		r := cli(t, nil, append([]string{"yaq"}, c.args...)...)
		assert.Equal(t, c.code, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.msg, c.args)
	}
	select {
	case <-accepted:
		t.Fatal("a command that failed its checks connected to the daemon")
	default:
	}
}

// --timeout 0 waits as long as the call takes.
func TestYaqTimeoutZeroMeansNone(t *testing.T) {
	addr := testDaemon(t)
	r := cli(t, nil, "yaq", "--timeout", "0", addr, "get_position")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "1\n", r.stdout)
}

// A text answer, get_config's TOML, prints as the daemon wrote it, not as
// an escaped JSON string.
func TestYaqPrintsTextAsText(t *testing.T) {
	addr := testDaemon(t)
	r := cli(t, nil, "yaq", addr, "get_config")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "[cam]\nport = 39111\nmake = \"fake\"\n", r.stdout)
}

// The command's flags may follow the method too (the order the README's
// users type): "--save FILE" is no JSON argument.
func TestYaqFlagsAfterMethod(t *testing.T) {
	addr := testDaemon(t)
	dir := t.TempDir()
	npy := filepath.Join(dir, "image.npy")
	r := cli(t, nil, "yaq", addr, "get_measured", "--save", npy)
	require.Equal(t, 0, r.code, r.stderr)
	a, err := npybridge.ReadFile(npy)
	require.NoError(t, err)
	assert.Equal(t, []int{2048, 2048}, a.Shape)
	r = cli(t, nil, "yaq", addr, "set_position", "-1", "--timeout=5s")
	assert.Equal(t, 0, r.code, r.stderr)
}

// --max-size bounds the answers the client reads, either way of the
// default: a 8 MiB image is refused under 1MiB with a hint, read under
// 16MiB; a bad size is a usage error.
func TestYaqMaxSize(t *testing.T) {
	addr := testDaemon(t)
	r := cli(t, nil, "yaq", "--max-size", "1MiB", addr, "get_measured")
	require.Equal(t, 1, r.code, r.stderr)
	assert.Regexp(t, `^ndpack: 127\.0\.0\.1:\d+: .*too large.* over the limit of 1048576 .*\(raise the limit with --max-size\)\n$`, r.stderr)
	r = cli(t, nil, "yaq", addr, "get_measured", "--max-size=16MiB")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "image: <u2 (2048, 2048)")
	for _, bad := range []string{"0", "-5", "12XB", "lots", "9999999999T"} {
		r = cli(t, nil, "yaq", "--max-size", bad, addr, "get_measured")
		assert.Equal(t, 2, r.code, "%s: %s", bad, r.stderr)
	}
	for in, want := range map[string]int64{"1048576": 1 << 20, "512KiB": 512 << 10, "2GiB": 2 << 30, "3m": 3 << 20, "7K": 7 << 10, "10B": 10} {
		var n byteSize
		require.NoError(t, n.Set(in), in)
		assert.Equal(t, want, int64(n), in)
	}
}

// The shell habits of yaqc and jq: a bare port is 127.0.0.1's, --json
// prints one JSON line, a timeout says what was awaited from whom, and a
// value that does not fit is named in Avro's words.
func TestYaqShellHabits(t *testing.T) {
	addr := testDaemon(t)
	_, port, _ := net.SplitHostPort(addr)
	r := cli(t, nil, "yaq", port, "get_position")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "1\n", r.stdout)

	r = cli(t, nil, "yaq", "--json", port, "get_measured")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stdout, "\n"))
	var doc struct {
		Image struct {
			DType  string    `json:"dtype"`
			Shape  []int     `json:"shape"`
			Values [][]int64 `json:"values"`
		} `json:"image"`
		MeasurementID int `json:"measurement_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout[:200])
	assert.Equal(t, "<u2", doc.Image.DType)
	assert.Equal(t, []int{2048, 2048}, doc.Image.Shape)
	assert.Equal(t, int64(2050), doc.Image.Values[1][2])
	assert.Equal(t, 7, doc.MeasurementID)

	r = cli(t, nil, "yaq", port, "set_position", "true")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: "+addr+": yaq: value does not fit its schema: set_position: parameter \"position\": a boolean is not a double\n", r.stderr)

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer silent.Close()
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			defer c.Close() // holds it open, says nothing
		}
	}()
	r = cli(t, nil, "yaq", "--timeout", "300ms", silent.Addr().String())
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: "+silent.Addr().String()+": waited 300ms (--timeout) for its handshake, which did not come\n", r.stderr)
}

// JSON numbers reach the client as Avro's long and double, so that one
// that does not fit is named in Avro's words ("a double is not a boolean",
// not "a json.Number ...").
func TestArgumentNumbers(t *testing.T) {
	assert.Equal(t, []any{int64(3), 1.5, map[string]any{"x": int64(-2)}, "s"},
		yaqtoml.FromJSON([]any{json.Number("3"), json.Number("1.5"), map[string]any{"x": json.Number("-2")}, "s"}))
	s, err := avro.ParseSchema(`"boolean"`)
	require.NoError(t, err)
	_, err = s.Append(nil, yaqtoml.FromJSON(json.Number("1.5")))
	assert.ErrorContains(t, err, "a double is not a boolean")
}

// A yaq-RPC (msgpack) daemon, or any peer that is not a yaq daemon, is
// named for what it is, not as "a frame of 2208527973 bytes".
func TestYaqNamesOtherPeers(t *testing.T) {
	srv := &yaqrpc.Server{ErrorLog: log.New(io.Discard, "", 0)}
	require.NoError(t, srv.Handle("id", func(context.Context, *yaqrpc.Request) (any, error) { return "x", nil }))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go srv.Serve(l)
	defer srv.Close()
	r := cli(t, nil, "yaq", "--timeout", "10s", l.Addr().String())
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "speaks yaq-RPC (msgpack, YEP-100), not yaq's Avro RPC")
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
}

// --save FILE.svg plots a 1-D answer, as render draws a spectrum; a 2-D
// one is refused for a plot, a 1-D one for an image.
func TestYaqSavesPlots(t *testing.T) {
	addr := testDaemon(t)
	dir := t.TempDir()
	svg := filepath.Join(dir, "spectrum.svg")
	r := cli(t, nil, "yaq", "--save", svg, addr, "get_spectrum")
	require.Equal(t, 0, r.code, r.stderr)
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(b), "<svg ") || strings.HasPrefix(string(b), "<?xml"), string(b[:40]))
	assert.Contains(t, string(b), "<polyline")
	r = cli(t, nil, "yaq", "--save", filepath.Join(dir, "image.svg"), addr, "get_measured")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "answered no 1-D array to save as a plot")
	r = cli(t, nil, "yaq", "--save", filepath.Join(dir, "s.png"), addr, "get_spectrum")
	assert.Equal(t, 1, r.code, r.stderr)
}

// A hostile daemon's words (its protocol's names and docs, its id, its
// answers, its errors) carry escape sequences: an OSC 52 write to the
// clipboard, a screen clear, a bell, C1 controls, a bidirectional
// override, bytes that are not UTF-8. None reaches the terminal raw, in
// any of the command's outputs, and each is shown escaped.
func TestYaqEscapesWhatAPeerSays(t *testing.T) {
	const osc = "\x1b]52;c;aGk=\a"
	proto := `{"protocol": "cam\u001b]52;c;aGk=\u0007", "traits": ["is-daemon\u001b[2J"], "doc": "d",
 "messages": {
  "id": {"request": [], "response": {"type": "map", "values": ["null", "string"]}},
  "get_config": {"request": [], "response": "string"},
  "get_\u009b31m": {"doc": "red\u001b[31m\u0007\u202e", "request": [{"name": "p\u001b[1m", "type": "double", "default": 1.0}], "response": "null"},
  "get_map": {"request": [], "response": {"type": "map", "values": "string"}},
  "fail": {"request": [], "response": "null"}}}`
	d, err := yaq.NewDaemon("cam", proto)
	require.NoError(t, err)
	d.ErrorLog = log.New(io.Discard, "", 0)
	model := "m\x1b[2J\x9b\x7f"
	d.Model = &model
	require.NoError(t, d.Handle("id", func(context.Context, []any) (any, error) {
		return map[string]any{"name": "cam" + osc, "model": model}, nil
	}))
	require.NoError(t, d.Handle("get_config", func(context.Context, []any) (any, error) {
		return "[cam]\nname = \"" + osc + "\"\n\tport = 1\xff\n", nil
	}))
	require.NoError(t, d.Handle("get_map", func(context.Context, []any) (any, error) {
		return map[string]any{"k" + osc: "v\u009b\u007f\u202e" + osc}, nil
	}))
	require.NoError(t, d.Handle("fail", func(context.Context, []any) (any, error) {
		return nil, errors.New("ValueError('" + osc + "\x1b[2J')")
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	defer d.Close()
	addr := l.Addr().String()

	raw := func(t *testing.T, s string) {
		t.Helper()
		for _, r := range s {
			if r == '\n' {
				continue
			}
			assert.False(t, r < 0x20 || r >= 0x7f && r <= 0x9f || r == 0x202e || r == utf8.RuneError, "raw %U in %q", r, s)
		}
	}
	r := cli(t, nil, "yaq", addr)
	require.Equal(t, 0, r.code, r.stderr)
	raw(t, r.stdout)
	assert.Contains(t, r.stdout, `cam\x1b]52;c;aGk=\a: a cam\x1b]52;c;aGk=\a daemon`)
	assert.Contains(t, r.stdout, `  model  m\x1b[2J\x9b\x7f`)
	assert.Contains(t, r.stdout, `traits: is-daemon\x1b[2J`)
	assert.Contains(t, r.stdout, `  get_\u009b31m(p\x1b[1m: double = 1.0) -> null`+"\n"+`      red\x1b[31m\a\u202e`)

	r = cli(t, nil, "yaq", addr, "get_config")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "[cam]\nname = \"\\x1b]52;c;aGk=\\a\"\n\tport = 1\\xff\n", r.stdout, "lines and tabs kept, the rest escaped")

	r = cli(t, nil, "yaq", addr, "get_map")
	require.Equal(t, 0, r.code, r.stderr)
	raw(t, r.stdout)
	// A key that holds a control character is quoted, so that it cannot
	// pass for another that spells its escape.
	assert.Equal(t, `  "k\x1b]52;c;aGk=\a": "v\u009b\x7f\u202e\u001b]52;c;aGk=\u0007"`+"\n", r.stdout)

	r = cli(t, nil, "yaq", "--json", addr, "get_map")
	require.Equal(t, 0, r.code, r.stderr)
	raw(t, r.stdout)
	var m map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &m))
	assert.Equal(t, map[string]string{"k" + osc: "v\u009b\u007f\u202e" + osc}, m, "the same JSON value")

	r = cli(t, nil, "yaq", addr, "fail")
	assert.Equal(t, 1, r.code)
	raw(t, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	assert.Contains(t, r.stderr, `ValueError('\x1b]52;c;aGk=\a\x1b[2J')`)
}

// A peer that is no yaq daemon is named as such in one line, whatever
// protocol it speaks: text (an HTTP server) or binary, whose first bytes
// would make a frame of gigabytes.
func TestYaqNotAYaqPeer(t *testing.T) {
	for name, greeting := range map[string]string{
		"HTTP":   "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n",
		"binary": "\xab\xcd\xef\x01\x37\x91\x05\x1b]52;c;aGk=\a",
	} {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			c.Write([]byte(greeting))
			c.Read(make([]byte, 100))
		}()
		r := cli(t, nil, "yaq", "--timeout", "5s", l.Addr().String())
		l.Close()
		assert.Equal(t, 1, r.code, name)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		assert.Contains(t, r.stderr, "does not speak yaq (Avro RPC frames): it sent ", name)
		assert.NotContains(t, r.stderr, "over the limit", name)
		assert.NotContains(t, r.stderr, "\x1b", name)
	}
}

// Nothing a peer says names a file: a daemon's keys saved as .npz members
// that would name a file once unpacked (a leading "/", a ".." element, a
// control character) are refused, and nothing is written; so are a msgpack
// map's keys converted to members (issue 41).
func TestPeerKeysNameNoFile(t *testing.T) {
	d, err := yaq.NewDaemon("cam", testProtocol)
	require.NoError(t, err)
	d.ErrorLog = log.New(io.Discard, "", 0)
	a, _ := ndarray.FromSlice([]float64{1, 2})
	var key atomic.Value
	require.NoError(t, d.Handle("get_measured", func(context.Context, []any) (any, error) {
		return map[string]any{key.Load().(string): a, "measurement_id": 7}, nil
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	t.Cleanup(func() { d.Close() })
	dir := t.TempDir()
	for k, why := range map[string]string{
		"../../x":  `holds a ".." element`,
		"/abs/x":   `starts with "/"`,
		"a\x00b":   "holds a control character or invalid UTF-8",
		`a\..\..b`: `holds a ".." element`,
	} {
		key.Store(k)
		out := filepath.Join(dir, "m.npz")
		r := cli(t, nil, "yaq", "--save", out, l.Addr().String(), "get_measured")
		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "the daemon's key "+peertext.Quote(k)+" "+why+", which an .npz member name may not: nothing written")
		assert.NoFileExists(t, out)

		msg, err := ndpack.MessageOptions{}.MarshalMessage(map[string]any{k: a, "ok": a})
		require.NoError(t, err)
		in := filepath.Join(dir, "m.msgpack")
		require.NoError(t, os.WriteFile(in, msg, 0o644))
		r = cli(t, nil, "convert", in, out)
		assert.Equal(t, 1, r.code, r.stderr)
		assert.Contains(t, r.stderr, "array "+peertext.Quote(k)+" "+why)
		assert.NoFileExists(t, out)
	}
}
