package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Object arrays are read only with --objects, and then as numpy reads
// them: inspect lists their element types and first values, convert
// writes them back as np.save does or as plain msgpack nested by shape;
// msgpack-numpy's object arrays read the same; a pickle that would run
// code is refused naming what it asked for, and nothing runs.
func TestObjectArrays(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	pypeer.Run(t, pypeer.Helpers+`
import os, pickle, msgpack_numpy
d, marker = sys.argv[1], sys.argv[2]
a = np.array([["a", 1], [None, 2.5]], dtype=object)
np.save(os.path.join(d, "obj.npy"), a)
np.savez(os.path.join(d, "mix.npz"), o=np.array(["x", b"y", [1, (2, 3)]], dtype=object), n=np.arange(3))
open(os.path.join(d, "obj.msgpack"), "wb").write(msgpack.packb(np.array(["m", 7], dtype=object), default=msgpack_numpy.encode))
class Evil:
    def __reduce__(self):
        return (os.system, ("touch " + marker,))
e = np.empty(1, dtype=object); e[0] = Evil()
np.save(os.path.join(d, "evil.npy"), e)
`, nil, dir, marker)

	r := cli(t, nil, "inspect", filepath.Join(dir, "obj.npy"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "object array (pickle), which is read, as data and running nothing, only when allowed (--objects)")

	r = cli(t, nil, "inspect", "--objects", filepath.Join(dir, "obj.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  shape     (2, 2): 4 elements\n  types     NoneType 1, float 1, int 1, str 1\n  first     ['a', 1, None, 2.5]\n")
	r = cli(t, nil, "inspect", "--objects", "--json", filepath.Join(dir, "mix.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	var rep []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
	o := rep[0]["arrays"].([]any)[0].(map[string]any)
	assert.Equal(t, "object", o["kind"])
	assert.Equal(t, map[string]any{"types": map[string]any{"str": 1.0, "bytes": 1.0, "list": 1.0}, "first": []any{"'x'", "b'y'", "[1, (2, 3)]"}}, o["objects"])

	outs := map[string][]string{
		"obj.npy":     {"o1.msgpack", "o1.npy"},
		"mix.npz":     {"o2.msgpack", "o2.npz"},
		"obj.msgpack": {"o3.msgpack", "o3.npy"},
	}
	for in, targets := range outs {
		for _, out := range targets {
			args := []string{"convert", "--objects", filepath.Join(dir, in), filepath.Join(dir, out)}
			if strings.HasSuffix(out, ".msgpack") {
				args = append(args, "--to", "msgpack-numpy") // for numpy to read the numeric member
			}
			r := cli(t, nil, args...)
			require.Equal(t, 0, r.code, "%s -> %s: %s", in, out, r.stderr)
		}
	}
	got := pypeer.Run(t, pypeer.Helpers+`
import os, msgpack_numpy
d = sys.argv[1]
def mp(name):
    return msgpack.unpackb(open(os.path.join(d, name), "rb").read(), object_hook=msgpack_numpy.decode)
res = [mp("o1.msgpack"), np.load(os.path.join(d, "o1.npy"), allow_pickle=True).tolist()]
m = mp("o2.msgpack")
res.append([m["o"], m["n"].tolist()])
z = np.load(os.path.join(d, "o2.npz"), allow_pickle=True)
res.append([z["o"].tolist(), z["n"].tolist()])
res.append([mp("o3.msgpack"), np.load(os.path.join(d, "o3.npy"), allow_pickle=True).tolist()])
print(repr(res))
`, nil, dir)
	assert.Equal(t, "[[['a', 1], [None, 2.5]], [['a', 1], [None, 2.5]], [['x', b'y', [1, [2, 3]]], [0, 1, 2]], [['x', b'y', [1, (2, 3)]], [0, 1, 2]], [['m', 7], ['m', 7]]]\n", string(got))

	for _, args := range [][]string{
		{"inspect", "--objects", filepath.Join(dir, "evil.npy")},
		{"convert", "--objects", filepath.Join(dir, "evil.npy"), filepath.Join(dir, "evil.msgpack")},
	} {
		r := cli(t, nil, args...)
		assert.Equal(t, 1, r.code, "%v", args)
		assert.Contains(t, r.stderr, "posix.system")
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
		assert.NotContains(t, r.stdout, "posix.system", "the failure is said once, on standard error")
	}
	_, err := os.Stat(marker)
	assert.True(t, os.IsNotExist(err), "the pickle's code ran")
	_, err = os.Stat(filepath.Join(dir, "evil.msgpack"))
	assert.True(t, os.IsNotExist(err), "no output for a refused pickle")
}
