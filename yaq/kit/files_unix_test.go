//go:build unix

package kit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/yaq"
)

// A daemon's name is one path element: a table named to climb out of the
// state and log folders is refused before anything is written.
func TestProgramRefusesNamesThatEscape(t *testing.T) {
	data, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_DATA_HOME", filepath.Join(data, "a", "b", "c"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(state, "a", "b", "c"))
	dir := t.TempDir()
	for _, name := range []string{"../../../../../../elsewhere/x", "a/b", "..", `a\b`} {
		path := filepath.Join(dir, "c.toml")
		require.NoError(t, os.WriteFile(path, []byte(fmt.Sprintf("[%q]\nport = %d\nhost = \"127.0.0.1\"\nlog_to_file = true\n", name, freePort(t))), 0o644))
		var errb bytes.Buffer
		p := &Program{Kind: "stage", Traits: []string{"has-position"}, Stderr: &errb}
		assert.Equal(t, 1, p.Run([]string{"--config", path}), name)
		assert.Contains(t, errb.String(), "is not a daemon name: a name is one path element", name)
		assert.Equal(t, 1, strings.Count(errb.String(), "\n"), "one line: %s", errb.String())
	}
	for _, root := range []string{data, state} {
		var files []string
		filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		assert.Empty(t, files, "nothing written under %s", root)
	}
}

// A state file that cannot be read as one (a link to /dev/zero, a FIFO,
// 300,000 nested arrays, hidden or not behind a string that ends as only
// TOML's grammar says, 100,000 dotted key parts, over a megabyte, not TOML)
// is set aside with one short log line, and the daemon starts from its
// defaults at once.
func TestProgramSetsAsideABadStateFile(t *testing.T) {
	deep := strings.Repeat("[", 300_000) + "1" + strings.Repeat("]", 300_000)
	write := func(text string) func(path string) error {
		return func(path string) error { return os.WriteFile(path, []byte(text), 0o600) }
	}
	for name, make := range map[string]func(path string) error{
		"a link to /dev/zero":  func(path string) error { return os.Symlink("/dev/zero", path) },
		"a FIFO":               func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"deep nesting":         write("position = " + deep),
		`after '''x''''`:       write("position = ['''x'''', " + deep + "]\n"),
		`after """x"""""`:      write(`position = ["""x""""", ` + deep + "]\n"),
		"100,000 dotted parts": write(strings.Repeat("x.", 100_000) + "x = 1\n"),
		"100,000 header parts": write("[" + strings.Repeat("x.", 100_000) + "x]\n"),
		"over a megabyte":      func(path string) error { return os.WriteFile(path, bytes.Repeat([]byte("# x\n"), 300_000), 0o600) },
		"not TOML":             write("position = = 3\n" + deep[:2000]),
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("XDG_DATA_HOME", t.TempDir())
			statePath := StateFile("stage", "d")
			require.NoError(t, os.MkdirAll(filepath.Dir(statePath), 0o755))
			require.NoError(t, make(statePath))
			start := time.Now()
			p := &Program{Kind: "stage", Traits: []string{"has-position"}}
			addr, _, logs, done := runProgram(t, p, "")
			assert.Less(t, time.Since(start), 5*time.Second)
			c, err := yaq.Dial(context.Background(), addr, nil)
			require.NoError(t, err)
			defer c.Close()
			var pos float64
			require.NoError(t, c.Call(context.Background(), "get_position", nil, &pos))
			assert.True(t, pos != pos, "the default position, NaN: %v", pos)
			lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
			var warning string
			for _, l := range lines {
				if strings.Contains(l, "state file") {
					assert.Empty(t, warning, "one line: %s", logs.String())
					warning = l
				}
			}
			require.NotEmpty(t, warning, logs.String())
			assert.Less(t, len(warning), 800, warning)
			assert.Contains(t, warning, "starting from the defaults, the file set aside as d-state.toml.bad-")
			aside, err := filepath.Glob(statePath + ".bad-*")
			require.NoError(t, err)
			require.Len(t, aside, 1)
			require.NoError(t, c.Call(context.Background(), "shutdown", nil, nil))
			select {
			case code := <-done:
				assert.Equal(t, 0, code)
			case <-time.After(10 * time.Second):
				t.Fatal("shutdown did not end the program")
			}
			fi, err := os.Lstat(statePath)
			require.NoError(t, err, "a fresh state file is written")
			assert.True(t, fi.Mode().IsRegular())
		})
	}
}

