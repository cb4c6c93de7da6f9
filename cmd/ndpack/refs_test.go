package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/s3fake"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// refsFixtures writes frames f0..f5.npy (4 x 3 <i2 each), a.npy (8 x 2
// <f8) and run.npz (stored: a and a 0-d s) into dir.
func refsFixtures(t *testing.T, dir string) (frames []string, a *ndarray.Array) {
	for i := 0; i < 6; i++ {
		v := make([]int16, 12)
		for j := range v {
			v[j] = int16(100*i + j)
		}
		name := filepath.Join(dir, fmt.Sprintf("f%d.npy", i))
		require.NoError(t, npybridge.WriteFile(name, mustSlice(t, v, 4, 3)))
		frames = append(frames, name)
	}
	a = mustSlice(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, 8, 2)
	require.NoError(t, npybridge.WriteFile(filepath.Join(dir, "a.npy"), a))
	require.NoError(t, npybridge.WriteNPZFile(filepath.Join(dir, "run.npz"), []npybridge.NamedArray{{Name: "a", Array: a}, {Name: "s", Array: ndarray.Scalar(int32(7))}}, false))
	return frames, a
}

// TestRefsCommand: ndpack refs writes references zarr-python opens
// through fsspec equal to numpy's arrays (a stack, chunks of rows, an
// .npz's group); ndpack reads them back (convert, inspect); refusals
// are one line.
func TestRefsCommand(t *testing.T) {
	dir := t.TempDir()
	frames, a := refsFixtures(t, dir)
	refs := filepath.Join(dir, "refs.json")
	r := cli(t, nil, "refs", "--chunk-rows", "2", "--output", refs, filepath.Join(dir, "a.npy"), filepath.Join(dir, "run.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Empty(t, r.stdout)
	var doc struct {
		Version int
		Refs    map[string]json.RawMessage
	}
	require.NoError(t, json.Unmarshal(readFile(t, refs), &doc))
	assert.Equal(t, 1, doc.Version)
	abs, _ := filepath.Abs(filepath.Join(dir, "a.npy"))
	assert.Equal(t, fmt.Sprintf(`["%s", 160, 32]`, abs), string(doc.Refs["a/1.0"]))
	r = cli(t, nil, "refs", "--stack", "frames", frames[0], frames[1], frames[2], frames[3], frames[4], frames[5])
	require.Equal(t, 0, r.code, r.stderr)
	stackRefs := filepath.Join(dir, "frames.json")
	require.NoError(t, os.WriteFile(stackRefs, []byte(r.stdout), 0o644))

	// Back through ndpack: the arrays, whole and by name.
	r = cli(t, nil, "convert", "--quiet", stackRefs, filepath.Join(dir, "frames.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	got, err := npybridge.ReadFile(filepath.Join(dir, "frames.npy"))
	require.NoError(t, err)
	assert.Equal(t, []int{6, 4, 3}, got.Shape)
	f5, _ := npybridge.ReadFile(frames[5])
	assert.Equal(t, f5.Data, got.Data[5*24:])
	r = cli(t, nil, "convert", "--quiet", refs+":run/a", filepath.Join(dir, "a-back.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	back, _ := npybridge.ReadFile(filepath.Join(dir, "a-back.npy"))
	assert.True(t, back.Equal(a))
	r = cli(t, nil, "convert", "--quiet", refs, filepath.Join(dir, "all.msgpack"))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "inspect", refs)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "refs.json: refs, 3 arrays")

	pypeer.RequireModule(t, "fsspec", "python3-fsspec")
	pypeer.RequireModule(t, "zarr", "python3-zarr")
	out := pypeer.Run(t, `
import sys, glob, fsspec, zarr, numpy as np
d = sys.argv[1]
g = zarr.open(fsspec.get_mapper('reference://', fo=d + '/refs.json'), mode='r')
s = zarr.open(fsspec.get_mapper('reference://', fo=d + '/frames.json'), mode='r')
frames = np.stack([np.load(d + '/f%d.npy' % i) for i in range(6)])
print(np.array_equal(g['a'][...], np.load(d + '/a.npy')), g['a'].chunks, np.array_equal(g['run/a'][...], np.load(d + '/run.npz')['a']),
      g['run/s'][...] == 7, np.array_equal(s['frames'][...], frames), s['frames'].chunks)
`, nil, dir)
	assert.Equal(t, "True (2, 2) True True True (1, 4, 3)\n", string(out))

	// Refusals, one line each.
	require.NoError(t, npybridge.WriteNPZFile(filepath.Join(dir, "deflated.npz"), []npybridge.NamedArray{{Name: "x", Array: a}}, true))
	require.NoError(t, npybridge.WriteFile(filepath.Join(dir, "wide.npy"), mustSlice(t, []int16{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4)))
	for _, c := range []struct {
		args []string
		code int
		text string
	}{
		{[]string{filepath.Join(dir, "deflated.npz")}, 1, "deflated.npz: member \"x\": npybridge: compressed member"},
		{[]string{filepath.Join(dir, "deflated.npz")}, 1, "ndpack convert " + filepath.Join(dir, "deflated.npz") + " deflated.zarr"},
		{[]string{"--stack", "s", frames[0], filepath.Join(dir, "wide.npy")}, 1, "wide.npy holds <i2, (2, 4); " + frames[0] + " holds <i2, (4, 3)"},
		{[]string{"--chunk-rows", "3", filepath.Join(dir, "a.npy")}, 1, "8 rows are not a multiple of 3"},
		{[]string{filepath.Join(dir, "a.npy"), filepath.Join(dir, "a.npy")}, 1, `would both be the array or group "a"`},
		{[]string{refs}, 1, "refs.json is neither an .npy file nor an .npz archive"},
		{[]string{}, 2, "want one INPUT or more"},
	} {
		r := cli(t, nil, append([]string{"refs"}, c.args...)...)
		assert.Equal(t, c.code, r.code, "%v: %s", c.args, r.stderr)
		assert.Contains(t, r.stderr, c.text, "%v", c.args)
		if c.code == 1 {
			assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "%v: %q", c.args, r.stderr)
		}
		assert.Empty(t, r.stdout)
	}
}

// TestRefsRemoteBudget: references to 40 .npy files and an .npz on an
// HTTP server cost one request of 4 KiB an .npy, and for the .npz its
// first bytes, its directory and one a member at most; ndpack reads the
// arrays back through them.
func TestRefsRemoteBudget(t *testing.T) {
	dir := t.TempDir()
	var names []string
	for i := 0; i < 40; i++ {
		v := make([]float32, 3000) // past the first 4 KiB
		for j := range v {
			v[j] = float32(i*10000 + j)
		}
		name := fmt.Sprintf("shot%02d.npy", i)
		require.NoError(t, npybridge.WriteFile(filepath.Join(dir, name), mustSlice(t, v, 1000, 3)))
		names = append(names, name)
	}
	_, _ = refsFixtures(t, dir)
	var mu sync.Mutex
	ranges := map[string][]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ranges[r.URL.Path] = append(ranges[r.URL.Path], r.Method+" "+r.Header.Get("Range"))
		mu.Unlock()
		http.ServeFile(w, r, filepath.Join(dir, filepath.Base(r.URL.Path)))
	}))
	defer srv.Close()
	var urls []string
	for _, n := range names {
		urls = append(urls, srv.URL+"/"+n)
	}
	r := cli(t, nil, append([]string{"refs", "--stack", "shots"}, urls...)...)
	require.Equal(t, 0, r.code, r.stderr)
	// requests reads what the server has logged for a path: its
	// handler runs on the server's goroutines.
	requests := func(path string) []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), ranges[path]...)
	}
	for _, n := range names {
		assert.Equal(t, []string{"GET bytes=0-4095"}, requests("/"+n), n)
	}
	r2 := cli(t, nil, "refs", srv.URL+"/run.npz")
	require.Equal(t, 0, r2.code, r2.stderr)
	// Its first 4 KiB hold the whole archive: its directory and members.
	assert.Equal(t, []string{"GET bytes=0-4095"}, requests("/run.npz"))
	// A larger one: its first bytes, its directory, and a request a
	// member past them.
	var members []npybridge.NamedArray
	for i := 0; i < 3; i++ {
		members = append(members, npybridge.NamedArray{Name: fmt.Sprint("m", i), Array: mustSlice(t, make([]float64, 1000), 1000)})
	}
	require.NoError(t, npybridge.WriteNPZFile(filepath.Join(dir, "big.npz"), members, false))
	r2 = cli(t, nil, "refs", srv.URL+"/big.npz")
	require.Equal(t, 0, r2.code, r2.stderr)
	assert.Len(t, requests("/big.npz"), 1+1+2, "the .npz's requests: %q", requests("/big.npz"))

	refs := filepath.Join(dir, "shots.json")
	require.NoError(t, os.WriteFile(refs, []byte(r.stdout), 0o644))
	r = cli(t, nil, "convert", "--quiet", "--rows", "39:", refs, filepath.Join(dir, "last.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	last, err := npybridge.ReadFile(filepath.Join(dir, "last.npy"))
	require.NoError(t, err)
	want, _ := npybridge.ReadFile(filepath.Join(dir, "shot39.npy"))
	assert.Equal(t, want.Data, last.Data)

	// A reference file served from elsewhere may not read local files.
	local := cli(t, nil, "refs", filepath.Join(dir, "a.npy"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "local.json"), []byte(local.stdout), 0o644))
	r = cli(t, nil, "convert", "--quiet", srv.URL+"/local.json", filepath.Join(dir, "x.npy"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "points at the local file")
	// A reference past its file's end.
	bad := strings.Replace(local.stdout, ", 128, 128]", ", 128, 4096]", 1)
	require.NotEqual(t, bad, local.stdout)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte(bad), 0o644))
	r = cli(t, nil, "convert", "--quiet", filepath.Join(dir, "bad.json"), filepath.Join(dir, "x.npy"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "more than the 128 the key may hold")
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
}

// TestRefsS3: references to an .npy in S3, read back by ndpack through
// S3's ranges.
func TestRefsS3(t *testing.T) {
	s := s3fake.Start(t, "lab")
	dir := t.TempDir()
	_, a := refsFixtures(t, dir)
	s.Put(t, "lab", "runs/a.npy", readFile(t, filepath.Join(dir, "a.npy")))
	before := s.Requests.Load()
	r := cli(t, nil, "refs", "--chunk-rows", "4", "s3://lab/runs/a.npy")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, int64(1), s.Requests.Load()-before, "one GetObject")
	assert.Contains(t, r.stdout, `"a/1.0": ["s3://lab/runs/a.npy", 192, 64]`)
	refs := filepath.Join(dir, "s3.json")
	require.NoError(t, os.WriteFile(refs, []byte(r.stdout), 0o644))
	r = cli(t, nil, "convert", "--quiet", refs, filepath.Join(dir, "back.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	got, _ := npybridge.ReadFile(filepath.Join(dir, "back.npy"))
	assert.True(t, got.Equal(a))
}
