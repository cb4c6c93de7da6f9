package kit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/internal/testutil/yaqproto"
	"github.com/ndpack/ndpack/yaq"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Python daemons' own descriptions (yaqd-fakes' fake-*.toml, recorded
// beside the repository), composed by the kit, give the protocols
// yaq-traits composed from them, but for docs.
func TestComposeMatchesYaqTraits(t *testing.T) {
	for _, kind := range []string{"fake-camera", "fake-continuous-hardware", "fake-discrete-hardware",
		"fake-has-turret", "fake-sensor", "fake-spectrometer", "fake-triggered-sensor"} {
		t.Run(kind, func(t *testing.T) {
			desc := sharedfiles.ReadFile(t, "../../../shared/yaq/protocols/"+kind+".toml")
			avpr := sharedfiles.ReadFile(t, "../../../shared/yaq/protocols/"+kind+".avpr")
			c, err := ComposeTOML(kind+".toml", desc)
			require.NoError(t, err)
			assert.Equal(t, yaqproto.Comparable(t, avpr), yaqproto.Comparable(t, []byte(c.JSON)))
			assert.Equal(t, yaqproto.Comparable(t, []byte(c.JSON)), yaqproto.Comparable(t, []byte(c.Indented)))
			p, err := yaq.ParseProtocol(c.JSON)
			require.NoError(t, err)
			assert.Equal(t, c.Traits, p.Traits)
		})
	}
}

func TestComposeTraits(t *testing.T) {
	c, err := ComposeTraits("mini", "is-daemon", "has-transformed-position")
	require.NoError(t, err)
	assert.Equal(t, []string{"has-limits", "has-position", "has-transformed-position", "is-daemon"}, c.Traits)
	tree := c.Tree()
	level := tree["config"].(map[string]any)["log_level"].(map[string]any)
	assert.Equal(t, "level", level["type"].(map[string]any)["name"], "log_level is the level enum")
	assert.Contains(t, c.JSON, `"hw_limits": {"default": [-Infinity, Infinity]`)
	props := tree["properties"].(map[string]any)["position"].(map[string]any)
	assert.Equal(t, map[string]any{"getter": "get_position", "setter": nil, "options_getter": nil,
		"units_getter": "get_units", "limits_getter": "get_limits", "dynamic": true,
		"control_kind": "hinted", "record_kind": "data", "type": "double"}, props)
	msgs := tree["messages"].(map[string]any)
	assert.Equal(t, []any{}, msgs["get_limits"].(map[string]any)["request"])
	assert.Equal(t, "null", msgs["set_position"].(map[string]any)["response"])
	assert.ElementsMatch(t, []string{"has-dependents", "has-limits", "has-mapping", "has-measure-trigger",
		"has-position", "has-transformed-position", "has-turret", "is-daemon", "is-discrete", "is-homeable",
		"is-sensor", "uses-i2c", "uses-serial", "uses-uart"}, traitNames())
}

// A description that cannot be composed is refused with the file and key.
func TestComposeErrors(t *testing.T) {
	head := "protocol = \"x\"\ntraits = [\"is-daemon\"]\n"
	for text, want := range map[string]string{
		"protocol = \"x\"\ntraits = [\"is-daemon\", \"has-limit\"]\n":                                                       `x.toml: traits[1]: unknown trait "has-limit"`,
		"protocol = \"x\"\ntraits = [\"has-position\"]\n":                                                                   `x.toml: traits: every daemon has the trait "is-daemon"`,
		"traits = [\"is-daemon\"]\n":                                                                                        `x.toml: protocol: the daemon's kind, a string, is required`,
		head + "[config.speed]\ntype = \"flaot\"\n":                                                                         `x.toml: config.speed.type: invalid schema: unknown type "flaot"`,
		head + "[config.speed]\ntype = \"float\"\ndefault = \"fast\"\n":                                                     `x.toml: config.speed.default: the string "fast" is not a float`,
		head + "[state.x]\ntype = \"double\"\n":                                                                             `x.toml: state.x: a state field needs a default`,
		head + "[messages.busy]\nresponse = \"int\"\n":                                                                      `x.toml: messages.busy.response: the message is declared twice: the trait is-daemon declares its response as "boolean"`,
		head + "[messages.go]\nrequest = [{name = \"a\", type = \"int\"}, {name = \"a\", type = \"int\"}]\n":                `x.toml: messages.go.request[1].name: the parameter "a" is declared twice`,
		head + "[messages.go]\nrequest = [{name = \"a\", type = \"in\"}]\n":                                                 `x.toml: messages.go.request[0].type: invalid schema: unknown type "in"`,
		head + "[properties.p]\ngetter = \"get_p\"\ncontrol_kind = \"hinted\"\nrecord_kind = \"data\"\ntype = \"double\"\n": `x.toml: properties.p.getter: names "get_p", which is not a message`,
		head + "[properties.p]\ngetter = \"busy\"\ncontrol_kind = \"shown\"\nrecord_kind = \"data\"\ntype = \"double\"\n":   `x.toml: properties.p.control_kind: is "shown", not one of hinted, normal, omitted`,
		head + "[messages.a]\n[messages.a]\n":                                                                               `x.toml: toml: line 4`,
	} {
		_, err := ComposeTOML("x.toml", []byte(text))
		require.Error(t, err, text)
		assert.ErrorIs(t, err, ErrDescription)
		assert.Contains(t, err.Error(), "yaq: bad daemon description: "+want, text)
	}
	// Redeclaring a trait's message as the trait does (for a doc) is fine.
	_, err := ComposeTOML("x.toml", []byte(head+"[messages.busy]\nresponse = \"boolean\"\ndoc = \"moving\"\n"))
	assert.NoError(t, err)
}

