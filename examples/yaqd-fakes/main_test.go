package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/yaqproto"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
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

// start runs a kind in process on a config of one table [name] (port and
// host filled in) and returns a client of it and a function that shuts it
// down and returns its exit status (called at cleanup too).
func start(t *testing.T, kind, name, extra string) (*yaq.Client, func() int) {
	t.Helper()
	_, c, stop := startAt(t, kind, name, extra)
	return c, stop
}

// startAt is start, with the daemon's address.
func startAt(t *testing.T, kind, name, extra string) (string, *yaq.Client, func() int) {
	t.Helper()
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[%s]\nport = %d\nhost = \"127.0.0.1\"\n%s", name, port, extra)), 0o644))
	logs := &hostile.Log{}
	done := make(chan int, 1)
	go func() { done <- run("yaqd-fakes", []string{kind, "--config", cfg}, logs, logs) }()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if c, err := yaq.Dial(context.Background(), addr, nil); err == nil {
			var once sync.Once
			code := -1
			stop := func() int {
				once.Do(func() {
					c.Call(context.Background(), "shutdown", nil, nil)
					c.Close()
					select {
					case code = <-done:
					case <-time.After(5 * time.Second):
						t.Errorf("%s did not shut down: %s", kind, logs.String())
					}
				})
				return code
			}
			t.Cleanup(func() { stop() })
			return addr, c, stop
		}
	}
	t.Fatalf("%s did not start: %s", kind, logs.String())
	return "", nil, nil
}

func call[T any](t *testing.T, c *yaq.Client, method string, params ...any) T {
	t.Helper()
	var out T
	require.NoError(t, c.Call(context.Background(), method, params, &out), method)
	return out
}

func waitIdle(t *testing.T, c *yaq.Client) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); call[bool](t, c, "busy"); time.Sleep(5 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "still busy")
	}
}

