//go:build unix

package yaq

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// SIGHUP stops every daemon, saves its state and starts them again from
// the config file, as yaqd-core does; log_to_file writes the log where
// yaqd-core puts it.
func TestProgramSIGHUPAndLogFile(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	p := &Program{Kind: "stage", Traits: []*Trait{HasPosition}, New: func(d *Daemon) error {
		d.Position.Move = func(to float64) error { d.Arrived(to); return nil }
		return nil
	}}
	addr, _, logs, done := runProgram(t, p, "log_to_file = true\n")
	ctx := context.Background()
	c, err := Dial(ctx, addr)
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
	c, err = Dial(ctx, addr)
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
