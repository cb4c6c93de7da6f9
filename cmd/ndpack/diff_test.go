package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// diff answers as np.array_equal and np.allclose answer for the same
// files: numpy writes the pairs and its verdicts, ndpack's exit status
// must agree with each, and its report gives numpy's count, first index
// and largest differences.
func TestDiffAgreesWithNumpy(t *testing.T) {
	dir := t.TempDir()
	out := pypeer.Run(t, `
import numpy as np, json, os
d = sys.argv[1]
rng = np.random.default_rng(7)
a = rng.standard_normal((40, 25))
cases = {}
def pair(name, x, y, kinds=None):
    np.save(os.path.join(d, name + "_a.npy"), x)
    np.save(os.path.join(d, name + "_b.npy"), y)
    numeric = x.dtype.kind in 'biufc' and y.dtype.kind in 'biufc'
    comparable = x.shape == y.shape and (numeric or x.dtype.newbyteorder('<') == y.dtype.newbyteorder('<'))
    v = {"equal": comparable and bool(np.array_equal(x, y))}
    v["equal_nan"] = comparable and (bool(np.array_equal(x, y, equal_nan=True)) if numeric else v["equal"])
    for rtol, atol in [(1e-5, 1e-8), (1e-9, 0.0), (0.0, 1e-3), (0.5, 0.0)]:
        v["close_%g_%g" % (rtol, atol)] = comparable and (bool(np.allclose(x, y, rtol=rtol, atol=atol)) if numeric else v["equal"])
    if x.shape == y.shape and x.dtype == y.dtype and x.dtype.kind == 'f':
        diff = np.abs(x - y)
        v["count"] = int(np.count_nonzero(x != y))
        if v["count"]:
            first = np.argwhere(x != y)[0]
            v["first"] = "(" + ", ".join(str(int(i)) for i in first) + ("," if len(first) == 1 else "") + ")"
        fin = np.isfinite(diff)
        v["maxabs"] = float(diff[fin].max()) if fin.any() else 0.0
    cases[name] = v
pair("same", a, a.copy())
pair("one", a, np.where(np.arange(a.size).reshape(a.shape) == 57, a + 0.25, a))
b = a * (1 + 1e-7)
pair("tiny", a, b)
pair("big", a, a * 1.3)
n = a.copy(); n[3, 4] = np.nan
pair("nan", n, n.copy())
z = np.zeros(5); mz = -np.zeros(5)
pair("zero", z, mz)
pair("endian", a, a.astype('>f8'))
pair("dtype", a.astype('<f4'), a)
pair("shape", a, a.reshape(25, 40))
i = np.array([2**62 + 1, 5], dtype='<i8'); j = np.array([2**62, 5], dtype='<i8')
pair("int64", i, j)
c = (a[0] + 1j * a[1]).astype('<c16')
pair("complex", c, c * (1 + 1e-7))
s = np.array(["ab", "cd"]); s2 = np.array(["ab", "ce"])
pair("str", s, s2)
print(json.dumps(cases))
`, nil, dir)
	var cases map[string]map[string]any
	require.NoError(t, json.Unmarshal(out, &cases))
	require.Len(t, cases, 12)
	for name, want := range cases {
		a, b := filepath.Join(dir, name+"_a.npy"), filepath.Join(dir, name+"_b.npy")
		check := func(args []string, equal bool) {
			t.Helper()
			r := cli(t, nil, append(append([]string{"diff"}, args...), a, b)...)
			code := map[bool]int{true: 0, false: 1}[equal]
			require.Equal(t, code, r.code, "%s %v: numpy says %v\nstdout %s\nstderr %s", name, args, equal, r.stdout, r.stderr)
			if code == 0 {
				assert.Empty(t, r.stdout, name)
			}
		}
		check(nil, want["equal"].(bool))
		check([]string{"--equal-nan"}, want["equal_nan"].(bool))
		for _, tol := range [][2]string{{"1e-05", "1e-08"}, {"1e-09", "0"}, {"0", "0.001"}, {"0.5", "0"}} {
			key := "close_" + tol[0] + "_" + tol[1] // as Python's %g writes them
			v, ok := want[key]
			require.True(t, ok, "%s: no numpy verdict %s in %v", name, key, want)
			check([]string{"--rtol", tol[0], "--atol", tol[1]}, v.(bool))
		}
		if count, ok := want["count"]; ok && count.(float64) > 0 {
			r := cli(t, nil, "diff", a, b)
			assert.Contains(t, r.stdout, fmt.Sprintf("differ: %d of ", int(count.(float64))), name)
			assert.Contains(t, r.stdout, "first at "+want["first"].(string)+": ", name)
			if maxAbs := want["maxabs"].(float64); maxAbs > 0 {
				assert.Contains(t, r.stdout, fmt.Sprintf("max absolute difference %s,", strconv.FormatFloat(maxAbs, 'g', 6, 64)), name)
			}
		}
	}
	r := cli(t, nil, "diff", filepath.Join(dir, "dtype_a.npy"), filepath.Join(dir, "dtype_b.npy"))
	assert.Contains(t, r.stdout, "\n  dtypes <f4 and <f8 compared as <f8 (numpy's promotion)\n", "values of two dtypes compare as numpy promotes them")
	r = cli(t, nil, "diff", filepath.Join(dir, "str_a.npy"), filepath.Join(dir, "dtype_b.npy"))
	assert.Equal(t, fmt.Sprintf("%s and %s differ: dtype <U2 vs <f8\n", filepath.Join(dir, "str_a.npy"), filepath.Join(dir, "dtype_b.npy")), r.stdout)
	r = cli(t, nil, "diff", filepath.Join(dir, "shape_a.npy"), filepath.Join(dir, "shape_b.npy"))
	assert.Contains(t, r.stdout, "differ: shape (40, 25) vs (25, 40)\n")
}

