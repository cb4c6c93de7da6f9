package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/npybridge"
)

// numpyResult is an array as numpy made it: its dtype's str and its bytes,
// or the error numpy raised.
type numpyResult struct {
	DType, Hex, Error string
	Shape             []int
}

// assertArrayFile checks that the .npy file p holds numpy's result.
func assertArrayFile(t *testing.T, p string, want numpyResult, what string) {
	t.Helper()
	got, err := npybridge.ReadOptions{MaxHeaderSize: 1 << 20}.ReadFile(p)
	if !assert.NoError(t, err, what) {
		return
	}
	assert.Equal(t, want.DType, got.DType.String(), what)
	assert.Equal(t, want.Shape, append([]int{}, got.Shape...), what)
	assert.Equal(t, want.Hex, hex.EncodeToString(got.Data), what)
}

// convert --astype converts as numpy's astype does under each --casting,
// and refuses (exit 1, one line) what numpy's astype refuses with a
// TypeError.
func TestConvertAstypeAgainstNumpy(t *testing.T) {
	cases := []struct{ from, to, casting string }{
		{"<f8", "int32", "same_kind"}, {"<f8", "int32", "unsafe"}, {"<f8", "int32", ""},
		{"<f8", "float32", "same_kind"}, {"<f8", "float32", "safe"}, {"<f8", "f2", "same_kind"},
		{"<i2", "float32", "safe"}, {"<i8", "f8", "safe"}, {"<i8", "f4", "safe"}, {"<i8", "f4", "same_kind"},
		{"|u1", "i1", "same_kind"}, {"|u1", "i2", "safe"}, {"<i4", "uint32", "same_kind"}, {"<i4", "uint32", "unsafe"},
		{"<f8", ">f8", "no"}, {"<f8", ">f8", "equiv"}, {"<f8", "<f8", "no"}, {"<f8", "float64", "no"}, {">i4", "<i4", "equiv"},
		{"<f8", "f4", "equiv"}, {"<c16", "f8", "same_kind"}, {"<c16", "f8", "unsafe"}, {"<f4", "complex64", "safe"},
		{"<c8", "c16", "safe"}, {"|b1", "f2", "safe"}, {"|b1", "u8", "no"}, {"<i8", "bool", "same_kind"},
		{"<i8", "bool", "unsafe"}, {"<f8", "?", "unsafe"}, {"<f4", "i8", "unsafe"}, {"<u8", "int64", "same_kind"},
		{"<u8", "int64", "safe"}, {"<i2", "<u2", "unsafe"}, {">f4", "float64", "safe"},
	}
	var spec []string
	for _, c := range cases {
		spec = append(spec, c.from+","+c.to+","+c.casting)
	}
	dir := t.TempDir()
	out := pypeer.Run(t, `
import json, os, warnings
import numpy as np
warnings.simplefilter("ignore")
d = sys.argv[1]
vals = [0, 1, -1, 2.5, -2.5, 3.75, 100, -100, 127.9, 255, 1000.25, -32768, 65535, 1e-3]
res = []
for i, c in enumerate(sys.argv[2:]):
    f, to, casting = c.split(",")
    with np.errstate(all="ignore"):
        src = np.array(vals).astype(f, casting="unsafe")
    if np.dtype(f).kind == "c":
        src = src + 1j * src[::-1]
    if np.dtype(f).kind in "fc" and np.dtype(to).kind in "iu":
        src = src[(np.real(src) > np.iinfo(to).min) & (np.real(src) < np.iinfo(to).max)]
    src = src.reshape(2, -1) if len(src) % 2 == 0 else src
    np.save(os.path.join(d, "src%d.npy" % i), src)
    try:
        with np.errstate(all="ignore"):
            a = src.astype(to, casting=casting or "same_kind")
        res.append({"dtype": a.dtype.str, "shape": list(a.shape), "hex": a.tobytes().hex()})
    except TypeError as e:
        res.append({"error": str(e)})
print(json.dumps(res))
`, nil, append([]string{dir}, spec...)...)
	var want []numpyResult
	require.NoError(t, json.Unmarshal(out, &want))
	refused := 0
	for i, c := range cases {
		what := fmt.Sprintf("%s -> %s casting %q", c.from, c.to, c.casting)
		src, dst := filepath.Join(dir, fmt.Sprintf("src%d.npy", i)), filepath.Join(dir, fmt.Sprintf("out%d.npy", i))
		args := []string{"convert", "--astype", c.to}
		if c.casting != "" {
			args = append(args, "--casting", c.casting)
		}
		r := cli(t, nil, append(args, src, dst)...)
		if want[i].Error != "" {
			refused++
			oneLineError(t, r, "cannot", what, " (numpy: ", want[i].Error, ")")
			assert.NoFileExists(t, dst, what)
			continue
		}
		if assert.Equal(t, 0, r.code, "%s: %s", what, r.stderr) {
			assertArrayFile(t, dst, want[i], what)
		}
	}
	assert.Greater(t, refused, 8, "the table holds refusals")
	assert.Less(t, refused, len(cases)-8, "the table holds conversions")

	// Through msgpack too: the converted array goes into ext 110.
	r := cli(t, nil, "convert", "--astype", "int16", "--casting", "unsafe", filepath.Join(dir, "src0.npy"), filepath.Join(dir, "i2.msgpack"))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "convert", filepath.Join(dir, "i2.msgpack"), filepath.Join(dir, "i2.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	back := pypeer.Run(t, `
import numpy as np
a = np.load(sys.argv[1]).astype("<i2", casting="unsafe")
b = np.load(sys.argv[2])
print(a.dtype == b.dtype and np.array_equal(a, b))
`, nil, filepath.Join(dir, "src0.npy"), filepath.Join(dir, "i2.npy"))
	assert.Equal(t, "True\n", string(back))
}

// --astype and --casting that make no sense are usage errors.
func TestConvertAstypeUsage(t *testing.T) {
	dir := t.TempDir()
	p, _ := smallNPY(t, dir, "a.npy")
	for _, args := range [][]string{
		{"--astype", "float99"},
		{"--astype", "f4", "--casting", "sometimes"},
		{"--casting", "safe"},
		{"--casting", "same_kind"},
		{"--astype", "f4", "--objects"},
	} {
		r := cli(t, nil, append(append([]string{"convert"}, args...), p, filepath.Join(dir, "o.npy"))...)
		assert.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		assert.True(t, strings.HasPrefix(r.stderr, "ndpack convert: "), r.stderr)
		assert.NoFileExists(t, filepath.Join(dir, "o.npy"))
	}
}

// --field picks a record field as numpy's a['x'] does, on convert, show,
// inspect and render: a scalar field, a subarray field, a nested record's
// field, from a file larger than one block of the streaming conversion,
// from a Fortran-order array, from an .npz member and from msgpack.
func TestFieldAgainstNumpy(t *testing.T) {
	dir := t.TempDir()
	fields := []string{"x", "id", "pos", "inner.a", "inner"}
	out := pypeer.Run(t, `
import json, os
import numpy as np
d = sys.argv[1]
inner = np.dtype([("a", ">i2"), ("b", "<f8")])
dt = np.dtype([("x", "<f4"), ("id", ">u2"), ("pos", "<f8", (3,)), ("inner", inner)])
n = 20000
a = np.zeros(n, dt)
a["x"] = np.arange(n) * 0.5
a["id"] = np.arange(n) % 65536
a["pos"] = np.arange(3 * n).reshape(n, 3) / 4
a["inner"]["a"] = np.arange(n) % 3000 - 1500
a["inner"]["b"] = np.arange(n) / 7
np.save(os.path.join(d, "r.npy"), a)
f = np.asfortranarray(a[:12].reshape(3, 4))
np.save(os.path.join(d, "fortran.npy"), f)
np.savez(os.path.join(d, "r.npz"), small=a[:5], other=np.arange(3))
res = {}
for name in sys.argv[2:]:
    parts = name.split(".")
    for src, arr in (("r", a), ("fortran", f), ("small", a[:5])):
        v = arr
        for p in parts:
            v = v[p]
        v = np.ascontiguousarray(v)
        res[src + ":" + name] = {"dtype": v.dtype.str if v.dtype.names is None else str(v.dtype), "shape": list(v.shape), "hex": v.tobytes().hex()}
res["show"] = np.array2string(a[:5]["pos"])
res["min"] = float(a["inner"]["a"].min())
print(json.dumps(res))
`, nil, append([]string{dir}, fields...)...)
	var want map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out, &want))
	result := func(key string) numpyResult {
		var r numpyResult
		require.NoError(t, json.Unmarshal(want[key], &r), key)
		return r
	}
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, f := range fields {
		for _, src := range []struct{ key, in string }{{"r", p("r.npy")}, {"fortran", p("fortran.npy")}, {"small", p("r.npz") + ":small"}} {
			w := result(src.key + ":" + f)
			dst := p("field.npy")
			r := cli(t, nil, "convert", "--field", f, src.in, dst)
			if !assert.Equal(t, 0, r.code, "%s --field %s: %s", src.in, f, r.stderr) {
				continue
			}
			if f == "inner" {
				// A nested record comes out as a record of its own.
				got, err := npybridge.ReadFile(dst)
				require.NoError(t, err)
				assert.Equal(t, w.Shape, got.Shape)
				assert.Equal(t, w.Hex, hex.EncodeToString(got.Data), "%s --field inner", src.key)
				continue
			}
			assertArrayFile(t, dst, w, src.key+" --field "+f)
		}
	}
	// Through msgpack (a record array, --allow-nonstandard) and back.
	r := cli(t, nil, "convert", "--allow-nonstandard", p("r.npz")+":small", p("small.msgpack"))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "convert", "--field", "pos", p("small.msgpack"), p("pos.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assertArrayFile(t, p("pos.npy"), result("small:pos"), "msgpack --field pos")

	// show prints the field as numpy prints it; inspect reports it.
	var show string
	require.NoError(t, json.Unmarshal(want["show"], &show))
	r = cli(t, nil, "show", "--field", "pos", p("r.npz")+":small")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, show+"\n", r.stdout)
	r = cli(t, nil, "inspect", "--json", "--field", "inner.a", p("r.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	var rep []struct {
		Arrays []struct {
			DType string
			Shape []int
			Stats struct{ Min float64 }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep), r.stdout)
	require.Len(t, rep[0].Arrays, 1)
	assert.Equal(t, ">i2", rep[0].Arrays[0].DType)
	assert.Equal(t, []int{20000}, rep[0].Arrays[0].Shape)
	var wantMin float64
	require.NoError(t, json.Unmarshal(want["min"], &wantMin))
	assert.Equal(t, wantMin, rep[0].Arrays[0].Stats.Min)

	// render draws a field: the Fortran-order (3, 4) array's x as a PNG.
	r = cli(t, nil, "render", "--field", "x", p("fortran.npy"), p("x.png"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.FileExists(t, p("x.png"))

	// A field that is not there, or an array that is not a record: one
	// line naming what there is.
	r = cli(t, nil, "convert", "--field", "nope", p("r.npy"), p("no.npy"))
	oneLineError(t, r, "no such field; the records have x, id, pos, inner", "missing field")
	assert.NoFileExists(t, p("no.npy"))
	r = cli(t, nil, "convert", "--field", "x", p("r.npz")+":other", p("no.npy"))
	oneLineError(t, r, "is not a record dtype", "plain array")
	r = cli(t, nil, "render", "--field", "nope", p("fortran.npy"), p("no.png"))
	oneLineError(t, r, "no such field", "render")
	assert.NoFileExists(t, p("no.png"))
}

// A record of 5,000 fields has a header numpy writes but (like np.load
// without max_header_size) ndpack refuses by default; --max-header-size
// reads it on every command that reads .npy and .npz.
func TestMaxHeaderSize(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	out := pypeer.Run(t, `
import json, os, warnings
import numpy as np
warnings.simplefilter("ignore")
d = sys.argv[1]
dt = np.dtype([("field_%04d" % i, "<f4") for i in range(5000)])
a = np.zeros(3, dt)
a["field_4999"] = [1.5, -2, 3]
np.save(os.path.join(d, "wide.npy"), a)
np.savez(os.path.join(d, "wide.npz"), wide=a)
np.savez(os.path.join(d, "named.npz"), **{"ReadOptions.MaxHeaderSize": a})
with open(os.path.join(d, "wide.npy"), "rb") as f:
    f.read(8)
    hlen = int.from_bytes(f.read(4), "little")
b = np.load(os.path.join(d, "wide.npy"), max_header_size=hlen)
v = b["field_4999"]
print(json.dumps({"hlen": hlen, "dtype": v.dtype.str, "shape": list(v.shape), "hex": v.tobytes().hex()}))
`, nil, dir)
	var want struct {
		numpyResult
		HLen int
	}
	require.NoError(t, json.Unmarshal(out, &want))
	require.Greater(t, want.HLen, 100_000, "numpy's header for 5,000 fields")
	limit := fmt.Sprint(want.HLen)

	// Refused by default, with the flag named.
	for _, args := range [][]string{
		{"convert", p("wide.npy"), p("o.npz")},
		{"convert", p("wide.npz"), p("o.npz")},
		{"show", p("wide.npy")},
		{"diff", p("wide.npy"), p("wide.npz")}, // 2: trouble, as cmp says
	} {
		r := cli(t, nil, args...)
		assert.Equal(t, map[bool]int{true: 2, false: 1}[args[0] == "diff"], r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "--max-header-size", args)
	}
	r := cli(t, nil, "inspect", p("wide.npy"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "--max-header-size")
	// The flag is put for the option the error names as data, and no other
	// text is touched: a member named after the option keeps its name
	// (a text replacer turned it into the flag).
	r = cli(t, nil, "convert", p("named.npz")+":ReadOptions.MaxHeaderSize", p("o.npy"))
	assert.Equal(t, "ndpack: "+p("named.npz")+`: member "ReadOptions.MaxHeaderSize": npybridge: header too large at byte 8: header of `+limit+" bytes exceeds the limit of 10000 (--max-header-size)\n", r.stderr)

	// Read with it, as numpy reads with max_header_size.
	r = cli(t, nil, "convert", "--max-header-size", limit, "--field", "field_4999", p("wide.npy"), p("f.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assertArrayFile(t, p("f.npy"), want.numpyResult, "convert .npy")
	r = cli(t, nil, "convert", "--max-header-size", limit, "--field", "field_4999", p("wide.npz")+":wide", p("g.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assertArrayFile(t, p("g.npy"), want.numpyResult, "convert .npz member")
	r = cli(t, nil, "convert", "--max-header-size", limit, p("wide.npy"), p("whole.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "show", "--max-header-size", limit, "--field", "field_4999", p("whole.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "[ 1.5 -2.   3. ]\n", r.stdout)
	r = cli(t, nil, "inspect", "--max-header-size", limit, "--field", "field_4999", p("wide.npz"))
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "<f4")
	r = cli(t, nil, "diff", "--max-header-size", limit, p("wide.npy"), p("whole.npz"))
	assert.Equal(t, 0, r.code, r.stdout+r.stderr)
	r = cli(t, nil, "render", "--max-header-size", limit, "--field", "field_4999", p("wide.npy"), p("w.svg"))
	assert.Equal(t, 0, r.code, r.stderr)

	// One byte short is refused.
	r = cli(t, nil, "convert", "--max-header-size", fmt.Sprint(want.HLen-200), p("wide.npy"), p("o.npz"))
	assert.Equal(t, 1, r.code, r.stderr)
	for _, bad := range []string{"0", "-5", "1e6", "lots"} {
		r = cli(t, nil, "convert", "--max-header-size", bad, p("wide.npy"), p("o.npz"))
		assert.Equal(t, 2, r.code, "%s: %s", bad, r.stderr)
	}
	assert.NoFileExists(t, p("o.npz"))
}
