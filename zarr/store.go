package zarr

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/ndarray"
)

// Store is where arrays are read from: values by key ("image/.zarray",
// "image/0.0"), as a Zarr v2 store holds them. Its methods may be called
// from several goroutines at once.
type Store interface {
	// Get appends the value under key to dst and returns the longer
	// slice. A value of more than max bytes fails with an error matching
	// ndarray.ErrTooLarge before it is read; a key with no value fails
	// with one matching fs.ErrNotExist.
	Get(key string, dst []byte, max int) ([]byte, error)
}

// Lister is a Store that can list what lies under a path, as a group's
// arrays are found.
type Lister interface {
	Store
	// List returns the names found directly under prefix ("" for the
	// store's root, else a path without a trailing "/"): the part of
	// each key that starts with prefix + "/" up to its next "/", each
	// once, sorted.
	List(prefix string) ([]string, error)
}

// WritableStore is a store arrays are written into. Set may be called
// from several goroutines at once.
type WritableStore interface {
	// Set stores value under key, whole or not at all.
	Set(key string, value []byte) error
}

// Dir is a Zarr v2 store in a local directory, as zarr-python's
// DirectoryStore keeps one: each key a file under it, "/" in a key a
// subdirectory. Set writes each file atomically (a temporary beside it,
// renamed when whole), making the directories it needs, the store's own
// included.
type Dir string

// path is the file of key, which must be a relative path of
// non-empty elements, none of them "." or "..".
func (d Dir) path(key string) (string, error) {
	if key == "" || strings.HasPrefix(key, "/") || strings.HasSuffix(key, "/") || strings.Contains(key, "\\") {
		return "", fmt.Errorf("zarr: %q is not a key of a directory store", key)
	}
	for _, e := range strings.Split(key, "/") {
		if e == "" || e == "." || e == ".." {
			return "", fmt.Errorf("zarr: %q is not a key of a directory store", key)
		}
	}
	return filepath.Join(string(d), filepath.FromSlash(key)), nil
}

// Get reads the file of key, whose size is known before it is read: one
// larger than max fails at once.
func (d Dir) Get(key string, dst []byte, max int) ([]byte, error) {
	name, err := d.path(key)
	if err != nil {
		return dst, err
	}
	f, err := os.Open(name)
	if err != nil {
		return dst, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return dst, err
	}
	if !fi.Mode().IsRegular() {
		return dst, &os.PathError{Op: "read", Path: name, Err: errors.New("not a regular file")}
	}
	if fi.Size() > int64(max) {
		return dst, &os.PathError{Op: "read", Path: name, Err: &ndarray.Error{Pkg: "zarr", Err: ndarray.ErrTooLarge, Offset: -1,
			Detail: fmt.Sprintf("%d bytes, more than the %d its key may hold", fi.Size(), max)}}
	}
	n := int(fi.Size())
	at := len(dst)
	dst = slices.Grow(dst, n)[:at+n]
	got, err := io.ReadFull(f, dst[at:])
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = &os.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: the file shrank from %d bytes to %d while it was read", ndarray.ErrTruncated, n, got)}
	}
	return dst[:at+got], err
}

// List reads the directory of prefix. Its error is os.ReadDir's (one
// matching fs.ErrNotExist when there is none), or one for a prefix that
// is no key.
func (d Dir) List(prefix string) ([]string, error) {
	dir := string(d)
	if prefix != "" {
		var err error
		if dir, err = d.path(prefix); err != nil {
			return nil, err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil // os.ReadDir sorts them
}

// Set writes the file of key atomically. It fails for a key with an
// empty, "." or ".." element, and with the file system's errors.
func (d Dir) Set(key string, value []byte) error {
	name, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
		return err
	}
	return atomicfile.Write(name, 0o666, func(f *os.File) error {
		_, err := f.Write(value)
		return err
	})
}

// isNotExist reports whether err says a key has no value.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
