package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// inspect prints the first three records of a record array one a line,
// each as numpy prints that element of a[:3] (np.array2string with one
// element a line): fields fitted over the rows shown, strings quoted,
// subarrays in brackets, nested records in parentheses; a row is cut at
// 200 characters (in --json too), and "..." follows when there are more records. It
// prints the first strings of S and U arrays as numpy does ('text',
// b'bytes'), each cut at 40 characters and the line at 200. --json has
// the rows, and the strings whole.
func TestInspectFirstRowsAgainstNumpy(t *testing.T) {
	dir := t.TempDir()
	out := pypeer.Run(t, `
import json, os
import numpy as np
d = sys.argv[1]
files = {}
dt = np.dtype([("x", "<f4"), ("n", "<i2"), ("s", "S3"), ("u", "<U4"), ("sub", "<i4", (2,)),
               ("in", [("a", "u1"), ("b", "<f8")])])
a = np.zeros(5, dt)
a["x"] = [1.5, 2, 3, 4, 5]
a["n"] = [1, -2, 3, 4, 5]
a["s"] = [b"ab", b"c'", b"", b"d", b"e"]
a["u"] = ["h\u00e9", "x\ny", "yz", "", ""]
a["sub"] = [[1, 2], [3, 40], [5, 6], [7, 8], [9, 10]]
a["in"]["a"] = [1, 2, 3, 4, 5]
a["in"]["b"] = [0.5, 0.25, 1e-5, 0, 0]
files["rec.npy"] = a
dt = np.dtype([("b", "?"), ("c", "<c8"), ("m", ">f8", (2, 2)), ("one", [("z", "<i8")]), ("big", "<u2", (1200,))])
b = np.zeros((2, 2), dt)
b["b"] = [[True, False], [True, True]]
b["c"] = [[1 + 2j, -0.5j], [3, 4]]
b["m"] = np.arange(16).reshape(2, 2, 2, 2) / 3
b["one"]["z"] = [[7, -8], [9, 10]]
b["big"] = np.arange(1200)
files["rec2.npy"] = b
files["recf.npy"] = np.asfortranarray(b)
files["one.npy"] = np.array([(1.25,), (-3,)], [("v", "<f8")])
files["s.npy"] = np.array([b"ab", b'c"d', b"it's", b"x\x00y", b"", b"\xff\t"], "S4")
files["u.npy"] = np.array(["h\u00e9llo", "w\u00f6rld", "a\nb", "q" * 60, "\u2603"] * 3, ">U60")
files["u1.npy"] = np.array(["a", "bc", "d'e"])
want = {}
for name, arr in files.items():
    np.save(os.path.join(d, name), arr)
    flat = arr.ravel()
    n = 3 if arr.dtype.names else 8
    lines = np.array2string(flat[:n], separator=", " if arr.dtype.names else " ", max_line_width=1).split("\n")
    items = [l.strip(" []").rstrip(",") if arr.dtype.names else l.strip(" []") for l in lines]
    json_first = items if arr.dtype.names else [x.decode("utf-8", "replace") if isinstance(x, bytes) else str(x) for x in flat[:n].tolist()]
    want[name] = {"items": items, "json": json_first, "more": bool(flat.size > n)}
print(json.dumps(want))
`, nil, dir)
	var want map[string]struct {
		Items []string
		JSON  []string
		More  bool
	}
	require.NoError(t, json.Unmarshal(out, &want))
	cut := func(s string, n int) string {
		if r := []rune(s); len(r) > n {
			return string(r[:n-3]) + "..."
		}
		return s
	}
	for name, w := range want {
		path := filepath.Join(dir, name)
		r := cli(t, nil, "inspect", path)
		require.Equal(t, 0, r.code, r.stderr)
		var exp string
		if name == "s.npy" || strings.HasPrefix(name, "u") {
			var texts []string
			used := 0
			more := w.More
			for _, it := range w.Items {
				it = cut(it, stringWidth)
				if used += len([]rune(it)) + 1; used > firstWidth && len(texts) > 0 {
					more = true
					break
				}
				texts = append(texts, it)
			}
			exp = "  first     [" + strings.Join(texts, " ")
			if more {
				exp += " ..."
			}
			exp += "]\n"
		} else {
			label := "  first     "
			for _, it := range w.Items {
				exp += label + cut(it, firstWidth) + "\n"
				label = "            "
			}
			if w.More {
				exp += label + "...\n"
			}
		}
		assert.Contains(t, r.stdout, exp, name)

		rep, r := inspectJSON(t, nil, path)
		require.Equal(t, 0, r.code, r.stderr)
		var first []string
		for _, v := range rep[0]["arrays"].([]any)[0].(map[string]any)["first"].([]any) {
			first = append(first, v.(string))
		}
		if strings.HasPrefix(name, "rec") || name == "one.npy" {
			for i, s := range w.JSON {
				w.JSON[i] = cut(s, firstWidth)
			}
		}
		assert.Equal(t, w.JSON, first, name)
	}
	// What the comparison above stands on, written out once.
	r := cli(t, nil, "inspect", filepath.Join(dir, "rec.npy"))
	assert.Contains(t, r.stdout, "  first     (1.5,  1, b'ab', 'h\u00e9', [ 1,  2], (1, 5.0e-01))\n"+
		"            (2. , -2, b\"c'\", 'x\\ny', [ 3, 40], (2, 2.5e-01))\n"+
		"            (3. ,  3, b'', 'yz', [ 5,  6], (3, 1.0e-05))\n            ...\n")
	r = cli(t, nil, "inspect", filepath.Join(dir, "s.npy"))
	assert.Contains(t, r.stdout, "  first     [b'ab' b'c\"d' b\"it's\" b'x\\x00y' b'' b'\\xff\\t']\n")
}