func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{1: "1.0", 0.1: "0.1", 1e-5: "1e-05", 1e16: "1e+16", 1e15: "1000000000000000.0",
		-2.5: "-2.5", 0: "0.0", math.NaN(): "NaN", math.Inf(-1): "-Infinity", 1234.5e-7: "0.00012345"} {
		assert.Equal(t, want, pyFloat(f), "%v", f)
	}
	assert.Equal(t, `{"a": [1, 2.0, null, true, "\u00e9\ud83d\ude00"]}`, pyJSON(map[string]any{"a": []any{int64(1), 2.0, nil, true, "é😀"}}, -1))
}

// runProgram runs p on a config of one table [d] with extra keys and
// returns its address, config path, log and exit status.
func runProgram(t *testing.T, p *Program, extra string) (string, string, *hostile.Log, <-chan int) {
	t.Helper()
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), "d.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[d]\nport = %d\nhost = \"127.0.0.1\"\n%s", port, extra)), 0o644))
	logs := &hostile.Log{}
	p.Stderr = logs
	done := make(chan int, 1)
	ended := make(chan struct{})
	go func() {
		done <- p.Run([]string{"--config", cfg})
		close(ended)
	}()
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// The program writes its state file as it stops, so it must have ended
	// before the test's temporary directories are removed (cleanups run in
	// reverse order, after this one). A test that left it running is
	// shut down here.
	t.Cleanup(func() {
		select {
		case <-ended:
			return
		case <-time.After(100 * time.Millisecond):
		}
		if c, err := yaq.Dial(context.Background(), addr, nil); err == nil {
			_ = c.Call(context.Background(), "shutdown", nil, nil)
			c.Close()
		}
		select {
		case <-ended:
		case <-time.After(10 * time.Second):
			t.Errorf("the program on %s did not end: %s", addr, logs.String())
		}
	})
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		select {
		case code := <-done:
			t.Fatalf("the program exited with %d: %s", code, logs.String())
		default:
		}
		if c, err := yaq.Dial(context.Background(), addr, nil); err == nil {
			c.Close()
			return addr, cfg, logs, done
		}
	}
	t.Fatalf("the program did not start: %s", logs.String())
	return "", "", nil, nil
}

