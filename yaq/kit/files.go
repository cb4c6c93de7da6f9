package kit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ndpack/ndpack/internal/yaqtoml"
)

// maxTOMLFile bounds the config and state files a Program reads: real
// ones are a few kilobytes. Past it a file is refused before the TOML
// parser sees it (which reads whatever it is given); the nesting within is
// bounded by yaqtoml.Decode.
const maxTOMLFile = 1 << 20

// readTOMLFile reads the TOML file at path, and its errors leave the path
// for the caller to say: only a regular file (a FIFO,
// a device or a link to one is refused at once, never waited on) of at
// most maxTOMLFile bytes, nesting at most yaqtoml.MaxDepth deep.
func readTOMLFile(path string) (map[string]any, []byte, error) {
	// O_NONBLOCK: opening a FIFO with no writer must not wait.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the caller names the file
		}
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("not a regular file but %s", fileKind(fi.Mode()))
	}
	if fi.Size() > maxTOMLFile {
		return nil, nil, fmt.Errorf("%d bytes, over the %d a config or state file may hold", fi.Size(), maxTOMLFile)
	}
	text, err := io.ReadAll(io.LimitReader(f, maxTOMLFile+1))
	if err != nil {
		return nil, nil, err
	}
	if len(text) > maxTOMLFile {
		return nil, nil, fmt.Errorf("grew past the %d bytes a config or state file may hold", maxTOMLFile)
	}
	out, err := yaqtoml.Decode(text)
	if err != nil {
		return nil, nil, errors.New(cutShort(err.Error(), 300))
	}
	return out, text, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0, m&os.ModeCharDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a file"
}

// cutShort keeps the first n bytes of s, saying how much it left out, so
// that a hostile file cannot make a log line of megabytes.
func cutShort(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s... (%d more bytes)", strings.ToValidUTF8(s[:n], ""), len(s)-n)
}

// setAside renames the unreadable state file at path out of the way, as a
// database sets aside a corrupt file, so that the daemon starts from its
// defaults and the next save does not meet it again; the file's bytes are
// kept for whoever wants to look. It returns the new name.
func setAside(path string) (string, error) {
	aside := fmt.Sprintf("%s.bad-%s", path, time.Now().Format("20060102T150405.000000000"))
	if err := os.Rename(path, aside); err != nil {
		return "", err
	}
	return aside, nil
}

// checkName refuses a daemon name that is not one path element: the name
// is part of the state and log files' names, and "../x" would put them
// outside their folders.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") || filepath.Base(name) != name {
		return errors.New("is not a daemon name: a name is one path element (no /, \\, or NUL, and not . or ..), as it names the daemon's state and log files")
	}
	return nil
}
