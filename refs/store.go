package refs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/remote"
)

// Store serves a Set to the zarr package's readers (it is a zarr.Lister):
// a key's own bytes as they are, a range fetched from its file when the
// key is read. Each file is opened once, when first read: a local path
// (or file:// URL) unless Options.RemoteOnly, an http://, https:// or
// s3:// URL through Options.Remote (whose size its server states, so the
// memory a range is read into grows as its bytes arrive). Every range is
// checked against its file's size before it is read. Its methods may be
// called from several goroutines at once; Close releases the files.
type Store struct {
	o   Options
	ctx context.Context
	set *Set

	mu    sync.Mutex
	files map[string]*openFile
}

type openFile struct {
	once  sync.Once
	r     io.ReaderAt
	size  int64
	local bool
	close func()
	err   error
}

// Store returns the Store of s; ctx governs its remote reads.
func (o Options) Store(ctx context.Context, s *Set) *Store {
	return &Store{o: o, ctx: ctx, set: s, files: map[string]*openFile{}}
}

// errNoSet is what the methods of a Store not made by Options.Store (or
// made of no Set) return.
var errNoSet = errors.New("refs: the Store serves no reference set: make one with Options.Store")

// file opens url once.
func (st *Store) file(url string) *openFile {
	st.mu.Lock()
	f, ok := st.files[url]
	if !ok {
		f = &openFile{}
		st.files[url] = f
	}
	st.mu.Unlock()
	f.once.Do(func() {
		if remote.IsURL(url) {
			obj, err := st.o.Remote.Open(st.ctx, url)
			if err != nil {
				f.err = err
				return
			}
			f.r, f.size, f.close = obj, obj.Size(), func() { obj.Close() }
			return
		}
		local := strings.TrimPrefix(url, "file://")
		if st.o.RemoteOnly {
			f.err = errorf(ErrRange, "it points at the local file %s, which a reference file read from elsewhere may not", strconv.Quote(local))
			return
		}
		file, err := os.Open(local)
		if err != nil {
			f.err = err
			return
		}
		fi, err := file.Stat()
		if err == nil && !fi.Mode().IsRegular() {
			err = fmt.Errorf("%s is not a regular file", local)
		}
		if err != nil {
			file.Close()
			f.err = err
			return
		}
		f.r, f.size, f.local, f.close = file, fi.Size(), true, func() { file.Close() }
	})
	return f
}

// Get appends the bytes key holds to dst. Its errors name the key: one
// matching fs.ErrNotExist for a key the set lacks (a chunk left out, which
// a reader fills; a missing file a key points at is ErrRange instead);
// ndarray.ErrTooLarge
// for more than max bytes, before anything is read; ErrRange for a range
// past its file's end, or a local file under RemoteOnly; and the file's
// or the server's errors (a range the server cuts short matches
// ndarray.ErrTruncated).
func (st *Store) Get(key string, dst []byte, max int) ([]byte, error) {
	if st.set == nil {
		return dst, errNoSet
	}
	r, ok := st.set.Get(key)
	if !ok {
		return dst, fmt.Errorf("reference %s: %w", strconv.Quote(key), fs.ErrNotExist)
	}
	fail := func(err error) ([]byte, error) {
		return dst, fmt.Errorf("reference %s: %w", strconv.Quote(key), err)
	}
	tooLarge := func(n int64) ([]byte, error) {
		return fail(&ndarray.Error{Pkg: "refs", Err: ndarray.ErrTooLarge, Offset: -1, Detail: fmt.Sprintf("%d bytes, more than the %d the key may hold", n, max)})
	}
	if r.URL == "" {
		if len(r.Data) > max {
			return tooLarge(int64(len(r.Data)))
		}
		return append(dst, r.Data...), nil
	}
	if r.Length > int64(max) {
		return tooLarge(r.Length)
	}
	f := st.file(r.URL)
	if errors.Is(f.err, fs.ErrNotExist) {
		// Not a chunk left out, which a reader fills: the reference is
		// there, its file is not.
		return fail(errorf(ErrRange, "%v", f.err))
	}
	if f.err != nil {
		return fail(f.err)
	}
	off, n := r.Offset, r.Length
	if n < 0 {
		if off, n = 0, f.size; n > int64(max) {
			return tooLarge(n)
		}
	}
	if off > f.size || n > f.size-off {
		return fail(errorf(ErrRange, "bytes %d to %d of %s, which holds %d", off, off+n, remote.Redact(r.URL), f.size))
	}
	if f.local {
		at := len(dst)
		dst = slices.Grow(dst, int(n))[:at+int(n)]
		got, err := f.r.ReadAt(dst[at:], off)
		if got == int(n) {
			return dst, nil
		}
		if err == nil || err == io.EOF {
			err = &ndarray.Error{Pkg: "refs", Err: ndarray.ErrTruncated, Offset: off + int64(got), Detail: fmt.Sprintf("%s ends after %d of the %d bytes at %d", r.URL, got, n, off)}
		}
		return fail(err)
	}
	rc := f.r.(*remote.Object).Stream(off, n)
	defer rc.Close()
	out, err := boundedio.Append(dst, rc, int(n))
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = &ndarray.Error{Pkg: "refs", Err: ndarray.ErrTruncated, Offset: off + int64(len(out)-len(dst)),
			Detail: fmt.Sprintf("%s ended after %d of the %d bytes at %d", remote.Redact(r.URL), len(out)-len(dst), n, off)}
	}
	if err != nil {
		return fail(err)
	}
	return out, nil
}

// List returns the names directly under prefix, sorted; its error is
// always nil.
func (st *Store) List(prefix string) ([]string, error) {
	if st.set == nil {
		return nil, errNoSet
	}
	if prefix != "" {
		prefix += "/"
	}
	var names []string
	for k := range st.set.refs {
		rest, ok := strings.CutPrefix(k, prefix)
		if !ok || rest == "" {
			continue
		}
		name, _, _ := strings.Cut(rest, "/")
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Close closes the files the store opened; its error is always nil.
func (st *Store) Close() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, f := range st.files {
		if f.close != nil {
			f.close()
		}
	}
	st.files = map[string]*openFile{}
	return nil
}