// A config file that is not a small regular file is refused at once, with
// one line.
func TestProgramRefusesABadConfigFile(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	deep := filepath.Join(dir, "deep.toml")
	require.NoError(t, os.WriteFile(deep, []byte("[d]\nport = "+strings.Repeat("[", 10_000)), 0o600))
	for path, want := range map[string]string{
		"/dev/zero": "config /dev/zero: not a regular file but a device",
		fifo:        "config " + fifo + ": not a regular file but a FIFO",
		deep:        "config " + deep + ": keys, arrays and tables nest deeper than 64 levels at byte",
	} {
		var errb bytes.Buffer
		p := &Program{Kind: "stage", Traits: []string{"has-position"}, Stderr: &errb}
		start := time.Now()
		assert.Equal(t, 1, p.Run([]string{"--config", path}), path)
		assert.Less(t, time.Since(start), 5*time.Second)
		assert.Contains(t, errb.String(), want)
		assert.Equal(t, 1, strings.Count(errb.String(), "\n"), "one line: %s", errb.String())
	}
}

// SIGHUP with a config that no longer checks logs the error and leaves the
// daemons serving; a config fixed then is read at the next SIGHUP.
func TestProgramSIGHUPKeepsRunningOnABadConfig(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	p := &Program{Kind: "stage", Traits: []string{"has-position"}}
	addr, cfg, logs, done := runProgram(t, p, "")
	good, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(cfg, append(append([]byte{}, good...), "log_level = \"loud\"\n"...), 0o644))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(logs.String(), "SIGHUP: "); time.Sleep(10 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "no word of the bad config: %s", logs.String())
	}
	assert.Contains(t, logs.String(), `yaqd-stage: SIGHUP: config `+cfg+`: [d] log_level: the string "loud" is not one of the level symbols`)
	assert.Contains(t, logs.String(), "; the daemons keep running\n")
	c, err := yaq.Dial(context.Background(), addr, nil)
	require.NoError(t, err, "the daemon still serves")
	var id struct{ Name string }
	require.NoError(t, c.Call(context.Background(), "id", nil, &id))
	c.Close()
	assert.Equal(t, 1, strings.Count(logs.String(), "serving stage on"), "not restarted")

	require.NoError(t, os.WriteFile(cfg, good, 0o644))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	for deadline := time.Now().Add(5 * time.Second); strings.Count(logs.String(), "serving stage on") < 2; time.Sleep(10 * time.Millisecond) {
		require.True(t, time.Now().Before(deadline), "not restarted: %s", logs.String())
	}
	c, err = yaq.Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	require.NoError(t, c.Call(context.Background(), "shutdown", nil, nil))
	c.Close()
	select {
	case code := <-done:
		assert.Equal(t, 0, code)
	case <-time.After(10 * time.Second):
		t.Fatal("shutdown did not end the program")
	}
}

// The state file is written as every file of the module is, through
// internal/atomicfile: a state file that is a link to a file elsewhere
// stays a link, and the file it leads to gets the new state; no
// temporary file is left beside it.
func TestStateFileThroughALink(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	elsewhere := filepath.Join(t.TempDir(), "kept-state.toml")
	require.NoError(t, os.WriteFile(elsewhere, []byte("position = 1.5\n"), 0o600))
	statePath := StateFile("stage", "d")
	require.NoError(t, os.MkdirAll(filepath.Dir(statePath), 0o755))
	require.NoError(t, os.Symlink(elsewhere, statePath))
	d, _, _ := serveStage(t, nil)
	assert.Equal(t, 1.5, d.Float("position"), "read through the link")
	d.Set("position", 2.5)
	closeWithin(t, d, 5*time.Second)
	fi, err := os.Lstat(statePath)
	require.NoError(t, err)
	assert.True(t, fi.Mode()&os.ModeSymlink != 0, "still a link")
	text, err := os.ReadFile(elsewhere)
	require.NoError(t, err)
	assert.Equal(t, "destination = nan\nposition = 2.5\n", string(text))
	for _, dir := range []string{filepath.Dir(statePath), filepath.Dir(elsewhere)} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Len(t, entries, 1, "nothing but the file in %s", dir)
	}
}
