package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startCamera runs the daemon in process from a config file and returns
// its address and exit status channel.
func startCamera(t *testing.T, extra string) (string, string, <-chan int) {
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), "cam.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[cam]\nport = %d\nhost = \"127.0.0.1\"\n%s", port, extra)), 0o644))
	done := make(chan int, 1)
	var stderr bytes.Buffer
	go func() { done <- runDaemons([]string{"--config", cfg}, &bytes.Buffer{}, &stderr) }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr, cfg, done
		}
	}
	t.Fatalf("the daemon did not start: %s", stderr.String())
	return "", "", nil
}

// The Go client drives the daemon through its traits, as a yaq client
// would.
func TestCamera(t *testing.T) {
	addr, cfg, done := startCamera(t, "aoi_width = 64\naoi_height = 32\nexposure_ms = 5.0\n")
	ctx := context.Background()
	c, err := yaq.Dial(ctx, addr)
	require.NoError(t, err)
	defer c.Close()
	assert.Equal(t, []string{"has-mapping", "has-measure-trigger", "is-daemon", "is-sensor"}, c.Protocol().Traits)

	var id map[string]any
	require.NoError(t, c.Call(ctx, "id", nil, &id))
	assert.Equal(t, map[string]any{"name": "cam", "kind": "fakecamera", "make": nil, "model": nil, "serial": nil}, id)
	var config, path string
	require.NoError(t, c.Call(ctx, "get_config", nil, &config))
	assert.Contains(t, config, "aoi_width = 64\n")
	assert.Contains(t, config, "aoi_left = 0\n", "defaults from the protocol")
	require.NoError(t, c.Call(ctx, "get_config_filepath", nil, &path))
	assert.Equal(t, cfg, path)

	var shapes map[string][]int
	require.NoError(t, c.Call(ctx, "get_channel_shapes", nil, &shapes))
	assert.Equal(t, map[string][]int{"image": {32, 64}}, shapes)
	for trial := 1; trial <= 3; trial++ {
		var mid, again int
		require.NoError(t, c.Call(ctx, "measure", nil, &mid))
		assert.Equal(t, trial, mid)
		require.NoError(t, c.Call(ctx, "measure", []any{false}, &again))
		assert.Equal(t, mid, again, "measure while busy starts nothing")
		for busy := true; busy; {
			require.NoError(t, c.Call(ctx, "busy", nil, &busy))
		}
		var m map[string]any
		require.NoError(t, c.Call(ctx, "get_measured", nil, &m))
		assert.EqualValues(t, mid, m["measurement_id"])
		img := m["image"].(*ndarray.Array)
		assert.Equal(t, "<i2 (32, 64)", img.String())
	}
	var mappings map[string]any
	require.NoError(t, c.Call(ctx, "get_mappings", nil, &mappings))
	x := mappings["x_index"].(*ndarray.Array)
	assert.Equal(t, "<i2 (1, 64)", x.String())
	assert.Equal(t, 2.0, mappings["mapping_id"], "a double in this union, as the Python daemon sends it")
	var re *yaq.RemoteError
	assert.NotErrorAs(t, c.Call(ctx, "stop_looping", nil, nil), &re)
	require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not stop the daemon")
	}
}

func TestCommandLine(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 0, runDaemons([]string{"--protocol"}, &out, &errb))
	var p map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &p))
	assert.Equal(t, "fakecamera", p["protocol"])
	out.Reset()
	assert.Equal(t, 0, runDaemons([]string{"--version"}, &out, &errb))
	assert.Equal(t, "fakecamera "+version+"\n", out.String())
	assert.Equal(t, 1, runDaemons(nil, &out, &errb), "no config file where yaqd-core looks by default")
	bad := filepath.Join(t.TempDir(), "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[cam]\nhost = \"127.0.0.1\"\n"), 0o644))
	errb.Reset()
	assert.Equal(t, 1, runDaemons([]string{"--config", bad}, &out, &errb))
	assert.Contains(t, errb.String(), "[cam] needs an integer port")
}

// Live: the real yaqc (from the Python yaq sources NDPACK_YAQ_SRC names)
// calls every message of the Go daemon and gets numpy arrays back.
func TestLiveYaqcDrivesCamera(t *testing.T) {
	src := os.Getenv("NDPACK_YAQ_SRC")
	if src == "" {
		t.Skip("NDPACK_YAQ_SRC does not name the Python yaq sources: live test skipped")
	}
	addr, _, done := startCamera(t, "aoi_width = 512\naoi_height = 256\n")
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command("/usr/bin/python3", "-c", `
import json, sys, time
import numpy as np
import yaqc
c = yaqc.Client(int(sys.argv[1]))
res = {"id": c.id(), "names": c.get_channel_names(), "shapes": c.get_channel_shapes(),
       "units": c.get_channel_units(), "busy": c.busy(), "mapping_id": c.get_mapping_id(),
       "mapping_units": c.get_mapping_units(), "channel_mappings": c.get_channel_mappings(),
       "state": c.get_state(), "config_path": c.get_config_filepath()}
mid = c.measure()
while c.busy():
    time.sleep(0.01)
m = c.get_measured()
res["measured"] = {k: [v.dtype.str, list(v.shape), int(v.sum())] if isinstance(v, np.ndarray) else v for k, v in m.items()}
res["measurement_id"] = [mid, c.get_measurement_id()]
res["mappings"] = {k: [v.dtype.str, list(v.shape)] if isinstance(v, np.ndarray) else v for k, v in c.get_mappings().items()}
c.measure(loop=True)
time.sleep(0.05)
c.stop_looping()
res["config"] = "aoi_width = 512" in c.get_config()
c.shutdown()
print(json.dumps(res))
`, port)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+strings.Join([]string{filepath.Join(src, "fa"), filepath.Join(src, "yaqd-core"), filepath.Join(src, "yaqc")}, ":"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	var res map[string]any
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	assert.Equal(t, "fakecamera", res["id"].(map[string]any)["kind"])
	assert.Equal(t, []any{"image"}, res["names"])
	img := res["measured"].(map[string]any)["image"].([]any)
	assert.Equal(t, []any{"<i2", []any{256.0, 512.0}}, img[:2])
	assert.Equal(t, []any{1.0, 1.0}, res["measurement_id"])
	assert.Equal(t, true, res["config"])
	t.Logf("yaqc saw: %v", res["mappings"])
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("yaqc's shutdown did not stop the daemon")
	}
}
