package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/gr00tpolicy"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gr00tServer serves s on 127.0.0.1 for the test's length.
func gr00tServer(t *testing.T, s *gr00tpolicy.Server) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l.Addr().String()
}

// recordingPolicy answers with its observation (and an info naming the
// task), refuses one whose task is "fail", and sends each observation on.
type recordingPolicy struct{ seen chan map[string]any }

func (p recordingPolicy) GetAction(_ context.Context, obs, _ map[string]any) (map[string]any, map[string]any, error) {
	lang, _ := obs["language"].(map[string]any)
	task, _ := lang["task"].(string)
	if task == "fail" {
		return nil, nil, errors.New("ValueError: no \x1b[31mfork")
	}
	select {
	case p.seen <- obs:
	default:
	}
	return obs, map[string]any{"task": task, "steps": ndarray.Scalar(int64(7))}, nil
}

func (recordingPolicy) Reset(context.Context, map[string]any) (map[string]any, error) {
	return map[string]any{}, nil
}

func TestGr00tCommand(t *testing.T) {
	dir := t.TempDir()
	img, _ := ndarray.FromSlice([]uint8{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	state, _ := ndarray.FromSlice([]float32{0.5, -1}, 2)
	obsFile := filepath.Join(dir, "obs.npz")
	writeNPZ(t, obsFile, npybridge.NamedArray{Name: "video/cam0", Array: img}, npybridge.NamedArray{Name: "state/arm", Array: state})
	task := filepath.Join(dir, "task.json")
	require.NoError(t, os.WriteFile(task, []byte(`{"language": {"task": "pick up the fork"}}`), 0o644))
	seen := make(chan map[string]any, 16)
	addr := gr00tServer(t, &gr00tpolicy.Server{Policy: recordingPolicy{seen}, Token: "t0k", Modality: map[string]gr00tpolicy.ModalityConfig{
		"video": {DeltaIndices: []int{0}, ModalityKeys: []string{"video.cam0"}},
	}})

	r := cli(t, nil, "gr00t", "--token", "t0k", addr)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `^ping: ok \([0-9.]+ ms\)\nvideo: \{"delta_indices":\[0\],"modality_keys":\["video.cam0"\],"sin_cos_embedding_keys":null,"mean_std_embedding_keys":null,"action_configs":null\}\n$`, r.stdout)

	out, info := filepath.Join(dir, "action.npz"), filepath.Join(dir, "info.json")
	r = cli(t, nil, "gr00t", "--token", "t0k", "--json", task, "--info", info, "tcp://"+addr, obsFile, out)
	require.Equal(t, 0, r.code, r.stderr)
	got := <-seen
	assert.True(t, img.Equal(got["video"].(map[string]any)["cam0"].(*ndarray.Array)))
	assert.Equal(t, "pick up the fork", got["language"].(map[string]any)["task"])
	assert.Contains(t, r.stdout, "cam0: |u1 (1, 2, 3)")
	assert.NotContains(t, r.stdout, "info:")
	saved, err := npybridge.ReadOptions{}.ReadNPZFile(out)
	require.NoError(t, err)
	require.Len(t, saved, 2)
	assert.Equal(t, "state/arm", saved[0].Name)
	assert.True(t, state.Equal(saved[0].Array))
	assert.Equal(t, "{\"steps\":{\"dtype\":\"<i8\",\"shape\":[],\"values\":7},\"task\":\"pick up the fork\"}\n", string(readFile(t, info)))

	// The whole action as msgpack, arrays as GR00T's .npy maps.
	outMsgpack := filepath.Join(dir, "action.mpk")
	r = cli(t, nil, "gr00t", "--token", "t0k", addr, obsFile, outMsgpack)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "info:")
	<-seen
	var action map[string]any
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(readFile(t, outMsgpack), &action))
	assert.True(t, state.Equal(action["state"].(map[string]any)["arm"].(*ndarray.Array)))
	assert.Contains(t, string(readFile(t, outMsgpack)), "__ndarray_class__")
	assert.Contains(t, string(readFile(t, outMsgpack)), "\x93NUMPY")

	r = cli(t, nil, "gr00t", "--token", "t0k", "--repeat", "5", addr, obsFile)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `\n5 calls: min [0-9.]+ ms, median [0-9.]+ ms, p99 [0-9.]+ ms\n$`, r.stdout)

	// The policy's error: one line, escaped; no file.
	require.NoError(t, os.WriteFile(task, []byte(`{"language": {"task": "fail"}}`), 0o644))
	failed := filepath.Join(dir, "failed.npz")
	r = cli(t, nil, "gr00t", "--token", "t0k", "--json", task, addr, obsFile, failed)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: gr00tpolicy: get_action: server error: ValueError: no \\x1b[31mfork\n", r.stderr)
	assert.NoFileExists(t, failed)
	r = cli(t, nil, "gr00t", addr)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: gr00tpolicy: ping: server error: Unauthorized: Invalid API token\n", r.stderr)
}