// A daemon stating only its traits answers every trait message, clamps to
// its limits, keeps its state in the state file, and restarts.
func TestProgramTraitDefaults(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	moves := make(chan float64, 8)
	p := &Program{Kind: "stage", Traits: []string{"has-limits"}, New: func(d *Daemon) error {
		units := "mm"
		d.Position.Units = &units
		d.Position.Move = func(to float64) error { moves <- to; d.Arrived(to); return nil }
		return nil
	}}
	addr, cfg, logs, done := runProgram(t, p, "limits = [0, 10]\nmake = \"ndpack\"\n")
	ctx := context.Background()
	c, err := yaq.Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var id map[string]any
	require.NoError(t, c.Call(ctx, "id", nil, &id))
	assert.Equal(t, map[string]any{"name": "d", "kind": "stage", "make": "ndpack", "model": nil, "serial": nil}, id)
	var text string
	require.NoError(t, c.Call(ctx, "get_config", nil, &text))
	assert.Contains(t, text, "limits = [0.0, 10.0]\n")
	assert.Contains(t, text, "log_level = \"info\"\n")
	assert.NotContains(t, text, "serial", "null values are left out, as tomli_w leaves them")
	var path string
	require.NoError(t, c.Call(ctx, "get_config_filepath", nil, &path))
	assert.Equal(t, cfg, path)

	var got float64
	require.NoError(t, c.Call(ctx, "set_position", []any{12.5}, nil))
	assert.Equal(t, 10.0, <-moves, "clamped to the closest limit")
	require.NoError(t, c.Call(ctx, "get_position", nil, &got))
	assert.Equal(t, 10.0, got)
	require.NoError(t, c.Call(ctx, "set_relative", []any{-4.0}, &got))
	assert.Equal(t, 6.0, got)
	assert.Equal(t, 6.0, <-moves)
	var lim []float64
	require.NoError(t, c.Call(ctx, "get_limits", nil, &lim))
	assert.Equal(t, []float64{0, 10}, lim)
	var in bool
	require.NoError(t, c.Call(ctx, "in_limits", []any{11.0}, &in))
	assert.False(t, in)
	var units any
	require.NoError(t, c.Call(ctx, "get_units", nil, &units))
	assert.Equal(t, "mm", units)
	var busy bool
	require.NoError(t, c.Call(ctx, "busy", nil, &busy))
	assert.False(t, busy)
	require.NoError(t, c.Call(ctx, "get_state", nil, &text))
	assert.Equal(t, "destination = 6.0\nhw_limits = [-inf, inf]\nposition = 6.0\n", text)

	// restart: served again from the config file, with the state it saved.
	require.NoError(t, c.Call(ctx, "shutdown", []any{true}, nil))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "not restarted: %s", logs.String())
		if c.Call(ctx, "get_position", nil, &got) == nil {
			break
		}
	}
	assert.Equal(t, 6.0, got)
	// The state was saved when the daemon stopped, before it started again.
	saved, err := os.ReadFile(StateFile("stage", "d"))
	require.NoError(t, err)
	assert.Equal(t, "destination = 6.0\nhw_limits = [-inf, inf]\nposition = 6.0\n", string(saved))
	require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
	select {
	case code := <-done:
		assert.Equal(t, 0, code, logs.String())
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not end the program")
	}
}

// out_of_limits = "error" answers a yaq error, "ignore" does nothing.
func TestProgramOutOfLimits(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	for mode, want := range map[string]string{"error": "ValueError('12.0 not in ranges [0.0, 1.0]')", "ignore": ""} {
		p := &Program{Kind: "stage", Traits: []string{"has-limits"}}
		addr, _, _, _ := runProgram(t, p, fmt.Sprintf("limits = [0, 1]\nout_of_limits = %q\n", mode))
		ctx := context.Background()
		c, err := yaq.Dial(ctx, addr, nil)
		require.NoError(t, err)
		err = c.Call(ctx, "set_position", []any{12.0}, nil)
		var dest float64
		require.NoError(t, c.Call(ctx, "get_destination", nil, &dest))
		assert.True(t, math.IsNaN(dest), "the destination is unchanged")
		if want != "" {
			var re *yaq.RemoteError
			require.ErrorAs(t, err, &re)
			assert.Equal(t, want, re.Message)
		} else {
			assert.NoError(t, err)
		}
		require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
		c.Close()
	}
}

