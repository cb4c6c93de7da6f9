package ndpack_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/refs"
	"github.com/ndpack/ndpack/zarr"
)

// refsParseMaxSize: a reference file of def bytes is read, one of def+1
// is refused for its size.
func refsParseMaxSize(t *testing.T) {
	doc := []byte(`{"version": 1, "refs": {".zgroup": "{\"zarr_format\": 2}"}}`)
	padded := append(doc, bytes.Repeat([]byte(" "), def-len(doc))...)
	set, err := refs.ParseOptions{}.Parse(padded)
	require.NoError(t, err)
	require.Equal(t, 1, set.Len())
	_, err = refs.ParseOptions{}.Parse(append(padded, ' '))
	requireTooLarge(t, err, "a reference file one byte over")
	require.ErrorContains(t, err, fmt.Sprint(def))
}

// zarrStore is a directory store holding one |u1 array of n elements in
// one chunk that is not stored (so it reads as the fill value).
func zarrStore(t *testing.T, n int) zarr.Dir {
	d := t.TempDir()
	meta := fmt.Sprintf(`{"chunks": [%d], "compressor": null, "dtype": "|u1", "fill_value": 7, "filters": null, "order": "C", "shape": [%d], "zarr_format": 2}`, n, n)
	require.NoError(t, os.WriteFile(filepath.Join(d, ".zarray"), []byte(meta), 0o644))
	return zarr.Dir(d)
}

// zarrReadMaxSize: an array whose one chunk is def bytes is read, one of
// def+1 bytes is refused for its size.
func zarrReadMaxSize(t *testing.T) {
	arrays, err := zarr.ReadOptions{}.Open(zarrStore(t, def), "")
	require.NoError(t, err)
	a, err := arrays[0].Read()
	require.NoError(t, err)
	require.Len(t, a.Data, def)
	require.Equal(t, byte(7), a.Data[def-1])
	arrays, err = zarr.ReadOptions{}.Open(zarrStore(t, def+1), "")
	require.NoError(t, err)
	_, err = arrays[0].Read()
	requireTooLarge(t, err, "a chunk one byte over")
	require.ErrorContains(t, err, fmt.Sprint(def))
}

// zarrWriteMaxSize: a Writer whose band of chunks is def bytes is made,
// one of def+1 bytes is refused for its size.
func zarrWriteMaxSize(t *testing.T) {
	u1 := ndarray.MustParseDType("|u1")
	w, err := zarr.WriteOptions{Chunks: []int{def}}.Create(zarr.Dir(t.TempDir()), "", u1, []int{def})
	require.NoError(t, err)
	w.Abort()
	_, err = zarr.WriteOptions{Chunks: []int{def + 1}}.Create(zarr.Dir(t.TempDir()), "", u1, []int{def + 1})
	requireTooLarge(t, err, "a band one byte over")
	require.ErrorContains(t, err, fmt.Sprint(def))
}
