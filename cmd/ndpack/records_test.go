package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Record arrays move between .npy, .npz, ext 110 and msgpack-numpy with
// every field kept: each way back gives np.save's bytes, and numpy reads
// what ndpack writes as the same record array. OpenPI, which cannot carry
// records, is an error and no file.
func TestConvertRecordsEveryWay(t *testing.T) {
	dir := t.TempDir()
	out := pypeer.Run(t, `
import json, os
import numpy as np
d = sys.argv[1]
cases = {
    "plain": np.dtype([("x", "<f4"), ("y", "<i8")]),
    "aligned": np.dtype([("x", "u1"), ("pos", ">f8", (3,)), ("inner", [("a", "<i4"), ("b", "S3")])], align=True),
    "titles": np.dtype([(("Temperature", "t"), "<f2"), ("n", "<u2", (2, 2))]),
}
res = {}
for name, dt in cases.items():
    a = np.zeros((2, 3), dt)
    a.view("u1")[...] = np.arange(a.nbytes, dtype=np.uint8).reshape(a.view("u1").shape) % 251
    np.save(os.path.join(d, name + ".npy"), a)
    np.save(os.path.join(d, name + "_f.npy"), np.asfortranarray(a))
    res[name] = str(np.load(os.path.join(d, name + ".npy")).dtype)
print(json.dumps(res))
`, nil, dir)
	var strs map[string]string
	require.NoError(t, json.Unmarshal(out, &strs))
	// Fortran-order sources come back in C order: numpy compares those
	// by value (the padding bytes of numpy's own transposed copy are not
	// defined), the others byte for byte.
	var fortranPairs [][2]string
	for name := range strs {
		for _, src := range []string{name + ".npy", name + "_f.npy"} {
			in := filepath.Join(dir, src)
			for i, via := range [][]string{
				{"ext.msgpack", "--allow-nonstandard"},
				{"mn.msgpack", "--to", "msgpack-numpy"},
				{"gr00t.msgpack", "--to", "gr00t"},
				{"z.npz"},
			} {
				mid := filepath.Join(dir, "mid-"+via[0])
				args := append([]string{"convert"}, via[1:]...)
				r := cli(t, nil, append(args, in, mid)...)
				require.Equal(t, 0, r.code, "%s -> %s: %s", src, via[0], r.stderr)
				back := filepath.Join(dir, fmt.Sprintf("back-%d-%s", i, src))
				r = cli(t, nil, "convert", mid, back)
				require.Equal(t, 0, r.code, "%s -> %s -> npy: %s", src, via[0], r.stderr)
				if strings.HasSuffix(src, "_f.npy") {
					fortranPairs = append(fortranPairs, [2]string{in, back})
					continue
				}
				assert.Equal(t, readFile(t, in), readFile(t, back), "%s through %s", src, via[0])
			}
		}
		r := cli(t, nil, "convert", "--to", "openpi", filepath.Join(dir, name+".npy"), filepath.Join(dir, "pi.msgpack"))
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "OpenPI cannot carry the record dtype")
		_, err := os.Stat(filepath.Join(dir, "pi.msgpack"))
		assert.True(t, os.IsNotExist(err), "no output for a refused conversion")
		r = cli(t, nil, "convert", filepath.Join(dir, name+".npy"), filepath.Join(dir, "std.msgpack"))
		assert.Equal(t, 1, r.code, "records go into ext 110 only with --allow-nonstandard")
		assert.Contains(t, r.stderr, "--allow-nonstandard")
		r = cli(t, nil, "inspect", "--json", filepath.Join(dir, name+".npy"))
		require.Equal(t, 0, r.code, r.stderr)
		assert.Contains(t, r.stdout, `"dtype": "`+strs[name]+`"`, "inspect shows numpy's str of the dtype")
	}
	pairs, _ := json.Marshal(fortranPairs)
	verdict := pypeer.Run(t, `
import json
import numpy as np
pairs = json.load(sys.stdin)
for src, back in pairs:
    a, b = np.load(src), np.load(back)
    assert b.flags.c_contiguous and a.dtype == b.dtype and (a == b).all(), (src, back)
print("equal", len(pairs))
`, pairs)
	assert.Equal(t, fmt.Sprintf("equal %d\n", len(fortranPairs)), string(verdict))
}

// Descrs numpy refuses are refused by every command: exit 1, one line
// starting "ndpack:", no output file.
func TestBadDescrs(t *testing.T) {
	dir := t.TempDir()
	deep := strings.Repeat("[('a', ", 40) + "'<u2'" + strings.Repeat(")]", 40)
	for name, c := range map[string]struct{ descr, msg string }{
		"twice":    {"[('a', '<u2'), ('a', '<u2')]", "name already used"},
		"short":    {"[('a',)]", "not (name, format)"},
		"negative": {"[('a', '<u2', (-1,))]", "dimension smaller than zero"},
		"object":   {"[('a', '<u2'), ('o', '|O')]", "object array (pickle)"},
		"deep":     {deep, "deep"},
		"unknown":  {"[('a', '<q3')]", "q3"},
	} {
		text := "{'descr': " + c.descr + ", 'fortran_order': False, 'shape': (1,), }"
		text += strings.Repeat(" ", 63-(10+len(text))%64) + "\n"
		b := append([]byte(npybridge.Magic), 1, 0)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
		b = append(append(b, text...), make([]byte, 64)...)
		in := filepath.Join(dir, name+".npy")
		require.NoError(t, os.WriteFile(in, b, 0o644))
		for _, args := range [][]string{
			{"inspect", in},
			{"convert", in, filepath.Join(dir, name+"-out.msgpack"), "--allow-nonstandard"},
			{"convert", in, filepath.Join(dir, name+"-out.npz")},
			{"convert", "--to", "msgpack-numpy", in, filepath.Join(dir, name+"-out.mpk")},
		} {
			r := cli(t, nil, args...)
			assert.Equal(t, 1, r.code, "%s %v: %s", name, args, r.stderr)
			assert.True(t, strings.HasPrefix(r.stderr, "ndpack: "), r.stderr)
			assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
			assert.Contains(t, r.stderr, c.msg, name)
		}
		matches, _ := filepath.Glob(filepath.Join(dir, name+"-out*"))
		assert.Empty(t, matches, "no output file for %s", name)
	}
}
