package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspectJSON runs inspect --json and decodes its report.
func inspectJSON(t *testing.T, stdin []byte, args ...string) ([]map[string]any, result) {
	t.Helper()
	r := cli(t, stdin, append([]string{"inspect", "--json"}, args...)...)
	var rep []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), "%s\n%s", r.stdout, r.stderr)
	return rep, r
}

// The statistics are numpy's: min, max, mean (NaN when a NaN is in, as
// np.mean), nanmean, NaN counts, True/False counts, and datetimes printed
// as numpy prints them; first values are JSON numbers.
func TestInspectAgainstNumpy(t *testing.T) {
	dir := t.TempDir()
	out := pypeer.Run(t, `
import json, os
import numpy as np
d = sys.argv[1]
arrays = {
    "f8": np.array([1.5, -2.25, 1e300, 3.0]),
    "f4nan": np.array([1.5, np.nan, 2.5, np.nan, -7], dtype="<f4"),
    "f2": np.array([0.1, 65504, -3], dtype="<f2"),
    "i8": np.array([-(2**62), 2**62, 5], dtype=">i8"),
    "u2": np.arange(1000, dtype="<u2").reshape(10, 100),
    "fortran": np.asfortranarray(np.arange(24, dtype="<i4").reshape(2, 3, 4)),
    "b1": np.array([True, False, False, True, True]),
    "c16": np.array([1+2j, 3-4j, np.nan]),
    "dt": np.array(["2024-02-29T12:00", "1969-07-20T20:17", "NaT"], dtype="datetime64[m]"),
    "empty": np.zeros((3, 0), dtype="<i2"),
    "s": np.array([b"ab", b"cde"]),
}
def num(x):
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    return float(str(x))  # numpy's shortest form for the value's width
res = {}
for name, a in arrays.items():
    np.save(os.path.join(d, name + ".npy"), a)
    e = {"first": []}
    flat = a.ravel(order="C")[:8]
    if a.dtype.kind in "iu":
        e["first"] = [int(x) for x in flat]
        if a.size:
            e.update(min=int(a.min()), max=int(a.max()), mean=float(a.mean()))
    elif a.dtype.kind == "f":
        e["first"] = [num(x) for x in flat]
        e.update(nan_count=int(np.isnan(a).sum()), nanmean=num(np.nanmean(a.astype("f8"))), min=num(np.nanmin(a)), max=num(np.nanmax(a)))
        e["mean"] = num(a.astype("f8").mean())
    elif a.dtype.kind == "b":
        e.update(true_count=int(a.sum()), false_count=int((~a).sum()), first=[bool(x) for x in flat])
    elif a.dtype.kind == "c":
        e.update(nan_count=int(np.isnan(a).sum()), nanmean=[float(np.nanmean(a).real), float(np.nanmean(a).imag)],
                 first=[[num(x.real), num(x.imag)] for x in flat])
    elif a.dtype.kind == "M":
        e.update(first=[str(x) for x in flat], min=str(np.nanmin(a)), max=str(np.nanmax(a)), nat_count=int(np.isnat(a).sum()))
    elif a.dtype.kind == "S":
        e.update(first=[x.decode() for x in flat])
    res[name] = e
print(json.dumps(res))
`, nil, dir)
	var want map[string]map[string]any
	require.NoError(t, json.Unmarshal(out, &want))
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			rep, r := inspectJSON(t, nil, filepath.Join(dir, name+".npy"))
			require.Equal(t, 0, r.code, r.stderr)
			a := rep[0]["arrays"].([]any)[0].(map[string]any)
			stats, _ := a["stats"].(map[string]any)
			for _, k := range []string{"min", "max", "nan_count", "true_count", "false_count", "nat_count"} {
				if v, ok := w[k]; ok {
					assert.Equal(t, v, stats[k], k)
				}
			}
			for _, k := range []string{"mean", "nanmean"} {
				switch v := w[k].(type) {
				case float64:
					assert.InEpsilon(t, v, stats[k], 1e-12, k)
				case []any:
					assert.Equal(t, v, stats[k], k)
				}
			}
			if name == "f4nan" {
				assert.Equal(t, "NaN", stats["mean"], "np.mean of an array with NaN is NaN")
			}
			assert.Equal(t, w["first"], a["first"])
		})
	}
	// The text form says what the mean skipped.
	r := cli(t, nil, "inspect", filepath.Join(dir, "f4nan.npy"))
	assert.Contains(t, r.stdout, "mean      NaN (-1 without the NaNs)\n")
	r = cli(t, nil, "inspect", filepath.Join(dir, "empty.npy"))
	assert.Contains(t, r.stdout, "dtype     <i2 (int, 2 bytes each, byte order little)\n")
}

