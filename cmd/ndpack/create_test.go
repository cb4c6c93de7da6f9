package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// create writes the header np.save (and open_memmap) writes and zeros to
// the shape's size; an existing file is kept unless --force.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.npy")
	r := cli(t, nil, "create", p, "--dtype", "<f8", "--shape", "512,1024")
	require.Equal(t, result{0, "", ""}, r)
	b := readFile(t, p)
	h := npybridge.AppendHeader(nil, ndarray.MustParseDType("<f8"), []int{512, 1024})
	require.Len(t, b, len(h)+512*1024*8)
	assert.Equal(t, string(h), string(b[:len(h)]))
	assert.Equal(t, make([]byte, 512*1024*8), b[len(h):])

	r = cli(t, nil, "create", "--dtype", ">i2", "--shape", "3", p)
	assert.Equal(t, result{1, "", "ndpack: " + p + ": the file exists (--force replaces it)\n"}, r)
	assert.Len(t, readFile(t, p), len(h)+512*1024*8, "the existing file is kept")

	r = cli(t, nil, "create", "--force", "--dtype", ">i2", "--shape", "(3,)", p)
	require.Equal(t, result{0, "", ""}, r)
	assert.Equal(t, append(npybridge.AppendHeader(nil, ndarray.MustParseDType(">i2"), []int{3}), 0, 0, 0, 0, 0, 0), readFile(t, p))

	r = cli(t, nil, "create", "--dtype", "|u1", "--shape", "", filepath.Join(dir, "scalar.npy"))
	require.Equal(t, result{0, "", ""}, r)
	assert.Equal(t, append(npybridge.AppendHeader(nil, ndarray.DTypeOf[uint8](), []int{}), 0), readFile(t, filepath.Join(dir, "scalar.npy")))

	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 2, "no temporary files left")

	// numpy's names and record specs, as np.dtype takes them.
	for spec, want := range map[string]string{"float64": "<f8", "uint8": "|u1", ">i2": ">i2",
		"x:<f4,y:<f4,id:<u2": "[('x', '<f4'), ('y', '<f4'), ('id', '<u2')]"} {
		p := filepath.Join(dir, "named.npy")
		r := cli(t, nil, "create", "--force", "--dtype", spec, "--shape", "2", p)
		require.Equal(t, result{0, "", ""}, r, spec)
		dt, err := parseDTypeFlag(want)
		require.NoError(t, err)
		assert.Equal(t, string(npybridge.AppendHeader(nil, dt, []int{2})), string(readFile(t, p)[:len(npybridge.AppendHeader(nil, dt, []int{2}))]), spec)
	}
	r = cli(t, nil, "create", "--dtype", "float65", "--shape", "2", filepath.Join(dir, "bad.npy"))
	assert.Equal(t, 2, r.code, r.stderr)
}

func TestCreateUsage(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.npy")
	for _, c := range []struct {
		args []string
		err  string
	}{
		{[]string{p, "--shape", "3"}, "--dtype is required (such as float64, <f8 or 'x:<f4,y:<f4')"},
		{[]string{p, "--dtype", "<f8"}, "--shape is required (such as 4096,1024)"},
		{[]string{"--dtype", "<f8", "--shape", "3"}, "name one output file"},
		{[]string{p, "--dtype", "<q8", "--shape", "3"}, `--dtype "<q8": not a dtype numpy knows (np.dtype raises "data type '<q8' not understood")`},
		{[]string{p, "--dtype", "<f8", "--shape", "3,-1"}, `--shape "3,-1": dimension 1 is "-1", not a count`},
		{[]string{"-", "--dtype", "<f8", "--shape", "3"}, "create writes a file to be mapped, not standard output"},
		{[]string{filepath.Join(dir, "x.npz"), "--dtype", "<f8", "--shape", "3"}, "create makes .npy files, not npz"},
	} {
		r := cli(t, nil, append([]string{"create"}, c.args...)...)
		assert.Equal(t, result{2, "", "ndpack create: " + c.err + "\nRun 'ndpack help create' for usage.\n"}, r, c.args)
	}
	r := cli(t, nil, "create", p, "--dtype", "<f8", "--shape", "99999999999,99999999999,9999")
	assert.Equal(t, result{1, "", "ndpack: " + p + ": npybridge: invalid array: ndarray: invalid shape: element count of shape (99999999999, 99999999999, 9999) overflows int\n"}, r)
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}

// inspect reads a file that another process is filling through its map:
// it sees the rows written so far and zeros elsewhere.
func TestInspectFileBeingFilled(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fill.npy")
	require.Equal(t, 0, cli(t, nil, "create", p, "--dtype", "<f8", "--shape", "1000,10").code)
	m, err := npybridge.MapOptions{}.OpenMappedWritable(p)
	require.NoError(t, err)
	defer m.Close()
	rows, err := m.Rows(0, 2)
	require.NoError(t, err)
	v, err := ndarray.Values[float64](rows)
	require.NoError(t, err)
	for i := range v {
		v[i] = float64(i + 1)
	}
	rep, r := inspectJSON(t, nil, p)
	require.Equal(t, 0, r.code, r.stderr)
	a := rep[0]["arrays"].([]any)[0].(map[string]any)
	assert.Equal(t, []any{1000.0, 10.0}, a["shape"])
	st := a["stats"].(map[string]any)
	assert.Equal(t, 0.0, st["min"])
	assert.Equal(t, 20.0, st["max"])
	assert.Equal(t, 210.0/10000, st["mean"])
	assert.Equal(t, []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0}, a["first"])
}
