package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// Every way of naming a dtype that a user types for numpy gives the dtype
// np.dtype gives: its typestr for plain ones, str(dtype) for records.
func TestDTypeSpecsAreNumpys(t *testing.T) {
	specs := []string{"float64", "f8", "<f8", ">f8", "=f8", "double", "float", "d", "float32", "f4", "single", "half", "float16", "e",
		"int8", "i1", "b", "byte", "uint8", "u1", "B", "ubyte", "int16", ">i2", "<i2", "short", "h", "uint16", "H",
		"int32", "i4", "intc", "i", "uint32", "I", "int64", "int", "long", "intp", "l", "q", "i8", "uint64", "uint", "Q", "u8",
		"complex64", "c8", "F", "csingle", "complex128", "complex", "c16", "D", ">c16",
		"bool", "?", "b1", "|b1", "bool_",
		"S10", "|S10", "a3", "U5", "<U5", ">U5", "V8", "|V8",
		"M8[ns]", "<M8[ns]", "datetime64[ns]", "datetime64[D]", "m8[s]", "timedelta64[ms]", ">M8[us]",
		"[('x', '<f4'), ('y', '<f4'), ('id', '<u2')]",
		"[('pos', '<f4', (3,)), ('name', 'S4'), ('t', '>f8')]",
		"[('a', [('b', '<i2'), ('c', 'u1')]), ('d', '<f8', (2, 2))]"}
	records := map[string]string{
		"x:<f4,y:<f4,id:<u2":        "[('x', '<f4'), ('y', '<f4'), ('id', '<u2')]",
		"pos:f4(3), name:S4, t:>f8": "[('pos', '<f4', (3,)), ('name', 'S4'), ('t', '>f8')]",
		"x:float64,flag:bool":       "[('x', '<f8'), ('flag', '?')]",
	}
	var script strings.Builder
	script.WriteString("import numpy as np, json\nout = []\nfor s in json.loads(sys.argv[1]):\n    d = np.dtype(eval(s) if s.startswith('[') else s)\n    out.append(d.str if d.names is None else str(d))\nprint(json.dumps(out))\n")
	all := append([]string{}, specs...)
	for _, list := range records {
		all = append(all, list)
	}
	in, _ := json.Marshal(all)
	var want []string
	require.NoError(t, json.Unmarshal(pypeer.Run(t, script.String(), nil, string(in)), &want))
	for i, s := range all {
		dt, err := parseDTypeFlag(s)
		require.NoError(t, err, s)
		assert.Equal(t, want[i], dt.String(), s)
	}
	for spec, list := range records {
		a, err := parseDTypeFlag(spec)
		require.NoError(t, err, spec)
		b, err := parseDTypeFlag(list)
		require.NoError(t, err, list)
		assert.Equal(t, b, a, "%s is %s", spec, list)
	}
	for _, bad := range []string{"", "float65", "str3", "bytes5", "void4", "x:", ":f8", "[('x')]", "[('x', 'f8'", "numbers", "i3", "x:<f4(3"} {
		_, err := parseDTypeFlag(bad)
		assert.Error(t, err, bad)
	}
}

