package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/refs"
	"github.com/ndpack/ndpack/remote"
	"github.com/ndpack/ndpack/zarr"
)

// openStoreInput opens name when it is a Zarr store (a local directory)
// or a kerchunk reference file (JSON, local or a URL; a local file is
// told by its first byte, "{"), and describes its arrays; ok is false
// when it is neither, for the other formats to be tried.
func openStoreInput(name string, f format, o inputOptions) (fa *fileArrays, ok bool, err error) {
	fi, statErr := os.Stat(name)
	isDir := statErr == nil && fi.IsDir()
	switch {
	case f == formatZarr && remote.IsURL(name):
		return nil, true, fmt.Errorf("Zarr stores are read from local directories; ndpack refs makes references to remote .npy and .npz files")
	case isDir && (f == "" || f == formatZarr):
		fa, err = zarrDirArrays(name, o)
		return fa, true, err
	case f == formatRefs:
		fa, err = refsArrays(name, o)
		return fa, true, err
	case f == "" && statErr == nil && fi.Mode().IsRegular() && startsWithBrace(name):
		fa, err = refsArrays(name, o)
		return fa, true, err
	}
	return nil, false, nil
}

// startsWithBrace reports whether the file's first byte that is not
// white space is "{": a JSON object, never an .npy, an .npz or a msgpack
// document of arrays.
func startsWithBrace(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [64]byte
	n, _ := f.Read(head[:])
	b := bytes.TrimLeft(head[:n], " \t\r\n")
	return len(b) > 0 && b[0] == '{'
}

// zarrDirArrays describes the arrays of the Zarr store in the directory
// name: one array, or a group's, named by their paths in it.
func zarrDirArrays(name string, o inputOptions) (*fileArrays, error) {
	arrays, err := zarr.ReadOptions{MaxSize: o.arrayBound()}.Open(zarr.Dir(name), "")
	if errors.Is(err, zarr.ErrNotZarr) {
		return nil, fmt.Errorf("%s is a directory, and no Zarr store: it holds no .zarray or .zgroup", name)
	}
	if err != nil {
		return nil, err
	}
	return zarrArrays(formatZarr, arrays, func() {}, o), nil
}

// refsArrays describes the arrays of the reference file name (a local
// file, or a URL, whose references may not point at local files).
func refsArrays(name string, o inputOptions) (*fileArrays, error) {
	text, err := readRefsFile(name, o)
	if err != nil {
		return nil, err
	}
	set, err := refs.Parse(text)
	if err != nil {
		return nil, err
	}
	ro := refs.Options{Remote: remoteOptions(o.remote, o.stderr), RemoteOnly: remote.IsURL(name)}
	store := ro.Store(context.Background(), set)
	arrays, err := zarr.ReadOptions{MaxSize: o.arrayBound()}.Open(store, "")
	if err != nil {
		store.Close()
		return nil, err
	}
	return zarrArrays(formatRefs, arrays, func() { store.Close() }, o), nil
}

// readRefsFile reads a reference file, at most refs' default bound
// (64 MiB); a remote one into memory that grows as it arrives.
func readRefsFile(name string, o inputOptions) ([]byte, error) {
	const most = ndarray.DefaultMaxSize
	tooLarge := func(n int64) error {
		return fmt.Errorf("%d bytes: more than the %d a reference file may hold", n, most)
	}
	if !remote.IsURL(name) {
		fi, err := os.Stat(name)
		if err != nil {
			return nil, err
		}
		if fi.Size() > most {
			return nil, tooLarge(fi.Size())
		}
		return os.ReadFile(name)
	}
	obj, err := remoteOptions(o.remote, o.stderr).Open(context.Background(), name)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	if obj.Size() > most {
		return nil, tooLarge(obj.Size())
	}
	rc := obj.Stream(0, obj.Size())
	defer rc.Close()
	return boundedio.ReadFull(rc, int(obj.Size()))
}

// zarrArrays describes arrays read from a store: each streams row-major,
// chunk by chunk on every core, and gives rows alone.
func zarrArrays(f format, arrays []*zarr.Array, release func(), o inputOptions) *fileArrays {
	fa := &fileArrays{format: f, close: release, maxHeader: o.maxHeader, maxSize: o.arrayBound()}
	for _, a := range arrays {
		fa.arrays = append(fa.arrays, arraySource{
			name: a.Name, dtype: a.Meta.DType, shape: a.Meta.Shape, size: a.DataLen(), dataOffset: -1,
			open: func() (io.ReadCloser, error) { return a.NewReader() },
			rows: func(start, stop int) (*ndarray.Array, error) { return a.ReadRows(start, stop) },
		})
	}
	return fa
}
