package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/s3fake"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/zarr"
)

// stackF4 is a camera-like <f4 stack of frames x rows x cols.
func stackF4(t testing.TB, frames, rows, cols int) *ndarray.Array {
	v := make([]float32, frames*rows*cols)
	for i := range v {
		v[i] = float32(i%cols+(i/cols)%rows) + float32(i%7)*0.25
	}
	a, err := ndarray.FromSlice(v, frames, rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestConvertZarrRoundTrip: an .npy and an .npz into Zarr stores (chunks
// given or the default, zlib or none) and back give the same arrays; the
// stores hold what was asked.
func TestConvertZarrRoundTrip(t *testing.T) {
	dir := t.TempDir()
	a := stackF4(t, 3, 50, 40)
	in := filepath.Join(dir, "stack.npy")
	require.NoError(t, npybridge.WriteFile(in, a))
	for _, args := range [][]string{
		{"--chunks", "1,16,40", "--compress", "--level", "6"},
		{"--chunks", "2,7,9"},
		{"--compress"},
		{},
	} {
		out := filepath.Join(dir, strings.Join(append([]string{"s"}, args...), "_")+".zarr")
		r := cli(t, nil, append(append([]string{"convert", "--quiet"}, args...), in, out)...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		back := filepath.Join(dir, "back.npy")
		r = cli(t, nil, "convert", "--quiet", out, back)
		require.Equal(t, 0, r.code, r.stderr)
		got, err := npybridge.ReadFile(back)
		require.NoError(t, err)
		assert.True(t, got.Equal(a), "%v: the array read back differs", args)
		arrays, err := zarr.ReadOptions{}.Open(zarr.Dir(out), "")
		require.NoError(t, err)
		m := arrays[0].Meta
		switch {
		case len(args) == 0:
			assert.Equal(t, []int{3, 50, 40}, m.Chunks, "about 1 MiB: the whole stack of 24 KB")
			assert.Nil(t, m.Compressor)
		case args[0] == "--compress":
			assert.Equal(t, zarr.Zlib(1), m.Compressor, "numcodecs' default level")
		case args[1] == "1,16,40":
			assert.Equal(t, zarr.Zlib(6), m.Compressor)
			assert.Equal(t, []int{1, 16, 40}, m.Chunks)
		}
	}
	npz := filepath.Join(dir, "run.npz")
	require.NoError(t, npybridge.WriteNPZFile(npz, []npybridge.NamedArray{{Name: "stack", Array: a}, {Name: "n", Array: ndarray.Scalar(int64(-4))}}, true))
	r := cli(t, nil, "convert", "--quiet", "--compress", npz, filepath.Join(dir, "run.zarr"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, filepath.Join(dir, "run.zarr", ".zgroup"))
	r = cli(t, nil, "convert", "--quiet", filepath.Join(dir, "run.zarr"), filepath.Join(dir, "back.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	z, err := npybridge.ReadOptions{}.ReadNPZFile(filepath.Join(dir, "back.npz"))
	require.NoError(t, err)
	require.Len(t, z, 2)
	assert.Equal(t, "n", z[0].Name)
	assert.True(t, z[0].Array.Equal(ndarray.Scalar(int64(-4))))
	assert.True(t, z[1].Array.Equal(a))
	// One array of a group, its rows, and inspect.
	r = cli(t, nil, "convert", "--quiet", "--rows", "1:2", filepath.Join(dir, "run.zarr:stack"), filepath.Join(dir, "one.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	one, err := npybridge.ReadFile(filepath.Join(dir, "one.npy"))
	require.NoError(t, err)
	assert.Equal(t, a.Data[len(a.Data)/3:2*len(a.Data)/3], one.Data)
	r = cli(t, nil, "inspect", "--json", filepath.Join(dir, "run.zarr"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, `"format": "zarr"`)
}

// TestConvertZarrRefusals: a store is never written into an existing
// one, nor half left behind; one-line errors say why.
func TestConvertZarrRefusals(t *testing.T) {
	dir := t.TempDir()
	in, _ := smallNPY(t, dir, "a.npy")
	full := filepath.Join(dir, "full.zarr")
	require.NoError(t, os.MkdirAll(full, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(full, "x"), nil, 0o644))
	for _, c := range []struct {
		args []string
		code int
		text string
	}{
		{[]string{in, full}, 1, "exists and is not empty; ndpack writes new Zarr stores only"},
		{[]string{"--chunks", "2,2", in, filepath.Join(dir, "dims.zarr")}, 1, "--chunks (2, 2) has 2 lengths; the array of shape (3,) has 1 dimensions"},
		{[]string{"--chunks", "0", in, filepath.Join(dir, "zero.zarr")}, 2, "--chunks 0: want positive lengths"},
		{[]string{"--chunks", "2", in, filepath.Join(dir, "x.npy")}, 2, "--chunks sets the chunks of a Zarr store"},
		{[]string{in, filepath.Join(dir, "x.json")}, 2, "ndpack refs writes reference files"},
		{[]string{filepath.Join(dir, "none.zarr"), filepath.Join(dir, "y.npy")}, 1, "none.zarr"},
		{[]string{dir, filepath.Join(dir, "z.npy")}, 1, "is a directory, and no Zarr store"},
	} {
		r := cli(t, nil, append([]string{"convert", "--quiet"}, c.args...)...)
		assert.Equal(t, c.code, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.text, "%v", c.args)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n")-map[bool]int{true: 1}[c.code == 2], "%v: one line: %q", c.args, r.stderr)
	}
	assert.NoDirExists(t, filepath.Join(dir, "dims.zarr"), "a failed conversion leaves no store")
}

// TestConvertZarrInterrupted: Ctrl-C while chunks are being stored
// leaves no store behind.
func TestConvertZarrInterrupted(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "slow.zarr")
	cmd := exec.Command(ndpackBin, "convert", "--from", "npy", "--chunks", "1024", "-", out)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// A header announcing 8 MB, and the first chunks: the command stores
	// them and waits for the rest.
	stdin.Write(npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1 << 20}))
	stdin.Write(make([]byte, 64<<10))
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(out, "7")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	require.FileExists(t, filepath.Join(out, "7"), "the conversion stored chunks")
	require.NoFileExists(t, filepath.Join(out, ".zarray"), "no metadata before the last chunk")
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err = cmd.Wait()
	stdin.Close()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 130, ee.ExitCode())
	assert.NoDirExists(t, out, "the store is removed")
}

// TestConvertZarrS3: an .npz into an s3:// prefix: each key an object,
// the group's and arrays' metadata among them, equal to the local store's
// bytes; a prefix that holds a store already is refused.
func TestConvertZarrS3(t *testing.T) {
	s := s3fake.Start(t, "lab")
	dir := t.TempDir()
	a := stackF4(t, 2, 30, 20)
	npz := filepath.Join(dir, "run.npz")
	require.NoError(t, npybridge.WriteNPZFile(npz, []npybridge.NamedArray{{Name: "img", Array: a}}, false))
	r := cli(t, nil, "convert", "--quiet", "--compress", "--chunks", "1,10,20", npz, "s3://lab/runs/run.zarr")
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "convert", "--quiet", "--compress", "--chunks", "1,10,20", npz, filepath.Join(dir, "run.zarr"))
	require.Equal(t, 0, r.code, r.stderr)
	keys := []string{".zgroup", "img/.zarray", "img/.zattrs"}
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			keys = append(keys, "img/"+string(rune('0'+i))+"."+string(rune('0'+j))+".0")
		}
	}
	for _, k := range keys {
		got, ok := s.Get(t, "lab", "runs/run.zarr/"+k)
		assert.True(t, ok, "s3 holds %s", k)
		assert.Equal(t, readFile(t, filepath.Join(dir, "run.zarr", filepath.FromSlash(k))), got, k)
	}
	r = cli(t, nil, "convert", "--quiet", npz, "s3://lab/runs/run.zarr")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "holds a Zarr store already (.zgroup)")
}

// TestZarrPythonReadsConverted: zarr-python opens the stores convert
// writes, both compressors, equal to numpy's arrays; ndpack reads what
// zarr-python writes with Fortran order, edge and missing chunks equal
// to zarr-python's own reading.
func TestZarrPythonReadsConverted(t *testing.T) {
	pypeer.RequireModule(t, "zarr", "python3-zarr")
	dir := t.TempDir()
	a := stackF4(t, 4, 33, 17)
	in := filepath.Join(dir, "a.npy")
	require.NoError(t, npybridge.WriteFile(in, a))
	for _, args := range [][]string{{"--chunks", "3,10,17"}, {"--chunks", "1,33,17", "--compress", "--level", "9"}} {
		out := filepath.Join(dir, args[1]+".zarr")
		r := cli(t, nil, append(append([]string{"convert", "--quiet"}, args...), in, out)...)
		require.Equal(t, 0, r.code, r.stderr)
		got := pypeer.Run(t, `
import sys, zarr, numpy as np
z = zarr.open(sys.argv[1], mode='r')
print(np.array_equal(z[...], np.load(sys.argv[2])), z.compressor, z.chunks, z.attrs['_ARRAY_DIMENSIONS'])
`, nil, out, in)
		want := map[string]string{
			"3,10,17": "True None (3, 10, 17) ['a_dim_0', 'a_dim_1', 'a_dim_2']\n",
			"1,33,17": "True Zlib(level=9) (1, 33, 17) ['a_dim_0', 'a_dim_1', 'a_dim_2']\n",
		}[args[1]]
		assert.Equal(t, want, string(got))
	}
	pypeer.Run(t, `
import sys, os, zarr, numcodecs, numpy as np
d = sys.argv[1]
f = np.asfortranarray(np.arange(7*9, dtype='>f8').reshape(7, 9))
z = zarr.open(os.path.join(d, 'py.zarr'), mode='w', shape=(7, 9), chunks=(3, 4), dtype='>f8', order='F', fill_value=-1, compressor=numcodecs.Zlib(level=3))
z[1:6, 2:] = f[1:6, 2:]
np.save(os.path.join(d, 'py.npy'), z[...])
`, nil, dir)
	r := cli(t, nil, "convert", "--quiet", filepath.Join(dir, "py.zarr"), filepath.Join(dir, "py-back.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	want, err := npybridge.ReadFile(filepath.Join(dir, "py.npy")) // zarr-python's reading, saved in F order
	require.NoError(t, err)
	got, err := npybridge.ReadFile(filepath.Join(dir, "py-back.npy"))
	require.NoError(t, err)
	assert.True(t, got.Equal(want), "ndpack read %v, zarr-python %v", got, want)
}

// TestHostileZarrStore: a .zarray claiming chunks of a terabyte, and one
// whose chunk file is of the wrong size, are one-line errors; nothing is
// allocated for the claims (the command's peak memory stays small).
func TestHostileZarrStore(t *testing.T) {
	dir := t.TempDir()
	write := func(name, zarray string, files map[string][]byte) string {
		d := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, ".zarray"), []byte(zarray), 0o644))
		for k, v := range files {
			require.NoError(t, os.WriteFile(filepath.Join(d, k), v, 0o644))
		}
		return d
	}
	meta := func(shape, chunks string) string {
		return `{"chunks": ` + chunks + `, "compressor": null, "dtype": "<f8", "fill_value": null, "filters": null, "order": "C", "shape": ` + shape + `, "zarr_format": 2}`
	}
	huge := write("huge.zarr", meta("[137438953472]", "[137438953472]"), nil)
	wrong := write("wrong.zarr", meta("[4]", "[4]"), map[string][]byte{"0": make([]byte, 30)})
	for _, c := range []struct{ store, text string }{
		{huge, "a chunk of shape (137438953472,) of <f8 is 1099511627776 bytes, more than the"},
		{wrong, `chunk "0" holds 30 bytes; a chunk of shape (4,) of <f8 holds 32`},
	} {
		r := cli(t, nil, "convert", "--quiet", c.store, filepath.Join(dir, "out.npy"))
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, c.text)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		assert.NoFileExists(t, filepath.Join(dir, "out.npy"))
	}
}
