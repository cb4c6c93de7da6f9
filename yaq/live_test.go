package yaq

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The live tests run the real Python yaq stack (yaqd-core, yaqd-fakes,
// yaqc with pure-Python fastavro), when NDPACK_YAQ_SRC names a folder
// holding its sources unpacked: yaqd-core, yaqc and yaqd-fakes from
// yaq-project/yaq-python, and fastavro's in fa/ (see shared/yaq/README.md;
// they are never part of this repository). Without it they skip, in CI too.
func yaqSrc(t *testing.T) string {
	src := os.Getenv("NDPACK_YAQ_SRC")
	if src == "" {
		t.Skip("NDPACK_YAQ_SRC does not name the Python yaq sources: live tests skipped")
	}
	return src
}

func pythonEnv(src string) []string {
	path := strings.Join([]string{filepath.Join(src, "fa"), filepath.Join(src, "yaqd-core"),
		filepath.Join(src, "yaqc"), filepath.Join(src, "yaqd-fakes")}, ":")
	return append(os.Environ(), "PYTHONPATH="+path, "XDG_DATA_HOME="+os.TempDir(), "XDG_CONFIG_HOME="+os.TempDir())
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startPythonDaemon runs a yaqd-fakes daemon on loopback and returns its
// address once it listens.
func startPythonDaemon(t *testing.T, src, module, class, extra string) string {
	port := freePort(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "daemon.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[live]\nport = %d\nhost = \"127.0.0.1\"\n%s", port, extra)), 0o644))
	cmd := exec.Command("/usr/bin/python3", "-c", fmt.Sprintf("from yaqd_fakes.%s import %s; %s.main()", module, class, class), "--config", cfg)
	cmd.Env = pythonEnv(src)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
	}
	t.Fatalf("the Python daemon did not start: %s", out.String())
	return ""
}

// The Go client against the real yaqd-fakes daemons, all nine kinds.
func TestLiveGoClientAgainstPythonDaemons(t *testing.T) {
	src := yaqSrc(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, d := range []struct{ module, class, extra string }{
		{"_fake_camera", "FakeCamera", ""},
		{"_fake_spectrometer", "FakeSpectrometer", ""},
		{"_fake_sensor", "FakeSensor", ""},
		{"_fake_continuous_hardware", "FakeContinuousHardware", "out_of_limits = \"error\"\n"},
		{"_fake_has_turret", "FakeHasTurret", "out_of_limits = \"error\"\n"},
		{"_fake_discrete_hardware", "FakeDiscreteHardware", "sleep = 0.0\n"},
		{"_fake_furnace", "FakeFurnace", ""},
		{"_fake_has_transformed_position", "FakeHasTransformedPosition", ""},
		{"_fake_triggered_sensor", "FakeTriggeredSensor", ""},
	} {
		t.Run(d.class, func(t *testing.T) {
			addr := startPythonDaemon(t, src, d.module, d.class, d.extra)
			c, err := Dial(ctx, addr, nil)
			require.NoError(t, err)
			defer c.Close()
			var id map[string]any
			require.NoError(t, c.Call(ctx, "id", nil, &id))
			assert.Equal(t, "live", id["name"])
			t.Logf("%s: traits %v, %d messages", id["kind"], c.Protocol().Traits, len(c.Protocol().Messages))
			var cfg string
			require.NoError(t, c.Call(ctx, "get_config", nil, &cfg))
			assert.Contains(t, cfg, "port = ")
			msgs := c.Protocol().Messages
			if msgs["measure"] != nil {
				var mid int
				require.NoError(t, c.Call(ctx, "measure", nil, &mid))
				for busy := true; busy; {
					require.NoError(t, c.Call(ctx, "busy", nil, &busy))
					time.Sleep(10 * time.Millisecond)
				}
				var m map[string]any
				require.NoError(t, c.Call(ctx, "get_measured", nil, &m))
				assert.EqualValues(t, mid, m["measurement_id"])
				for k, v := range m {
					if a, ok := v.(*ndarray.Array); ok {
						t.Logf("  %s: %s", k, a)
						assert.NoError(t, a.Validate())
					}
				}
				// The same answer read into lent memory, as a camera loop
				// would: equal to Call's, whatever the daemon's framing.
				var buf ResultBuffer
				for range 3 {
					var again map[string]any
					require.NoError(t, c.CallReusing(ctx, "get_measured", nil, &again, &buf))
					assert.Equal(t, m, again)
				}
			}
			if msgs["set_position"] != nil {
				require.NoError(t, c.Call(ctx, "set_position", []any{0.25}, nil))
				var dest float64
				require.NoError(t, c.Call(ctx, "get_destination", nil, &dest))
				assert.Equal(t, 0.25, dest)
				var limits []float64
				if msgs["get_limits"] != nil {
					require.NoError(t, c.Call(ctx, "get_limits", nil, &limits))
					t.Logf("  limits %v", limits)
				}
				if len(limits) == 2 && limits[1] < 5 && strings.Contains(d.extra, "error") { // out of limits, with out_of_limits = "error"
					err := c.Call(ctx, "set_position", []any{5.0}, nil)
					var re *RemoteError
					require.ErrorAs(t, err, &re)
					assert.Contains(t, re.Message, "not in ranges")
				}
			}
			if msgs["get_turret_options"] != nil {
				var opts []any
				require.NoError(t, c.Call(ctx, "get_turret_options", nil, &opts))
				require.NotEmpty(t, opts)
				require.NoError(t, c.Call(ctx, "set_turret", []any{opts[0]}, nil))
				var cur any
				require.NoError(t, c.Call(ctx, "get_turret", nil, &cur))
				assert.Equal(t, opts[0], cur)
			}
			err = c.Call(ctx, "set_position", []any{"x"}, nil)
			if msgs["set_position"] != nil {
				assert.ErrorContains(t, err, `parameter "position"`)
			}
			require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
		})
	}
}
