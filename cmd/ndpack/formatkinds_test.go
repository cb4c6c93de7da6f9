package main

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// A file that cannot be read is named for what it looks like, and the
// flag that reads it when ndpack does: one line, exit status 1 (#43).
func TestWrongKindOfFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	a, err := ndarray.FromSlice([]int64{0, 1, 2}, 3)
	require.NoError(t, err)
	npz := filepath.Join(dir, "z.npz")
	require.NoError(t, npybridge.WriteNPZFile(npz, []npybridge.NamedArray{{Name: "a", Array: a}}, false))
	zipBytes, err := os.ReadFile(npz)
	require.NoError(t, err)
	var npy, gz bytes.Buffer
	require.NoError(t, npybridge.Write(&npy, a))
	zw := gzip.NewWriter(&gz)
	zw.Write(npy.Bytes())
	require.NoError(t, zw.Close())

	text := write("x.npy", []byte("hello\n"))
	textMsg := write("x.msgpack", []byte("hello world, some notes\n"))
	png := write("p.npy", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x04"))
	gzNPY := write("g.npy", gz.Bytes())
	zipNPY := write("zz.npy", zipBytes)
	rpcNPY := write("rpc.npy", []byte("\x83\xa6method\xa7measure\xa6params\x80\xa2id\x07"))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"show", text}, text + `: a text file, not NPY, NPZ or msgpack: msgpack: not an array or a map of names to arrays`},
		{[]string{"inspect", text}, text + `: a text file, not NPY, NPZ or msgpack: msgpack: not an array or a map of names to arrays`},
		{[]string{"convert", text, filepath.Join(dir, "o.npz")}, text + `: a text file, not NPY, NPZ or msgpack: npybridge: truncated input at byte 0: the file ends inside the magic string, version and header length`},
		{[]string{"show", textMsg}, textMsg + `: a text file, not NPY, NPZ or msgpack: msgpack: not an array or a map of names to arrays`},
		{[]string{"show", png}, png + `: a PNG image, not NPY, NPZ or msgpack: msgpack: map key 0: msgpack type byte 0x50 at byte 1 is not a string (not an array or a map of names to arrays)`},
		{[]string{"convert", png, filepath.Join(dir, "o.npz")}, png + `: a PNG image, not NPY, NPZ or msgpack: npybridge: not an NPY file at byte 0: the file starts with "\x89PNG\r\n", not the magic \x93NUMPY`},
		{[]string{"convert", gzNPY, filepath.Join(dir, "o.npz")}, gzNPY + `: gzip-compressed data, not NPY, NPZ or msgpack (decompress it first: gzip -dc FILE | ndpack COMMAND -): npybridge: not an NPY file at byte 0: the file starts with "\x1f\x8b\b\x00\x00\x00", not the magic \x93NUMPY`},
		{[]string{"convert", zipNPY, filepath.Join(dir, "o.npz")}, zipNPY + `: npybridge: not an NPY file at byte 0: the file starts with "PK\x03\x04\x14\x00", not the magic \x93NUMPY: it is a zip archive, as an .npz is; ` + zipNPY + ` looks like an NPZ file: use --from npz`},
		{[]string{"convert", rpcNPY, filepath.Join(dir, "o.npz")}, rpcNPY + `: npybridge: not an NPY file at byte 0: the file starts with "\x83\xa6meth", not the magic \x93NUMPY; ` + rpcNPY + ` looks like a msgpack file: use --from msgpack`},
	} {
		r := cli(t, nil, c.args...)
		assert.Equal(t, 1, r.code, c.args)
		assert.Equal(t, "ndpack: "+c.want+"\n", r.stderr, c.args)
	}
	r := cli(t, []byte("hello\n"), "show", "-")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: a text file, not NPY, NPZ or msgpack: msgpack: not an array or a map of names to arrays\n", r.stderr)

	// show and diff, which have no --from, read a file by its first bytes,
	// as inspect does: an .npz named .npy is read.
	r = cli(t, nil, "show", zipNPY)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "[0 1 2]\n", r.stdout)
	r = cli(t, nil, "diff", zipNPY, npz)
	assert.Equal(t, 0, r.code, r.stderr)
}
