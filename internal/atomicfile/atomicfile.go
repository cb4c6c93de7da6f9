// Package atomicfile writes a file so that readers see either the old file
// or the complete new one, never a half-written one, and replaces a file the
// way cp and editors do: through a symbolic link to its target, keeping the
// old file's mode and owner, refusing a file that is not writable.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Errors about the destination, wrapped in an *os.PathError naming it as
// the caller did.
var (
	// ErrIsDir: the destination is a directory.
	ErrIsDir = errors.New("is a directory")
	// ErrReadOnly: the destination exists and is not writable (no write
	// permission bit, or the caller may not write it): like cp, not
	// replaced.
	ErrReadOnly = errors.New("is read-only; make it writable or remove it first")
	// ErrNoDir: the destination's directory does not exist.
	ErrNoDir = errors.New("its directory does not exist")
)

// File is a file being written in place of a destination: a temporary
// file beside it, renamed over it by Commit, removed by Abort.
type File struct {
	*os.File
	name   string // the destination as the caller named it
	target string // where it is written: name, or what name links to

	mu   sync.Mutex
	done bool
}

// Create starts writing name. If name is a symbolic link, its target is
// what gets replaced; if name exists, the new file gets its permission bits
// and, where the process may, its owner; otherwise perm less the umask. A
// directory, a missing directory or a file that is not writable is refused
// with an *os.PathError naming name.
func Create(name string, perm os.FileMode) (*File, error) {
	fail := func(err error) (*File, error) { return nil, &os.PathError{Op: "write", Path: name, Err: err} }
	target, err := resolve(name)
	if err != nil {
		return fail(err)
	}
	old, err := os.Stat(target)
	switch {
	case err == nil && old.IsDir():
		return fail(ErrIsDir)
	case err == nil && (old.Mode().Perm()&0o222 == 0 || !mayWrite(target)):
		return fail(ErrReadOnly)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return fail(err)
	}
	dir := filepath.Dir(target)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fail(ErrNoDir)
	}
	f, err := createTemp(target, perm)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return fail(fmt.Errorf("cannot create a file in %s: permission denied", dir))
		}
		return fail(err)
	}
	if old != nil {
		// os.Chmod, unlike the mode given to open, is not cut by the umask:
		// the replacement has exactly the old file's bits.
		f.Chmod(old.Mode().Perm())
		keepOwner(f, old)
	}
	return &File{File: f, name: name, target: target}, nil
}

// resolve follows name through symbolic links to the file to replace,
// which need not exist yet.
func resolve(name string) (string, error) {
	target := name
	for range 40 {
		fi, err := os.Lstat(target)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return target, nil
		}
		link, err := os.Readlink(target)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(link) {
			link = filepath.Join(filepath.Dir(target), link)
		}
		target = link
	}
	return "", errors.New("too many levels of symbolic links")
}

// Commit closes the file and renames it over the destination. After a
// failure the temporary file is removed.
func (f *File) Commit() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return &os.PathError{Op: "write", Path: f.name, Err: os.ErrClosed}
	}
	f.done = true
	err := f.File.Close()
	if err == nil {
		err = os.Rename(f.File.Name(), f.target)
	}
	if err != nil {
		os.Remove(f.File.Name())
		return &os.PathError{Op: "write", Path: f.name, Err: err}
	}
	return nil
}

// Abort closes and removes the temporary file, leaving the destination as it
// was. It may be called at any time, from any goroutine (a signal handler),
// and more than once; after Commit it does nothing.
func (f *File) Abort() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// Write creates name through Create, lets fill write to it, and commits it
// only if fill succeeds; on any failure the destination is left as it was.
//
// No process ever sees a half-written name. The file is not fsynced: that
// would guard against power loss, not program failure, and measured it
// doubled the time of a 64 MiB conversion (cp does not sync either).
func Write(name string, perm os.FileMode, fill func(f *os.File) error) error {
	f, err := Create(name, perm)
	if err != nil {
		return err
	}
	if err := fill(f.File); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// createTemp creates a new file beside name. Unlike os.CreateTemp (always
// 0600) it opens with perm, so the kernel applies the umask.
func createTemp(name string, perm os.FileMode) (*os.File, error) {
	dir, base := filepath.Split(name)
	for range 100 {
		tmp := filepath.Join(dir, "."+base+".tmp-"+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("cannot create a temporary file beside %s", name)
}