// The kinds behave as yaq-python's tests of the Python fakes ask, driven
// here by the Go client in process (the live test below runs those tests
// themselves).
func TestKinds(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Run("fake-camera", func(t *testing.T) {
		c, _ := start(t, "fake-camera", "cam", "aoi_width = 64\naoi_height = 32\naoi_left = 3\n")
		assert.Equal(t, []string{"has-mapping", "has-measure-trigger", "is-daemon", "is-sensor"}, c.Protocol().Traits)
		for trial := int64(1); trial <= 2; trial++ {
			assert.Equal(t, trial, call[int64](t, c, "measure"))
			assert.Equal(t, trial, call[int64](t, c, "measure", false), "measure while busy starts nothing")
			waitIdle(t, c)
			m := call[map[string]any](t, c, "get_measured")
			assert.EqualValues(t, trial, m["measurement_id"])
			assert.EqualValues(t, 2, m["mapping_id"])
			assert.Equal(t, "<i2 (32, 64)", m["image"].(*ndarray.Array).String())
		}
		maps := call[map[string]any](t, c, "get_mappings")
		x := maps["x_index"].(*ndarray.Array)
		assert.Equal(t, "<i2 (1, 64)", x.String())
		xs, err := ndarray.ValuesAs[int16](x)
		require.NoError(t, err)
		assert.Equal(t, []int16{3, 4, 5}, xs[:3])
		assert.Equal(t, "<i2 (32, 1)", maps["y_index"].(*ndarray.Array).String())
		assert.Equal(t, map[string][]string{"image": {"x_index", "y_index"}}, call[map[string][]string](t, c, "get_channel_mappings"))
		assert.Equal(t, map[string][]int{"image": {32, 64}}, call[map[string][]int](t, c, "get_channel_shapes"))
		assert.Equal(t, map[string]any{"image": nil}, call[map[string]any](t, c, "get_channel_units"))
	})
	t.Run("fake-continuous-hardware", func(t *testing.T) {
		c, _ := start(t, "fake-continuous-hardware", "stage", "velocity = 1000.0\nunits = \"mm\"\n")
		for _, to := range []float64{0, 1, 0.33} {
			call[any](t, c, "set_position", to)
			waitIdle(t, c)
			assert.InDelta(t, to, call[float64](t, c, "get_position"), 1e-12)
		}
		assert.Equal(t, "mm", call[any](t, c, "get_units"))
		assert.Equal(t, []float64{0, 1}, call[[]float64](t, c, "get_limits"))
		call[any](t, c, "set_position", 7.0)
		waitIdle(t, c)
		assert.Equal(t, 1.0, call[float64](t, c, "get_position"), "clamped to the limits")
	})
	t.Run("fake-continuous-hardware/velocity", func(t *testing.T) {
		c, _ := start(t, "fake-continuous-hardware", "slow", "velocity = 2.0\n")
		call[any](t, c, "set_position", 0.0)
		waitIdle(t, c)
		begin := time.Now()
		call[any](t, c, "set_position", 0.5)
		waitIdle(t, c)
		assert.InDelta(t, 0.25, time.Since(begin).Seconds(), 0.15, "0.5 at 2 per second")
	})
	t.Run("fake-discrete-hardware", func(t *testing.T) {
		c, _ := start(t, "fake-discrete-hardware", "filter", "sleep = 0\nunits = \"deg\"\n")
		ids := call[map[string]float64](t, c, "get_position_identifiers")
		assert.Len(t, ids, 6)
		assert.ElementsMatch(t, []string{"red", "orange", "yellow", "green", "blue", "violet"}, call[[]string](t, c, "get_position_identifier_options"))
		for k, v := range ids {
			assert.Equal(t, v, call[float64](t, c, "set_identifier", k))
			waitIdle(t, c)
			assert.Equal(t, k, call[any](t, c, "get_identifier"))
		}
		err := c.Call(context.Background(), "set_identifier", []any{"ultraviolet"}, nil)
		var re *yaq.RemoteError
		require.ErrorAs(t, err, &re)
		assert.Equal(t, "KeyError('ultraviolet')", re.Message)
	})
	t.Run("fake-furnace", func(t *testing.T) {
		c, _ := start(t, "fake-furnace", "furnace", "")
		call[any](t, c, "set_ramp_time", 0.0)
		call[any](t, c, "set_position", 111.0)
		waitIdle(t, c)
		assert.Equal(t, 111.0, call[float64](t, c, "get_position"))
		call[any](t, c, "set_ramp_time", 6.22)
		assert.Equal(t, 6.22, call[float64](t, c, "get_ramp_time"))
		assert.Equal(t, []float64{0, 100}, call[[]float64](t, c, "get_ramp_time_limits"))
		assert.Equal(t, "min", call[string](t, c, "get_ramp_time_units"))
		call[any](t, c, "set_position", 200.0)
		time.Sleep(50 * time.Millisecond)
		pos := call[float64](t, c, "get_position")
		assert.InDelta(t, 111+89/(6.22*60), pos, 1e-9, "a step a second, ramp_time minutes in all")
		assert.True(t, call[bool](t, c, "busy"))
	})
	t.Run("fake-has-transformed-position", func(t *testing.T) {
		c, _ := start(t, "fake-has-transformed-position", "t2", "velocity = 100.0\nlimits = [-1.0, -4.0]\nnative_limits = [0.0, 3.0]\n")
		assert.Equal(t, 1.0, call[float64](t, c, "get_native_reference"))
		assert.Equal(t, 3.0, call[float64](t, c, "to_transformed", call[float64](t, c, "to_native", 3.0)))
		limits := call[[]float64](t, c, "get_limits")
		assert.Equal(t, []float64{-2, -1}, limits)
		assert.Equal(t, []float64{0, 0.5}, call[[]float64](t, c, "get_native_limits"))
		for _, x := range [][2]float64{{-2.5, -2}, {-1.5, -1.5}, {-0.5, -1}} {
			set, want := x[0], x[1]
			call[any](t, c, "set_position", set)
			waitIdle(t, c)
			assert.InDelta(t, want, call[float64](t, c, "get_position"), 1e-12)
			assert.InDelta(t, want, call[float64](t, c, "get_destination"), 1e-12)
			assert.InDelta(t, want/2+1, call[float64](t, c, "get_native_position"), 1e-12)
		}
		call[any](t, c, "set_native_reference", 1.5)
		assert.InDelta(t, -2.0, call[float64](t, c, "get_position"), 1e-12, "the native position stays; the transformed one moves")
		assert.Equal(t, -1.0, call[float64](t, c, "set_relative", 1.0))
	})
	t.Run("fake-has-turret", func(t *testing.T) {
		c, _ := start(t, "fake-has-turret", "mono", "")
		assert.Equal(t, []any{"infrared", "visible"}, call[[]any](t, c, "get_turret_options"))
		call[any](t, c, "set_turret", "visible")
		waitIdle(t, c)
		assert.Equal(t, "visible", call[any](t, c, "get_turret"))
		assert.Equal(t, []float64{0, 750}, call[[]float64](t, c, "get_limits"), "the second turret halves the upper limit")
		err := c.Call(context.Background(), "set_turret", []any{"ultraviolet"}, nil)
		var re *yaq.RemoteError
		assert.ErrorAs(t, err, &re)
	})
	t.Run("fake-sensor", func(t *testing.T) {
		c, _ := start(t, "fake-sensor", "sensor", "update_period = 0.02\n")
		first := call[int64](t, c, "get_measurement_id")
		time.Sleep(100 * time.Millisecond)
		m := call[map[string]any](t, c, "get_measured")
		assert.Greater(t, m["measurement_id"], int32(first))
		assert.Contains(t, m, "random_walk")
		assert.Equal(t, []string{"random_walk"}, call[[]string](t, c, "get_channel_names"))
	})
	t.Run("fake-spectrometer", func(t *testing.T) {
		c, _ := start(t, "fake-spectrometer", "spec", "")
		assert.Equal(t, map[string]any{"wavelengths": "nm"}, call[map[string]any](t, c, "get_mapping_units"))
		// The Python fake's mapping_id is 1 from the start and stays 1:
		// its _measure assigns to a key of _mappings, which leaves
		// yaqd-core's counter (bumped only when the whole dict is
		// replaced, once at construction) as it is.
		assert.Equal(t, map[string]any{"measurement_id": int32(0)}, call[map[string]any](t, c, "get_measured"), "no mapping_id before a measurement")
		assert.Equal(t, int64(1), call[int64](t, c, "get_mapping_id"))
		assert.Equal(t, map[string]any{"mapping_id": 1.0}, call[map[string]any](t, c, "get_mappings"))
		for i, center := range []float64{400, 400, 1300} {
			call[any](t, c, "set_central_wavelength", center)
			call[int64](t, c, "measure")
			waitIdle(t, c)
			m := call[map[string]any](t, c, "get_measured")
			assert.Equal(t, "<f8 (551,)", m["counts"].(*ndarray.Array).String())
			assert.EqualValues(t, i+1, m["measurement_id"])
			assert.EqualValues(t, 1, m["mapping_id"], "after measure %d at %g nm", i+1, center)
			assert.Equal(t, int64(1), call[int64](t, c, "get_mapping_id"))
			maps := call[map[string]any](t, c, "get_mappings")
			assert.Equal(t, 1.0, maps["mapping_id"])
			wl, err := ndarray.ValuesAs[float64](maps["wavelengths"].(*ndarray.Array))
			require.NoError(t, err)
			assert.InDelta(t, center, wl[275], 1e-9)
			assert.Equal(t, center, call[float64](t, c, "get_central_wavelength"))
		}
	})
	t.Run("fake-triggered-sensor", func(t *testing.T) {
		c, _ := start(t, "fake-triggered-sensor", "trig", "")
		assert.Equal(t, int64(0), call[int64](t, c, "get_measurement_id"))
		assert.Equal(t, int64(1), call[int64](t, c, "measure"))
		waitIdle(t, c)
		m := call[map[string]any](t, c, "get_measured")
		assert.EqualValues(t, 1, m["measurement_id"])
		v := m["random_walk"].(float64)
		assert.True(t, -1 <= v && v <= 1)
		assert.Equal(t, map[string][]int{"random_walk": {}}, call[map[string][]int](t, c, "get_channel_shapes"))
		call[int64](t, c, "measure", true)
		time.Sleep(250 * time.Millisecond)
		call[any](t, c, "stop_looping")
		waitIdle(t, c)
		assert.GreaterOrEqual(t, call[int64](t, c, "get_measurement_id"), int64(3), "looping measures every 0.1 s")
	})
}

