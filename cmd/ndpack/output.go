package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/internal/peertext"
)

// output is where a command writes: standard output, a FIFO or device
// written into as it is (as cp and gzip -c do), or a regular file written
// through a temporary and renamed into place when whole.
type output struct {
	w      io.Writer
	commit func() error // makes the output complete; the file's rename
	abort  func()       // undoes an uncommitted output; does nothing after commit
}

// isStdout reports whether name means standard output.
func isStdout(name string) bool {
	return name == "-" || name == "/dev/stdout" || name == "/dev/fd/1" || name == "/proc/self/fd/1"
}

// openOutput opens name for writing. Only a regular file, or a name where
// nothing is yet, is replaced atomically; anything else that exists is
// written into directly and never replaced.
func openOutput(e env, name string) (*output, error) {
	if isStdout(name) {
		bw := bufio.NewWriterSize(e.stdout, 1<<20)
		return &output{w: bw, commit: bw.Flush, abort: func() {}}, nil
	}
	fi, err := os.Stat(name) // through symbolic links, to what would be written
	if err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		f, err := os.OpenFile(name, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriterSize(&outputWriter{w: f, name: name}, 1<<20)
		return &output{w: bw, commit: func() error {
			err := bw.Flush()
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}, abort: func() { f.Close() }}, nil
	}
	var dst *atomicfile.File
	remove, err := e.cleanup.make(func() (func(), error) {
		var err error
		if dst, err = atomicfile.Create(name, 0o666); err != nil {
			return nil, err
		}
		return dst.Abort, nil
	})
	if err != nil {
		return nil, err
	}
	return &output{w: &outputWriter{w: dst.File, name: name}, commit: func() error {
		defer remove()
		return dst.Commit()
	}, abort: func() { dst.Abort(); remove() }}, nil
}

// errSameFile: the output is the input, which writing would destroy.
var errSameFile = errors.New("is the input file; writing it would destroy what is being read")

// refuseSameFile fails when out names the file in names (through symbolic
// and hard links: the same device and inode), before anything is written.
func refuseSameFile(in, out string) error {
	if in == "-" || isStdout(out) {
		return nil
	}
	fin, err := os.Stat(in)
	if err != nil {
		return nil // reading it will say why
	}
	fout, err := os.Stat(out)
	if err != nil {
		return nil // nothing there yet (or writing it will say why)
	}
	if os.SameFile(fin, fout) {
		what := out
		if abs, err := filepath.Abs(out); err == nil && filepath.Clean(in) != filepath.Clean(out) {
			what = fmt.Sprintf("%s (%s)", out, abs)
		}
		return &os.PathError{Op: "write", Path: what, Err: errSameFile}
	}
	return nil
}

// isRegularFile reports whether name is a regular file (through links):
// what can be read at any offset, unlike a pipe, a FIFO or a terminal.
func isRegularFile(name string) bool {
	if name == "-" {
		return false
	}
	fi, err := os.Stat(name)
	return err == nil && fi.Mode().IsRegular()
}

// checkMemberName refuses a name from outside (a peer's key, nested keys
// joined with "/"; a key of a msgpack map) as an .npz member's, when it
// would name a file rather than a member once the .npz is unpacked or
// loaded: one that starts with "/", holds a ".." element (between "/" or
// "\\"), or holds a control character (numpy loads "a\x00b" as "a").
// whose says whose name it is, for the error.
func checkMemberName(key, whose string) error {
	bad := ""
	switch {
	case strings.HasPrefix(key, "/"):
		bad = `starts with "/"`
	case slices.Contains(strings.FieldsFunc(key, func(r rune) bool { return r == '/' || r == '\\' }), ".."):
		bad = `holds a ".." element`
	case strings.ContainsFunc(key, unicode.IsControl) || !utf8.ValidString(key):
		bad = "holds a control character or invalid UTF-8"
	}
	if bad != "" {
		return fmt.Errorf("%s %s %s, which an .npz member name may not: nothing written", whose, peertext.Quote(key), bad)
	}
	return nil
}
