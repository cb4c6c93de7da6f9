//go:build unix

package kit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ndpack/ndpack/yaq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SIGHUP stops every daemon, saves its state and starts them again from
// the config file, as yaqd-core does; log_to_file writes the log where
// yaqd-core puts it.
func TestProgramSIGHUPAndLogFile(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	p := &Program{Kind: "stage", Traits: []string{"has-position"}, New: func(d *Daemon) error {
		d.Position.Move = func(to float64) error { d.Arrived(to); return nil }
		return nil
	}}
	addr, _, logs, done := runProgram(t, p, "log_to_file = true\n")
	ctx := context.Background()
	c, err := yaq.Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Call(ctx, "set_position", []any{2.5}, nil))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "not restarted: %s", logs.String())
		if strings.Count(logs.String(), "serving stage on") == 2 {
			break
		}
	}
	c.Close()
	c, err = yaq.Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var pos float64
	require.NoError(t, c.Call(ctx, "get_position", nil, &pos))
	assert.Equal(t, 2.5, pos, "the state was saved and loaded again")
	logFiles, err := filepath.Glob(filepath.Join(os.Getenv("XDG_STATE_HOME"), "yaqd-stage", "log", "d-*.log"))
	require.NoError(t, err)
	require.NotEmpty(t, logFiles, "a file per start, named to the second")
	var text []byte
	for _, f := range logFiles {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		text = append(text, b...)
	}
	assert.Equal(t, 2, strings.Count(string(text), "INFO d: serving stage on 127.0.0.1:"), "%s", text)
	require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not end the program")
	}
}

// SIGHUP reads the config file again: a table added since the start is a
// daemon that answers, a table removed is a daemon that stops, as
// yaqd-core's shutdown_all means to (_is_daemon.py, lines 302-305: it
// loads the file again and starts each of its tables).
func TestProgramSIGHUPReadsTheConfigAgain(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	p := &Program{Kind: "stage", Traits: []string{"has-position"}}
	addrD, cfg, logs, done := runProgram(t, p, "")
	ctx := context.Background()
	original, err := os.ReadFile(cfg)
	require.NoError(t, err)
	portE := freePort(t)
	addrE := fmt.Sprintf("127.0.0.1:%d", portE)
	tableE := fmt.Sprintf("[e]\nport = %d\nhost = \"127.0.0.1\"\n", portE)
	hangUp := func(servings int) {
		t.Helper()
		require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
		for deadline := time.Now().Add(5 * time.Second); strings.Count(logs.String(), "serving stage on") < servings; time.Sleep(20 * time.Millisecond) {
			require.True(t, time.Now().Before(deadline), "not restarted: %s", logs.String())
		}
	}
	name := func(addr string) (string, error) {
		c, err := yaq.Dial(ctx, addr, nil)
		if err != nil {
			return "", err
		}
		defer c.Close()
		var id struct{ Name string }
		err = c.Call(ctx, "id", nil, &id)
		return id.Name, err
	}

	_, err = name(addrE)
	require.Error(t, err, "no table [e] yet")
	require.NoError(t, os.WriteFile(cfg, append(original, tableE...), 0o644))
	hangUp(1 + 2) // d, then d and e
	got, err := name(addrE)
	require.NoError(t, err)
	assert.Equal(t, "e", got, "the table added answers")
	got, err = name(addrD)
	require.NoError(t, err)
	assert.Equal(t, "d", got)

	require.NoError(t, os.WriteFile(cfg, []byte(tableE), 0o644))
	hangUp(1 + 2 + 1) // e alone
	_, err = name(addrD)
	assert.Error(t, err, "the table removed is a daemon stopped")
	got, err = name(addrE)
	require.NoError(t, err)
	assert.Equal(t, "e", got)

	c, err := yaq.Dial(ctx, addrE, nil)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
	select {
	case code := <-done:
		assert.Equal(t, 0, code, "%s", logs.String())
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not end the program")
	}
}
