package kit

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
)

// The bounds on the config and state files a Program reads: real ones are
// a few kilobytes and nest a few levels. Past them a file is refused before
// the TOML parser sees it (it recurses once per level, and reads whatever
// it is given).
const (
	maxTOMLFile  = 1 << 20
	maxTOMLDepth = 64
)

// readTOMLFile reads the TOML file at path, and its errors leave the path
// for the caller to say: only a regular file (a FIFO,
// a device or a link to one is refused at once, never waited on) of at
// most maxTOMLFile bytes, nesting arrays and inline tables at most
// maxTOMLDepth deep.
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
	if err := checkTOMLDepth(text); err != nil {
		return nil, nil, err
	}
	var out map[string]any
	if _, err := toml.Decode(string(text), &out); err != nil {
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

// checkTOMLDepth refuses text whose arrays and inline tables nest deeper
// than maxTOMLDepth, skipping strings and comments; it is linear and
// allocates nothing. (A table header's "[[" counts as two levels for the
// moment it is open, which no real file comes near.)
func checkTOMLDepth(text []byte) error {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '[', '{':
			if depth++; depth > maxTOMLDepth {
				return fmt.Errorf("arrays or tables nest deeper than %d levels at byte %d", maxTOMLDepth, i)
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '#':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case '"', '\'':
			i = skipTOMLString(text, i)
		}
	}
	return nil
}

// skipTOMLString returns the index of the last byte of the string that
// starts at text[i] (a basic or literal string, one line or three quotes),
// or the end of text.
func skipTOMLString(text []byte, i int) int {
	q := text[i]
	if bytes.HasPrefix(text[i:], []byte{q, q, q}) {
		end := bytes.Index(text[i+3:], []byte{q, q, q})
		if end < 0 {
			return len(text)
		}
		return i + 3 + end + 2
	}
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q, '\n':
			return j
		}
	}
	return len(text)
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