// Each file is reported; failures go to standard error (and into the JSON
// as error entries) and make the exit status 1 once all are done.
func TestInspectReportsEveryFile(t *testing.T) {
	dir := t.TempDir()
	good, _ := smallNPY(t, dir, "good.npy")
	bad := filepath.Join(dir, "bad.npy")
	require.NoError(t, os.WriteFile(bad, []byte("\x93NUMPY\x01\x00\x05\x00{'x'}"), 0o644))
	missing := filepath.Join(dir, "missing.npy")

	rep, r := inspectJSON(t, nil, bad, good, missing)
	assert.Equal(t, 1, r.code)
	require.Len(t, rep, 3)
	assert.Contains(t, rep[0]["error"], "bad.npy: npybridge: ")
	assert.Equal(t, "npy", rep[1]["format"])
	assert.Equal(t, missing+": no such file or directory", rep[2]["error"])
	assert.Equal(t, 2, strings.Count(r.stderr, "\n"), r.stderr)
	assert.Regexp(t, `^ndpack: .*bad.npy: npybridge: .*\nndpack: .*missing.npy: no such file or directory\n$`, r.stderr)

	text := cli(t, nil, "inspect", bad, good)
	assert.Equal(t, 1, text.code)
	assert.Contains(t, text.stdout, "good.npy: npy 1.0, 1 array")

	// Standard input, in any format.
	npy, _ := os.ReadFile(good)
	rep, r = inspectJSON(t, npy, "-")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, []any{1.0, 2.0, 3.0}, rep[0]["arrays"].([]any)[0].(map[string]any)["first"])
	ext := filepath.Join(dir, "a.msgpack")
	require.Equal(t, 0, cli(t, nil, "convert", good, ext).code)
	mp, _ := os.ReadFile(ext)
	rep, r = inspectJSON(t, mp, "-")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "msgpack", rep[0]["format"])
}

// A msgpack map of many small arrays is described entry by entry when
// asked for, not all at once: what it holds after opening is a few bytes an
// entry, where a description of each took some 500.
func TestMsgpackMapOfManyArraysIsDescribedLazily(t *testing.T) {
	const n = 200_000
	a, _ := ndarray.FromSlice([]float64{0})
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("k%d", i)] = a
	}
	b, err := ndpack.MessageOptions{}.MarshalMessage(m)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "many.msgpack")
	require.NoError(t, os.WriteFile(p, b, 0o644))
	m, b = nil, nil

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fa, err := openArrays(p, nil, "")
	require.NoError(t, err)
	defer fa.close()
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d arrays: %d bytes held after opening", n, held)
	assert.Less(t, held, int64(16*n), "bytes held after opening")
	require.Equal(t, n, fa.len())
	for _, i := range []int{0, n / 2, n - 1} {
		s := fa.at(i)
		require.NoError(t, s.err)
		assert.Equal(t, []int{1}, s.shape)
		assert.Regexp(t, `^k\d+$`, s.name)
	}
}

// inspect reads a file by what its first bytes say, whatever its name;
// convert and render do so for a name with no known extension (#34: the
// hint named --from, which inspect has not).
func TestFormatsAreSniffed(t *testing.T) {
	dir := t.TempDir()
	a, _ := ndarray.FromSlice([]float64{1, 2, 3, 4})
	misnamed, bin := filepath.Join(dir, "misnamed.msgpack"), filepath.Join(dir, "data.bin")
	for _, p := range []string{misnamed, bin} {
		require.NoError(t, npybridge.WriteFile(p, a))
	}
	r := cli(t, nil, "inspect", misnamed)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, misnamed+": npy 1.0, 1 array\n")
	r = cli(t, nil, "convert", bin, filepath.Join(dir, "data.msgpack"))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "render", bin, filepath.Join(dir, "d.svg"))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "convert", misnamed, filepath.Join(dir, "x.npy"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "looks like an NPY file: use --from npy")
}