// The specs issue 43 found refused are numpy's dtypes on the command
// line: create writes the array np.zeros(2, DTYPE) is, and refusals say
// why in one line.
func TestDTypeFlagTakesNumpySpecs(t *testing.T) {
	dir := t.TempDir()
	specs := []string{"str", "bytes", "unicode", "a5", "f4,i2", "int_", "bool_", "M8[D]", "U3",
		"[('a','<f4'),('b','<i2',(2,))]", "{'names': ['a', 'b'], 'formats': ['f4', 'i2']}",
		`{"names": ["a", "b"], "formats": ["<f4", "<i2"], "offsets": [0, 8], "itemsize": 12}`,
		"{'names': ['a', 'b'], 'formats': ['f4', 'i2'], 'titles': ['A', None]}", " float32 "}
	var files []string
	for i, spec := range specs {
		p := filepath.Join(dir, fmt.Sprintf("d%d.npy", i))
		r := cli(t, nil, "create", "--dtype", spec, "--shape", "2", p)
		require.Equal(t, result{0, "", ""}, r, spec)
		files = append(files, p)
	}
	in, _ := json.Marshal(map[string][]string{"specs": specs, "files": files})
	out := pypeer.Run(t, `
import ast, json, numpy as np
d = json.loads(sys.stdin.read())
ok = []
for s, f in zip(d["specs"], d["files"]):
    s = s.strip()
    obj = s
    if s[:1] in "[({":
        try:
            obj = ast.literal_eval(s)
        except Exception:
            obj = json.loads(s)
    a = np.load(f)
    ok.append(a.dtype == np.dtype(obj) and str(a.dtype) == str(np.dtype(obj)) and a.shape == (2,))
print(json.dumps(ok))
`, in)
	var ok []bool
	require.NoError(t, json.Unmarshal(out, &ok))
	for i, spec := range specs {
		assert.True(t, ok[i], "%s: np.load gives np.dtype's dtype", spec)
	}

	for spec, want := range map[string]string{
		"longdouble":    `--dtype "longdouble": numpy's long double, whose size depends on the platform`,
		"('<f4',(2,2))": `--dtype ('<f4', (2, 2)) is a subarray dtype, whose shape numpy folds into the array's: give --dtype '<f4' --shape 2,2,2`,
		"O":             `--dtype "O": numpy's object dtype`,
		"{'names': ['a', 'b'], 'formats': ['f4']}": `'formats' is shorter than 'names'`,
		"x:float65": `--dtype record field x: "float65": not a dtype numpy knows`,
	} {
		r := cli(t, nil, "create", "--dtype", spec, "--shape", "2", filepath.Join(dir, "bad.npy"))
		assert.Equal(t, 2, r.code, spec)
		assert.Contains(t, r.stderr, want, spec)
		assert.Equal(t, 2, strings.Count(r.stderr, "\n"), "one line and the usage hint: %s", r.stderr)
		assert.NoFileExists(t, filepath.Join(dir, "bad.npy"))
	}
}

// --astype takes numpy's names and refuses what it cannot make, saying why.
func TestAstypeTakesNumpySpecs(t *testing.T) {
	dir := t.TempDir()
	p, _ := smallNPY(t, dir, "a.npy")
	r := cli(t, nil, "convert", "--astype", "int_", "--casting", "unsafe", p, filepath.Join(dir, "i8.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	a, err := npybridge.ReadFile(filepath.Join(dir, "i8.npy"))
	require.NoError(t, err)
	assert.Equal(t, ndarray.DTypeOf[int64](), a.DType)
	for _, c := range []struct{ spec, casting, want string }{
		{"f4,i2", "unsafe", "--astype f4,i2: cannot convert <i2 to [('f0', '<f4'), ('f1', '<i2')]: a record array's values are converted field by field"},
		{"(3,)f4", "unsafe", "--astype (3,)f4: ('<f4', (3,)) is a subarray dtype, whose shape numpy's astype adds to the array's"},
		{"S32", "safe", "--astype S32: cannot convert <i2 to |S32: ndpack converts between bool, integers, floats"},
		{"M8[s]", "unsafe", "--astype M8[s]: cannot convert <i2 to <M8[s]: ndpack converts between bool, integers, floats"},
		{"M8[s]", "same_kind", "--astype M8[s]: cannot cast <i2 to <M8[s] under --casting same_kind, as numpy's can_cast says\n"},
		{"uint8", "same_kind", "--astype uint8: cannot cast <i2 to |u1 under --casting same_kind, as numpy's can_cast says (--casting unsafe converts anyway)"},
		{">i2", "no", "--astype >i2: cannot cast <i2 to >i2 under --casting no, as numpy's can_cast says (--casting unsafe converts anyway)"},
	} {
		r := cli(t, nil, "convert", "--astype", c.spec, "--casting", c.casting, p, filepath.Join(dir, "o.npy"))
		oneLineError(t, r, c.want, c.spec, " ", c.casting)
		assert.NoFileExists(t, filepath.Join(dir, "o.npy"))
	}
	r = cli(t, nil, "convert", "--astype", ">i2", "--casting", "equiv", p, filepath.Join(dir, "be.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "convert", "--astype", "longdouble", p, filepath.Join(dir, "o.npy"))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `--astype "longdouble": numpy's long double`)
}