// The config is checked against the protocol's types, table by table.
func TestProgramConfigChecks(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := t.TempDir()
	p := func() *Program { return &Program{Kind: "stage", Traits: []string{"has-limits"}} }
	for table, want := range map[string]string{
		"[a]\nport = \"x\"\n":                            "[a] port: the string \"x\" is not a int",
		"[a]\nhost = \"127.0.0.1\"\n":                    "[a] port is required: The TCP port the daemon listens on.",
		"[a]\nport = 1\nlimits = [0, \"b\"]\n":           "[a] limits[1]: the string \"b\" is not a double",
		"[a]\nport = 1\nlog_level = \"loud\"\n":          "[a] log_level: the string \"loud\" is not one of the level symbols debug, info, notice",
		"[a]\nport = 1\nout_of_limits = 3\n":             "[a] out_of_limits: the integer 3 is not one of the out_of_limits symbols",
		"[a]\nport = 1\nenable = false\n":                "every daemon is disabled",
		"[shared-settings]\nenable = false\n[a]\nport=1": "every daemon is disabled",
		"port = 1\n": "has no [daemon] table",
	} {
		path := filepath.Join(dir, "c.toml")
		require.NoError(t, os.WriteFile(path, []byte(table), 0o644))
		var errb bytes.Buffer
		prog := p()
		prog.Stderr = &errb
		assert.Equal(t, 1, prog.Run([]string{"--config", path}), table)
		assert.Contains(t, errb.String(), want, table)
		assert.Contains(t, errb.String(), "config "+path, table)
	}
	// An unknown key is a warning, and kept.
	prog := p()
	addr, _, logs, _ := runProgram(t, prog, "velocity = 3\n")
	assert.Contains(t, logs.String(), "velocity is not a config key of stage; kept")
	c, err := yaq.Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var text string
	require.NoError(t, c.Call(context.Background(), "get_config", nil, &text))
	assert.Contains(t, text, "velocity = 3\n")
	require.NoError(t, c.Call(context.Background(), "shutdown", nil, nil))
}

func TestProgramCommandLine(t *testing.T) {
	var out, errb bytes.Buffer
	p := &Program{Kind: "stage", Traits: []string{"has-position"}, Version: "1.2", Stdout: &out, Stderr: &errb}
	assert.Equal(t, 0, p.Run([]string{"--version"}))
	assert.Equal(t, "yaqd-stage 1.2\n", out.String())
	out.Reset()
	assert.Equal(t, 0, p.Run([]string{"--protocol"}))
	c, err := p.Compose()
	require.NoError(t, err)
	assert.Equal(t, c.Indented+"\n", out.String())
	assert.Equal(t, 2, p.Run([]string{"--log-level", "loud"}))
	bad := &Program{Description: []byte("protocol = 1\n"), DescriptionFile: "bad.toml", Stderr: &errb}
	assert.Equal(t, 1, bad.Run([]string{"--protocol"}))
	assert.Contains(t, errb.String(), "bad.toml: protocol:")
	_, err = (&Program{}).Compose()
	assert.Error(t, err)
	assert.False(t, errors.Is(err, ErrDescription))
}

// A Daemon the package did not make cannot be half-made: every method
// works on its own state, none panics, and one made by yaq.NewDaemon
// without a Program serves, while a zero yaq.Daemon refuses to.
func TestDaemonZeroValue(t *testing.T) {
	var d Daemon
	assert.Nil(t, d.Get("position"))
	d.Set("position", 2.5)
	assert.Equal(t, 2.5, d.Float("position"))
	assert.False(t, d.isBusy())
	d.SetBusy(true)
	assert.True(t, d.isBusy())
	assert.True(t, d.WaitBusy(context.Background()))
	d.SetBusy(false)
	assert.False(t, d.WaitBusy(context.Background()), "a daemon that cannot serve is done")
	assert.Equal(t, int64(1), d.SetMeasured(map[string]any{"x": 1.0}))
	assert.Equal(t, int64(1), d.measured["measurement_id"])
	d.SetMappings(map[string]any{"w": 1.0})
	d.SetMapping("v", 2.0)
	assert.Equal(t, 2.0, d.mappings["v"])
	assert.False(t, d.Looping())
	assert.Equal(t, "", d.Kind())
	ran := make(chan error, 1)
	d.Go(func(ctx context.Context) { ran <- ctx.Err() })
	assert.Error(t, <-ran, "the task's context has ended")
	d.Logf("info", "a line")
	assert.False(t, d.Arrived(2.5))
	assert.Error(t, d.Handle("id", nil))
	var server yaq.Daemon
	assert.Error(t, server.Handle("id", nil))
	assert.Error(t, server.Serve(nil))
	assert.NoError(t, server.Close())
	assert.NoError(t, server.Shutdown(context.Background()))
	<-server.Context().Done()
	assert.Nil(t, server.Protocol())
}