// State survives a restart in the state file yaqd-core uses.
func TestStateFile(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	c, stop := start(t, "fake-spectrometer", "spec", "")
	call[any](t, c, "set_central_wavelength", 612.5)
	assert.Equal(t, 0, stop())
	text, err := os.ReadFile(filepath.Join(os.Getenv("XDG_DATA_HOME"), "yaqd-state", "fake-spectrometer", "spec-state.toml"))
	require.NoError(t, err)
	assert.Equal(t, "central_wavelength = 612.5\n", string(text))
	c, _ = start(t, "fake-spectrometer", "spec", "")
	assert.Equal(t, 612.5, call[float64](t, c, "get_central_wavelength"))
}

// Each kind's protocol is the Python daemon's fake-KIND.avpr, but for
// docs, links and installation: from the recordings beside the
// repository, or the Python sources NDPACK_YAQ_SRC names.
func TestProtocolsEqualPython(t *testing.T) {
	for _, kind := range kindNames() {
		t.Run(kind, func(t *testing.T) {
			var want []byte
			if src := os.Getenv("NDPACK_YAQ_SRC"); src != "" {
				var err error
				want, err = os.ReadFile(filepath.Join(src, "yaqd-fakes", "yaqd_fakes", kind+".avpr"))
				require.NoError(t, err)
			} else if kind == "fake-furnace" || kind == "fake-has-transformed-position" {
				t.Skip("not among the recorded protocols; NDPACK_YAQ_SRC unset")
			} else {
				want = sharedfiles.ReadFile(t, "../../../shared/yaq/protocols/"+kind+".avpr")
			}
			var out bytes.Buffer
			require.Equal(t, 0, run("yaqd-fakes", []string{kind, "--protocol"}, &out, &out), out.String())
			assert.Equal(t, yaqproto.Comparable(t, want), yaqproto.Comparable(t, out.Bytes()))
		})
	}
}

