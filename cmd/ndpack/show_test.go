package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// show prints what numpy's print(a) prints, character for character: for
// every dtype show formats, shapes from 0-d to 3-D, summarised and --full,
// at numpy's precision and at --precision 3.
func TestShowPrintsAsNumpy(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os
d = sys.argv[1]
rng = np.random.default_rng(11)
arrays = {
    "f8": rng.standard_normal((4, 30)),
    "f8_wide": np.array([1e-5, 1.5e3, 123456789.0, -2.5]),
    "f8_exp_big": np.array([1e10, 1.0, 1e100]),
    "f8_ints": np.array([1.0, 2.0, -3.0]),
    "f8_nonfinite": np.array([np.nan, 1.5, -np.inf, np.inf]),
    "f8_allnan": np.array([np.nan, np.nan]),
    "f8_thirds": np.array([1/3, 2/3, 10/3]),
    "f8_zero_tiny": np.array([0.0, 1e-10]),
    "f8_big2d": rng.standard_normal((100, 100)),
    "f8_3d": rng.standard_normal((20, 20, 20)),
    "f4": rng.standard_normal((3, 4, 5)).astype('f4'),
    "f4_tenth": np.array([0.1, 0.2, 0.3], dtype='f4'),
    "f2": (np.arange(2000) / 7).astype('f2'),
    "f8_be": rng.standard_normal(7).astype('>f8'),
    "i8": np.arange(10000).reshape(100, 100),
    "i2_neg": np.array([-32768, 5, 32767], dtype='<i2'),
    "u8_big": np.array([2**64 - 1, 0], dtype='<u8'),
    "u1_img": rng.integers(0, 256, (30, 40), dtype='u1'),
    "b1": np.array([True, False, True]),
    "b1_all_true": np.array([True, True]),
    "c16": np.array([1 + 2j, 3.5 - 1j, -0.25 + 1e-3j]),
    "c8": (rng.standard_normal(4) + 1j * rng.standard_normal(4)).astype('c8'),
    "U": np.array(["ab", "it's", "x\"y", ""]),
    "S": np.array([b"ab", b"\x00c", b"\xffz"]),
    "zero_d_f8": np.array(2.5),
    "zero_d_f8_tiny": np.array(1e-7),
    "zero_d_i4": np.array(7, dtype='i4'),
    "zero_d_b": np.array(True),
    "empty": np.zeros((0,)),
    "empty2": np.zeros((2, 0)),
    "long_row": np.arange(60) * 1000.5,
}
for name, a in arrays.items():
    np.save(os.path.join(d, name + ".npy"), a)
    for prec in (8, 3):
        np.set_printoptions(precision=prec, threshold=1000)
        open(os.path.join(d, "%s.p%d.txt" % (name, prec)), "w").write(str(a) + "\n")
    np.set_printoptions(precision=8, threshold=sys.maxsize)
    open(os.path.join(d, name + ".full.txt"), "w").write(str(a) + "\n")
`, nil, dir)
	files, err := filepath.Glob(filepath.Join(dir, "*.npy"))
	require.NoError(t, err)
	require.Len(t, files, 31)
	for _, f := range files {
		name := strings.TrimSuffix(f, ".npy")
		for suffix, args := range map[string][]string{".p8.txt": nil, ".p3.txt": {"--precision", "3"}, ".full.txt": {"--full"}} {
			want, err := os.ReadFile(name + suffix)
			require.NoError(t, err)
			r := cli(t, nil, append(append([]string{"show"}, args...), f)...)
			require.Equal(t, 0, r.code, "%s: %s", f, r.stderr)
			assert.Equal(t, string(want), r.stdout, "%s %v", filepath.Base(f), args)
		}
	}
}

// Rows, fields, archives, CSV and JSON.
func TestShowPartsAndForms(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os
d = sys.argv[1]
np.save(os.path.join(d, "m.npy"), np.arange(20, dtype='<i4').reshape(5, 4))
r = np.zeros(3, dtype=[('x', '<f4'), ('id', '<u2')]); r['x'] = [0.5, 1.5, 2.5]; r['id'] = [7, 8, 9]
np.save(os.path.join(d, "r.npy"), r)
np.savez(os.path.join(d, "z.npz"), a=np.array([1.5, np.nan]), b=np.array(3))
`, nil, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	r := cli(t, nil, "show", "--rows", "1:3", p("m.npy"))
	assert.Equal(t, "[[ 4  5  6  7]\n [ 8  9 10 11]]\n", r.stdout, r.stderr)
	r = cli(t, nil, "show", "--rows", "-1:", p("m.npy"))
	assert.Equal(t, "[[16 17 18 19]]\n", r.stdout, r.stderr)
	r = cli(t, nil, "show", "--rows", "7:9", p("m.npy"))
	assert.Equal(t, "[]\n", r.stdout, "past the end: empty, as Python slices")
	assert.Equal(t, 2, cli(t, nil, "show", "--rows", "1:5:2", p("m.npy")).code, "a step is a usage error")
	r = cli(t, nil, "show", p("r.npy"))
	assert.Equal(t, "[(0.5, 7) (1.5, 8) (2.5, 9)]\n", r.stdout, r.stderr)
	r = cli(t, nil, "show", "--field", "id", p("r.npy"))
	assert.Equal(t, "[7 8 9]\n", r.stdout, r.stderr)
	r = cli(t, nil, "show", p("z.npz"))
	assert.Equal(t, "a: <f8 (2,)\n[1.5 nan]\n\nb: <i8 ()\n3\n", r.stdout, r.stderr)
	r = cli(t, nil, "show", p("z.npz")+":a")
	assert.Equal(t, "[1.5 nan]\n", r.stdout, r.stderr)
	r = cli(t, nil, "show", "--csv", p("m.npy"))
	assert.Equal(t, "0,1,2,3\n4,5,6,7\n8,9,10,11\n12,13,14,15\n16,17,18,19\n", r.stdout, r.stderr)
	r = cli(t, nil, "show", "--csv", p("z.npz")+":a")
	assert.Equal(t, "1.5\nnan\n", r.stdout, r.stderr)
	r = cli(t, nil, "show", "--json", p("z.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	var doc map[string]struct {
		DType  string `json:"dtype"`
		Shape  []int  `json:"shape"`
		Values any    `json:"values"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	assert.Equal(t, []any{1.5, "NaN"}, doc["a"].Values)
	assert.Equal(t, 3.0, doc["b"].Values)
	assert.Equal(t, 1, cli(t, nil, "show", "--csv", p("z.npz")).code, "CSV holds one array")
	r = cli(t, nil, "show", "--csv", p("r.npy"))
	assert.Equal(t, "x,id\n0.5,7\n1.5,8\n2.5,9\n", r.stdout, "a column per field")
}