// Program.Serve is the harness a daemon author tests with: a config table
// as a map, a listener, no file and no free port; Close returns once the
// state is saved.
func TestProgramServe(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	p := &Program{Kind: "stage", Traits: []string{"has-limits"}, Stderr: io.Discard, New: func(d *Daemon) error {
		d.Position.Move = func(to float64) error { d.Arrived(to); return nil }
		return nil
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	d, err := p.Serve(l, "s", map[string]any{"limits": []any{-1, 1}})
	require.NoError(t, err)
	ctx := context.Background()
	c, err := yaq.Dial(ctx, l.Addr().String(), nil)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Call(ctx, "set_position", []any{5.0}, nil))
	var pos float64
	require.NoError(t, c.Call(ctx, "get_position", nil, &pos))
	assert.Equal(t, 1.0, pos, "clamped to the table's limits")
	require.NoError(t, d.Close())
	text, err := os.ReadFile(StateFile("stage", "s"))
	require.NoError(t, err, "the state is saved when Close returns")
	assert.Contains(t, string(text), "position = 1.0")

	_, err = p.Serve(l, "../s", map[string]any{})
	assert.ErrorContains(t, err, "is not a daemon name")
	_, err = p.Serve(l, "s", map[string]any{"limits": "wide"})
	assert.ErrorContains(t, err, `[s] limits: the string "wide" is not a array`)
}

// Close right after Serve returns waits for the last save of the state:
// the state is kept from the moment Serve returns, not from when the
// serving goroutine gets round to it.
func TestProgramServeThenClose(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	for i := range 20 {
		p := &Program{Kind: "stage", Traits: []string{"has-position"}, Stderr: io.Discard, New: func(d *Daemon) error {
			d.Set("position", float64(i))
			return nil
		}}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		d, err := p.Serve(l, "s", map[string]any{})
		require.NoError(t, err)
		require.NoError(t, d.Close())
		text, err := os.ReadFile(StateFile("stage", "s"))
		require.NoError(t, err, "run %d", i)
		assert.Contains(t, string(text), fmt.Sprintf("position = %d.0\n", i))
	}
}

// The kit answers busy and get_state through the server's Busy and State
// hooks: a New that sets them would silently replace the kit's answers, so
// the daemon is refused at start, with what to do instead.
func TestProgramRefusesNewSettingTheKitsHooks(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	for hook, set := range map[string]func(d *Daemon){
		"Daemon.Busy, which the kit sets: busy answers what SetBusy sets":      func(d *Daemon) { d.Busy = func() bool { return true } },
		"Daemon.State, which the kit sets: get_state answers the state fields": func(d *Daemon) { d.State = func() map[string]any { return nil } },
	} {
		var errb bytes.Buffer
		p := &Program{Kind: "stage", Traits: []string{"has-position"}, Stderr: &errb, New: func(d *Daemon) error { set(d); return nil }}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		_, err = p.Serve(l, "d", map[string]any{})
		assert.ErrorContains(t, err, "d: Program.New set "+hook)
		l.Close()
		cfg := filepath.Join(t.TempDir(), "c.toml")
		port := freePort(t)
		require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[d]\nport = %d\nhost = \"127.0.0.1\"\n", port)), 0o644))
		code := make(chan int, 1)
		go func() { code <- p.Run([]string{"--config", cfg}) }()
		select {
		case c := <-code:
			assert.Equal(t, 1, c)
		case <-time.After(5 * time.Second):
			if c, err := yaq.Dial(context.Background(), fmt.Sprintf("127.0.0.1:%d", port), nil); err == nil {
				_ = c.Call(context.Background(), "shutdown", nil, nil)
				c.Close()
			}
			t.Fatalf("the daemon started: %s", errb.String())
		}
		assert.Contains(t, errb.String(), "yaqd-stage: d: Program.New set "+hook)
	}
	// A handler of its own is the way to answer busy otherwise.
	p := &Program{Kind: "stage", Traits: []string{"has-position"}, Stderr: io.Discard, New: func(d *Daemon) error {
		return d.Handle("busy", func(context.Context, []any) (any, error) { return true, nil })
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	d, err := p.Serve(l, "d", map[string]any{})
	require.NoError(t, err)
	defer d.Close()
	c, err := yaq.Dial(context.Background(), l.Addr().String(), nil)
	require.NoError(t, err)
	defer c.Close()
	var busy bool
	require.NoError(t, c.Call(context.Background(), "busy", nil, &busy))
	assert.True(t, busy)
}

// A misspelt trait in Program.Traits stops the daemon at start, naming
// the trait and the ones yaq has.
func TestProgramUnknownTrait(t *testing.T) {
	p := &Program{Kind: "stage", Traits: []string{"has-limit"}}
	_, err := p.Compose()
	require.ErrorIs(t, err, ErrDescription)
	assert.Contains(t, err.Error(), `unknown trait "has-limit" (yaq's are has-dependents, has-limits,`)
}