func TestCommandLine(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run("yaqd-fakes", []string{"--list"}, &out, &errb))
	assert.Equal(t, strings.Join(kindNames(), "\n")+"\n", out.String())
	assert.Len(t, kindNames(), 9)
	out.Reset()
	assert.Equal(t, 0, run("yaqd-fake-camera", []string{"--version"}, &out, &errb))
	assert.Equal(t, "yaqd-fake-camera "+version+"\n", out.String())
	out.Reset()
	assert.Equal(t, 0, run("yaqd-fakes", []string{"fake-sensor", "--protocol"}, &out, &errb))
	var p map[string]any
	require.NoError(t, json.Unmarshal(out.Bytes(), &p))
	assert.Equal(t, "fake-sensor", p["protocol"])
	assert.Equal(t, 2, run("yaqd-fakes", nil, &out, &errb))
	errb.Reset()
	assert.Equal(t, 2, run("yaqd-fakes", []string{"fake-laser"}, &out, &errb))
	assert.Contains(t, errb.String(), `yaqd-fakes: no kind "fake-laser" (the kinds are fake-camera, `)
	bad := filepath.Join(t.TempDir(), "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("[cam]\nport = 1\naoi_width = \"wide\"\n"), 0o644))
	errb.Reset()
	assert.Equal(t, 1, run("yaqd-fakes", []string{"fake-camera", "--config", bad}, &out, &errb))
	assert.Contains(t, errb.String(), "yaqd-fake-camera: config "+bad+": [cam] aoi_width: the string \"wide\" is not a int")
}

// Every description parses and composes, each kind's code handles only
// its own messages, and each kind answers every message of its protocol.
func TestEveryMessageAnswered(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	skip := map[string]bool{"shutdown": true, "measure": true}
	for _, kind := range kindNames() {
		t.Run(kind, func(t *testing.T) {
			c, _ := start(t, kind, "every", "sleep = 0\n")
			for name, m := range c.Protocol().Messages {
				if skip[name] || strings.HasPrefix(name, "set_") || name == "stop_looping" {
					continue
				}
				params := make([]any, len(m.Request))
				for i, f := range m.Request {
					switch f.Type.Type {
					case "double":
						params[i] = 0.5
					case "boolean":
						params[i] = false
					}
				}
				var v any
				err := c.Call(context.Background(), name, params, &v)
				assert.NoError(t, err, "%s: %s", kind, name)
			}
		})
	}
}