// Any two formats compare, archives member by member; errors exit 2.
func TestDiffFormatsAndErrors(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os
d = sys.argv[1]
x = np.arange(12, dtype='<i2').reshape(3, 4)
y = np.linspace(0, 1, 5)
np.savez(os.path.join(d, "a.npz"), x=x, y=y)
np.savez(os.path.join(d, "b.npz"), x=x, y=y + np.array([0, 0, 0.5, 0, 0]))
np.savez(os.path.join(d, "c.npz"), x=x)
np.save(os.path.join(d, "x.npy"), np.asfortranarray(x))
`, nil, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	require.Equal(t, 0, cli(t, nil, "convert", p("a.npz"), p("a.msgpack")).code)
	r := cli(t, nil, "diff", p("a.npz"), p("a.msgpack"))
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	r = cli(t, nil, "diff", p("x.npy"), p("a.npz")+":x")
	assert.Equal(t, 0, r.code, "Fortran order against C order: %s%s", r.stdout, r.stderr)
	r = cli(t, nil, "diff", p("a.npz"), p("b.npz"))
	assert.Equal(t, 1, r.code)
	assert.Equal(t, p("a.npz")+":y and "+p("b.npz")+":y differ: 1 of 5 elements (20%)\n  first at (2,): 0.5 vs 1.0\n  max absolute difference 0.5, max relative difference 0.5\n", r.stdout)
	r = cli(t, nil, "diff", p("a.npz"), p("c.npz"))
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "y: only in "+p("a.npz")+"\n", r.stdout)
	r = cli(t, nil, "diff", p("a.npz"), p("missing.npy"))
	assert.Equal(t, 2, r.code)
	assert.Regexp(t, `^ndpack: .*missing.npy.*no such file or directory\n$`, r.stderr)
	r = cli(t, nil, "diff", p("a.npz")+":nope", p("a.npz"))
	assert.Equal(t, 2, r.code, r.stderr)
	r = cli(t, nil, "diff", "--rtol", "-1", p("a.npz"), p("a.npz"))
	assert.Equal(t, 2, r.code)
	r = cli(t, nil, "diff", p("a.npz"))
	assert.Equal(t, 2, r.code)
}
