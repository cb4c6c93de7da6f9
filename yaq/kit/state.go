package kit

import (
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/internal/yaqtoml"
)

// StateFile is where yaqd-core keeps a daemon's state between runs:
// <data home>/yaqd-state/<kind>/<name>-state.toml, the data home being
// $XDG_DATA_HOME, or ~/.local/share.
func StateFile(kind, name string) string {
	return filepath.Join(dataHome(), "yaqd-state", kind, name+"-state.toml")
}

func dataHome() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".local", "share")
}

func xdgHome(env, fallback string) string {
	if d := os.Getenv(env); d != "" && filepath.IsAbs(d) {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, fallback)
}

// loadState fills the state fields from the state file, each checked
// against its type, and the rest from their defaults, and returns the
// file's text. A file that cannot be read or parsed (not a regular file,
// over 1 MiB, nested too deep, not TOML) is set aside under a name of its
// own with one log line, and the daemon starts from its defaults, as
// yaqd-core ignores such a file; a field whose saved value no longer fits
// its type takes its default.
func (d *Daemon) loadState(path string) []byte {
	saved, text, err := readTOMLFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		msg := fmt.Sprintf("state file %s: %v; starting from the defaults", path, err)
		if aside, aerr := setAside(path); aerr == nil {
			msg += ", the file set aside as " + filepath.Base(aside)
		} else {
			msg += fmt.Sprintf(" (it could not be set aside: %v)", aerr)
		}
		d.Logf("warning", "%s", msg)
	}
	if saved == nil {
		saved = map[string]any{}
	}
	tree, _ := d.composed.tree["state"].(map[string]any)
	for name, v := range saved {
		d.state[name] = v
	}
	for _, name := range sortedKeys(d.composed.state) {
		s := d.composed.state[name]
		if v, has := saved[name]; has {
			if x, err := checkValue(s, v, name); err == nil {
				d.state[name] = x
				continue
			} else {
				d.Logf("warning", "state file %s: %v; using the default", path, err)
			}
		}
		f, _ := tree[name].(map[string]any)
		def, _ := checkValue(s, deepCopy(f["default"]), name)
		d.state[name] = def
	}
	return text
}

// saveState writes the state file if the state differs from what was last
// written (or read), through internal/atomicfile (a temporary file beside
// it, synced and renamed over it), so that a crash leaves the old state or
// the new, never half of one. A state that TOML cannot hold, or whose file
// loadState would set aside (over maxTOMLFile), is not written: the file
// keeps the last state written, and the error says why.
func (d *Daemon) saveState(path string, last *string) error {
	b, err := yaqtoml.Marshal(d.stateSnapshot())
	if err != nil {
		return fmt.Errorf("the state cannot be written as TOML: %w", err)
	}
	if len(b) > maxTOMLFile {
		return fmt.Errorf("the state takes %d bytes as TOML, over the %d a state file may hold", len(b), maxTOMLFile)
	}
	text := string(b)
	if text == *last {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	// 0644, as yaqd-core's open() makes it; a file there keeps its mode.
	err = atomicfile.Write(path, 0o644, func(f *os.File) error {
		if _, err := f.Write(b); err != nil {
			return err
		}
		return f.Sync() // the state outlives a power loss, as a database's would
	})
	if err != nil {
		return err
	}
	*last = text
	return nil
}

// keepState saves the state at most once a second while the daemon runs,
// then once more when it has closed and its tasks have ended; loaded is
// the file's text as loadState read it. An error is logged when it first
// comes, not again each second while it lasts.
func (d *Daemon) keepState(path string, loaded []byte, done <-chan struct{}) {
	last, lastErr := string(loaded), ""
	save := func() {
		err := d.saveState(path, &last)
		switch {
		case err == nil:
			lastErr = ""
		case err.Error() != lastErr:
			lastErr = err.Error()
			d.Logf("error", "saving the state to %s: %v", path, err)
		}
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			save()
		case <-done:
			d.tasks.Wait()
			lastErr = "" // the last word is always logged
			save()
			return
		}
	}
}

// The log levels of is-daemon's level enum, with Python's numbers.
var logLevels = map[string]int{"debug": 10, "info": 20, "notice": 25, "warning": 30, "error": 40,
	"critical": 50, "alert": 60, "emergency": 70}

// Logf logs a message at level (one of is-daemon's levels: debug, info,
// notice, warning, error, critical, alert, emergency) if the daemon's
// log_level lets it through, to ErrorLog, and to the daemon's log file when
// its config sets log_to_file.
func (d *Daemon) Logf(level, format string, args ...any) {
	n, ok := logLevels[level]
	if !ok {
		n = logLevels["info"]
	}
	threshold := logLevels["info"]
	var sink func(string)
	d.mu.Lock()
	if d.level != 0 {
		threshold = d.level
	}
	sink = d.logSink
	d.mu.Unlock()
	if n < threshold {
		return
	}
	name := ""
	if d.Daemon != nil {
		name = d.Name
	}
	line := fmt.Sprintf("%s %s: %s", strings.ToUpper(level), name, fmt.Sprintf(format, args...))
	if d.Daemon != nil && d.ErrorLog != nil {
		d.ErrorLog.Print(line)
	} else {
		log.Print(line)
	}
	if sink != nil {
		sink(line)
	}
}

// openLogFile opens the file log_to_file asks for, where yaqd-core puts
// it: <state home>/yaqd-<kind>/log/<name>-<time>.log.
func openLogFile(kind, name string) (*os.File, error) {
	dir := filepath.Join(xdgHome("XDG_STATE_HOME", ".local/state"), "yaqd-"+kind, "log")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(filepath.Join(dir, name+"-"+time.Now().Format("20060102T150405-0700")+".log"),
		os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
}