// Live: yaq-python's own tests of the nine Python fakes (tests/<kind>/,
// from the sources NDPACK_YAQ_SRC names) pass against the Go fakes, with
// yaqd-fake-KIND on PATH a link to this program.
func TestLiveYaqPythonTests(t *testing.T) {
	src := os.Getenv("NDPACK_YAQ_SRC")
	if src == "" {
		t.Skip("NDPACK_YAQ_SRC does not name the Python yaq sources: live test skipped")
	}
	pypeer.RequireModule(t, "pytest", "python3-pytest")
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "yaqd-fakes"), ".")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, kind := range kindNames() {
		require.NoError(t, os.Symlink("yaqd-fakes", filepath.Join(bin, "yaqd-"+kind)))
	}
	dirs := []string{"continuous_hardware", "discrete_hardware", "fake_camera", "fake_furnace",
		"fake_has_transformed_position", "fake_has_turret", "fake_sensor", "fake_spectrometer", "triggered_sensor"}
	tests, data := filepath.Join(src, "tests"), t.TempDir()
	pytest := func(dir string) (string, error) {
		cmd := exec.Command("/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", dir)
		cmd.Dir = tests
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "XDG_DATA_HOME="+data,
			"PYTHONPATH="+strings.Join([]string{filepath.Join(src, "fa"), filepath.Join(src, "yaqd-core"),
				filepath.Join(src, "yaqc"), filepath.Join(src, "yaqd-fakes")}, ":"))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	passed := 0
	for _, dir := range dirs {
		ports, err := configPorts(filepath.Join(tests, dir, "config.toml"))
		require.NoError(t, err)
		out, err := runPortBound(ports, 3, 30*time.Second, func() (string, error) { return pytest(dir) })
		t.Logf("%s: %s", dir, out)
		require.NoError(t, err, "%s", dir)
		n, failed := pytestCounts(out)
		assert.Zero(t, failed, "%s", dir)
		passed += n
	}
	assert.Equal(t, 24, passed)
}

// Live: yaq-traits check (from the sources NDPACK_YAQ_TRAITS names, by
// default NDPACK_YAQ_SRC's traits/, run with the fastavro of NDPACK_YAQ_SRC)
// passes every kind's protocol.
func TestLiveYaqTraitsCheck(t *testing.T) {
	traits, src := liveTraitsSrc(os.Getenv("NDPACK_YAQ_TRAITS"), os.Getenv("NDPACK_YAQ_SRC"))
	if traits == "" {
		t.Skip("NDPACK_YAQ_TRAITS and NDPACK_YAQ_SRC do not name yaq-traits and the Python yaq sources: live test skipped")
	}
	pypeer.RequireModule(t, "click, prettytable, colorama, toml",
		"python3-click python3-prettytable python3-colorama python3-toml")
	dir := t.TempDir()
	var files []string
	for _, kind := range kindNames() {
		var out bytes.Buffer
		require.Equal(t, 0, run("yaqd-fakes", []string{kind, "--protocol"}, &out, &out))
		f := filepath.Join(dir, kind+".avpr")
		require.NoError(t, os.WriteFile(f, out.Bytes(), 0o644))
		files = append(files, f)
	}
	cmd := exec.Command("/usr/bin/python3", append([]string{"-c",
		"import sys; sys.argv = ['yaq-traits', 'check'] + sys.argv[1:]\nfrom yaq_traits.__main__ import main\nmain()"}, files...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+traits+":"+filepath.Join(src, "fa"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.NotContains(t, string(out), "failed to verify")
	assert.Equal(t, 9, strings.Count(string(out), ".avpr\n"))
}

func TestRandomWalkStaysInRange(t *testing.T) {
	w := newRandomWalk(-1, 1)
	assert.Equal(t, 0.0, w.next(), "starts at the centre")
	for range 10000 {
		v := w.next()
		require.True(t, v >= -1 && v <= 1 && !math.IsNaN(v))
	}
}
