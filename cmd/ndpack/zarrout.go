package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/remote"
	"github.com/ndpack/ndpack/zarr"
)

// zarrLevel is --level's default for a Zarr OUT: numcodecs' Zlib().
const zarrLevel = 1

// parseChunks reads --chunks R,C,...: positive lengths, one a dimension.
func parseChunks(s string) ([]int, error) {
	if s == "" {
		return nil, nil
	}
	var chunks []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, usageError("--chunks %s: want positive lengths, one a dimension, as 1,1024,1024", s)
		}
		chunks = append(chunks, n)
	}
	return chunks, nil
}

// zarrOutput is where a Zarr store is written, and how it is undone.
type zarrOutput struct {
	store  zarr.WritableStore
	conc   int    // chunks stored at once
	undo   func() // removes what was written, when the conversion fails
	remove func() // unregisters undo from the interrupt's cleanups
}

// openZarrOutput prepares OUT: a new local directory (or an empty one),
// removed whole if the conversion fails or is interrupted; or an s3://
// prefix, each key a parallel upload, refused when a store is there.
func openZarrOutput(e env, out string, rf remoteFlags) (*zarrOutput, error) {
	if strings.HasPrefix(out, "s3://") {
		opts := remoteOptions(rf, e.stderr)
		for _, meta := range []string{".zarray", ".zgroup"} {
			obj, err := opts.Open(context.Background(), strings.TrimSuffix(out, "/")+"/"+meta)
			if err == nil {
				obj.Close()
				return nil, &os.PathError{Op: "write", Path: out, Err: fmt.Errorf("holds a Zarr store already (%s); ndpack writes new stores only: remove it first", meta)}
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, outputError(out, err)
			}
		}
		conc := rf.concurrency
		if conc == 0 {
			conc = 8
		}
		return &zarrOutput{store: s3Store{opts: opts, prefix: strings.TrimSuffix(out, "/")}, conc: conc, undo: func() {}, remove: func() {}}, nil
	}
	if remote.IsURL(out) {
		return nil, usageError("OUT %s: Zarr stores are written to local directories and s3:// prefixes", displayName(out))
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return nil, &os.PathError{Op: "write", Path: out, Err: errors.New("exists and is not empty; ndpack writes new Zarr stores only: remove it first, or name another")}
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, &os.PathError{Op: "write", Path: out, Err: err}
	}
	o := &zarrOutput{store: zarr.Dir(out), conc: runtime.GOMAXPROCS(0)}
	var err error
	o.remove, err = e.cleanup.make(func() (func(), error) {
		if err := os.Mkdir(out, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		o.undo = func() { os.RemoveAll(out) }
		return o.undo, nil
	})
	if err != nil {
		return nil, &os.PathError{Op: "write", Path: out, Err: errors.Unwrap(err)}
	}
	return o, nil
}

// s3Store is a Zarr store under an s3:// prefix: each key an object,
// uploaded whole by remote.Writer (parts in parallel when large), which
// appears only once complete.
type s3Store struct {
	opts   remote.Options
	prefix string
}

func (s s3Store) Set(key string, value []byte) error {
	w, err := s.opts.Create(context.Background(), s.prefix+"/"+key)
	if err != nil {
		return err
	}
	if _, err := w.Write(value); err != nil {
		w.Abort()
		return err
	}
	return w.Close()
}

// convertToZarr converts IN into the Zarr store OUT: a lone array at its
// root, the arrays of an .npz or msgpack map in a group (nested groups
// for paths with "/"), each array's chunks compressed on every core when
// --compress says so, its .zarray stored after its chunks and the groups'
// .zgroup after every array, so that no metadata ever points at chunks
// not yet stored.
func (o convertOptions) convertToZarr(e env, in, out string) (err error) {
	fa, err := openInputArrays(in, e.stdin, o.from, o.inputOptions(e))
	if err != nil {
		return failedOn(in, out, err)
	}
	defer fa.close()
	fa.withRows(o.rows)
	fa.withFieldAndType(o.field, o.astype)
	arrays, err := o.pickFrom(fa)
	if err != nil {
		return failedOn(in, out, err)
	}
	for _, a := range arrays {
		if a.objects != nil {
			return failedOn(in, out, fmt.Errorf("array %q is an object array; a Zarr store holds arrays of numbers and records", a.name))
		}
	}
	dst, err := openZarrOutput(e, out, o.remote)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			dst.undo()
		}
		dst.remove()
	}()
	prog := e.startProgress("convert "+displayName(in), fa.size, o.quiet)
	defer prog.finish()
	lone := len(arrays) == 1 && (arrays[0].name == "" || o.member != "")
	groups := map[string]bool{}
	for _, a := range arrays {
		p := ""
		if !lone {
			p = a.name
			if err := checkZarrPath(p); err != nil {
				return failedOn(in, out, err)
			}
			for g := path.Dir(p); ; g = path.Dir(g) {
				if g == "." {
					groups[""] = true
					break
				}
				groups[g] = true
			}
		}
		dims := o.lonelyName(in)
		if p != "" {
			dims = path.Base(p)
		}
		if err := o.writeZarrArray(dst, p, dims, a, prog); err != nil {
			return failedOn(in, out, err)
		}
	}
	for g := range groups {
		if err := dst.store.Set(strings.TrimPrefix(g+"/.zgroup", "/"), zarr.GroupMetadata); err != nil {
			return outputError(out, err)
		}
	}
	return nil
}

// writeZarrArray writes the array a at p of the store, its dimensions
// named after dims in .zattrs, as xarray reads them.
func (o convertOptions) writeZarrArray(dst *zarrOutput, p, dims string, a arraySource, prog *progress) error {
	return withData(a, func(dt ndarray.DType, shape []int, r io.Reader) error {
		opts := zarr.WriteOptions{Chunks: o.chunks, Concurrency: dst.conc, MaxSize: inputOptions{maxSize: o.maxSize}.arrayBound()}
		if o.chunks != nil && len(o.chunks) != len(shape) {
			return fmt.Errorf("--chunks %s has %d lengths; the array of shape %s has %d dimensions", ndarray.FormatShape(o.chunks), len(o.chunks), ndarray.FormatShape(shape), len(shape))
		}
		if o.compress {
			level := o.level
			if level == 0 {
				level = zarrLevel
			}
			opts.Compressor = zarr.Zlib(level)
		}
		names := make([]string, len(shape))
		for i := range names {
			names[i] = fmt.Sprintf("%s_dim_%d", dims, i)
		}
		opts.Attrs = map[string]any{"_ARRAY_DIMENSIONS": names}
		w, err := opts.Create(dst.store, p, dt, shape)
		if err != nil {
			return err
		}
		if _, err := w.ReadFrom(io.TeeReader(r, prog)); err != nil {
			w.Abort()
			w.Close()
			return err
		}
		return w.Close()
	})
}

// checkZarrPath refuses an array's name that would not be a Zarr path of
// its own: an empty, "." or ".." element, one starting with a dot (as
// only metadata keys do), a backslash or a control character.
func checkZarrPath(p string) error {
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." || e == ".." || strings.HasPrefix(e, ".") || strings.ContainsAny(e, "\\") || strings.ContainsFunc(e, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("the array %s cannot be a path in a Zarr store (an empty, \".\" or \"..\" element, a leading dot, a backslash or a control character)", strconv.Quote(p))
		}
	}
	return nil
}