func TestGr00tCommandErrors(t *testing.T) {
	dir := t.TempDir()
	obs := filepath.Join(dir, "obs.npz")
	a, _ := ndarray.FromSlice([]int64{1}, 1)
	writeNPZ(t, obs, npybridge.NamedArray{Name: "x", Array: a})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := l.Addr().String()
	l.Close()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"video": {"delta_indices": [0], "modality_keys": []}}`), 0o644))
	unknown := filepath.Join(dir, "unknown.json")
	require.NoError(t, os.WriteFile(unknown, []byte(`{"video": {"delta_indices": [0], "modality_keys": ["a"], "keys": 1}}`), 0o644))
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"gr00t"}, 2, "name the server"},
		{[]string{"gr00t", closed, filepath.Join(dir, "obs.npy")}, 2, "OBS must be an .npz"},
		{[]string{"gr00t", closed, obs, filepath.Join(dir, "a.npy")}, 2, "ACTION must be an .npz"},
		{[]string{"gr00t", "--repeat", "0", closed, obs}, 2, "--repeat 0"},
		{[]string{"gr00t", "--info", "i.json", closed}, 2, "name OBS"},
		{[]string{"gr00t", "--info", "i.txt", closed, obs}, 2, "--info must name"},
		{[]string{"gr00t", "serve"}, 2, "--addr"},
		{[]string{"gr00t", "serve", "--addr", "127.0.0.1:0"}, 2, "one of --echo and --replay"},
		{[]string{"gr00t", "serve", "--addr", "127.0.0.1:0", "--echo", "--modality", bad}, 1, "modality_keys"},
		{[]string{"gr00t", "serve", "--addr", "127.0.0.1:0", "--echo", "--modality", unknown}, 1, "unknown field \"keys\""},
		{[]string{"gr00t", "--timeout", "5s", closed}, 1, "connection refused"},
		{[]string{"gr00t", closed, filepath.Join(dir, "missing.npz")}, 1, "missing.npz"},
		{[]string{"gr00t", "nowhere"}, 1, "HOST:PORT"},
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

// TestGr00tServe: the command's server answers the package's client (and
// the command's own) with its replayed actions and modality config, checks
// the token, and exits 0 when sent kill.
func TestGr00tServe(t *testing.T) {
	dir := t.TempDir()
	actions, _ := ndarray.FromSlice([]float64{1, 2, 3, 4}, 2, 2)
	grip, _ := ndarray.FromSlice([]uint8{9, 8, 7}, 3)
	replay := filepath.Join(dir, "actions.npz")
	writeNPZ(t, replay, npybridge.NamedArray{Name: "action.x", Array: actions}, npybridge.NamedArray{Name: "arm/gripper", Array: grip})
	modality := filepath.Join(dir, "modality.json")
	require.NoError(t, os.WriteFile(modality, []byte(`{"video": {"delta_indices": [0], "modality_keys": ["video.cam0"]},
		"action": {"delta_indices": [0, 1], "modality_keys": ["action.x"], "action_configs": [{"rep": "RELATIVE", "type": "EEF", "format": "DEFAULT", "state_key": "state.arm"}]}}`), 0o644))
	cmd := exec.Command(ndpackBin, "gr00t", "serve", "--addr", "127.0.0.1:0", "--replay", replay, "--modality", modality, "--token", "t")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	// Through an io.Pipe, not StdoutPipe: Wait closes StdoutPipe's pipe
	// once the process exits, losing what was not read yet (the last
	// line), where it waits for what goes through an io.Pipe to be read.
	stdout, pw := io.Pipe()
	cmd.Stdout = pw
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() { stdout.Close(); cmd.Process.Kill(); <-exited })
	br := bufio.NewReader(stdout)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "serving on tcp://")
	require.True(t, ok, line)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := gr00tpolicy.Dial(ctx, addr, &gr00tpolicy.DialOptions{Token: "t"})
	require.NoError(t, err)
	defer c.Close()
	mc, err := c.ModalityConfig(ctx)
	require.NoError(t, err)
	assert.Equal(t, []gr00tpolicy.ActionConfig{{Rep: "RELATIVE", Type: "EEF", Format: "DEFAULT", StateKey: "state.arm"}}, mc["action"].ActionConfigs)
	assert.Equal(t, []string{"video.cam0"}, mc["video"].ModalityKeys)
	for range 2 {
		action, info, err := c.GetAction(ctx, map[string]any{"state": grip}, nil)
		require.NoError(t, err)
		assert.True(t, actions.Equal(action["action.x"].(*ndarray.Array)))
		assert.True(t, grip.Equal(action["arm"].(map[string]any)["gripper"].(*ndarray.Array)))
		assert.Equal(t, map[string]any{}, info)
	}
	nc, err := gr00tpolicy.Dial(ctx, addr, nil)
	require.NoError(t, err)
	var se *gr00tpolicy.ServerError
	assert.True(t, errors.As(nc.Ping(ctx), &se), "a request without the token")
	nc.Close()
	require.NoError(t, c.Kill(ctx))
	last := make(chan string, 1)
	go func() { rest, _ := br.ReadString('\n'); last <- rest }()
	select {
	case rest := <-last:
		assert.Equal(t, "stopped by a kill request\n", rest)
	case <-time.After(10 * time.Second):
		t.Fatal("the server said nothing within 10 s of kill")
	}
	select {
	case err := <-exited:
		exited <- err
		require.NoError(t, err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not exit within 10 s of kill")
	}
}

// TestConvertToGR00T: convert --to gr00t writes the message GR00T's
// MsgSerializer packs for the same arrays, byte for byte (records,
// strings, datetimes, big-endian, 0-d and Fortran-order sources among
// them), streaming each array; inspect names the encoding, and the
// message converts back to the same .npz.
func TestConvertToGR00T(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np
d = sys.argv[1]
np.savez(d + "/in.npz",
    f=np.arange(6, dtype="<f4").reshape(2, 3),
    fort=np.asfortranarray(np.arange(6, dtype=">i4").reshape(2, 3)),
    s=np.array(["a", "bcd"]),
    t=np.array(["2020-01-01", "NaT"], dtype="M8[D]"),
    r=np.zeros(2, dtype=[("x", "<f8"), ("y", "u1", (2,))]),
    z=np.float64(2.5))
`, nil, dir)
	in, out := filepath.Join(dir, "in.npz"), filepath.Join(dir, "out.msgpack")
	r := cli(t, nil, "convert", "--to", "gr00t", in, out)
	require.Equal(t, 0, r.code, r.stderr)
	verdict := pypeer.Run(t, `
import io
import msgpack
import numpy as np
def enc(o):
    if isinstance(o, np.ndarray):
        b = io.BytesIO()
        np.save(b, np.ascontiguousarray(o) if o.ndim else o, allow_pickle=False)
        return {"__ndarray_class__": True, "as_npy": b.getvalue()}
    return o
def dec(o):
    if "__ndarray_class__" in o:
        return np.load(io.BytesIO(o["as_npy"]), allow_pickle=False)
    return o
z = np.load(sys.argv[1])
want = {k: z[k] for k in z.files}
got = open(sys.argv[2], "rb").read()
back = msgpack.unpackb(got, object_hook=dec)
assert list(back) == list(want), (list(back), list(want))
for k in want:
    a, b = want[k], back[k]
    assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == np.ascontiguousarray(b).tobytes(), k
print(msgpack.packb(want, default=enc) == got)
`, nil, in, out)
	assert.Equal(t, "True\n", string(verdict), "the bytes MsgSerializer packs")
	r = cli(t, nil, "inspect", out)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "gr00t")
	back := filepath.Join(dir, "back.npz")
	r = cli(t, nil, "convert", out, back)
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "diff", "--equal-nan", in, back)
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
}
