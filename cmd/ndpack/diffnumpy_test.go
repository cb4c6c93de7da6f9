package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// diffCorpus is Python that saves pairs of arrays into sys.argv[1] (NAME_a.npy,
// NAME_b.npy) and prints numpy's verdict on each pair under each of the
// options diff takes: np.array_equal (equal_nan with --equal-nan), or
// np.isclose with tolerances, over a plain array's values or over each
// leaf field of two records (numpy compares records only for equality,
// and field by field by value; np.isclose refuses them, so each field is
// held to it), timedelta64 by np.isclose's own timedelta path, datetime64
// for equality only (np.isclose refuses them). For each pair and option
// it also gives the number of items that differ and the first.
const diffCorpus = `
import numpy as np, os, json, math
d = sys.argv[1]
rng = np.random.default_rng(7)
a = rng.standard_normal((40, 25))
P = {}
def pair(name, x, y):
    P[name] = (np.asarray(x), np.asarray(y))
pair("same", a, a.copy())
pair("one", a, np.where(np.arange(a.size).reshape(a.shape) == 57, a + 0.25, a))
pair("tiny", a, a * (1 + 1e-7))
pair("big", a, a * 1.3)
n = a.copy(); n[3, 4] = np.nan
pair("nan", n, n.copy())
pair("nan_vs_num", n, a)
pair("zero", np.zeros(5), -np.zeros(5))
pair("endian", a, a.astype('>f8'))
pair("f4_f8", a.astype('<f4'), a)
pair("f8_f4", a, a.astype('<f4'))
pair("shape", a, a.reshape(25, 40))
pair("int64", np.array([2**62 + 1, 5], dtype='<i8'), np.array([2**62, 5], dtype='<i8'))
pair("i8_u8", np.array([2**62 + 1, 5], dtype='<i8'), np.array([2**62, 5], dtype='<u8'))
pair("i8_f8", np.array([2**53 + 1, -3], dtype='<i8'), np.array([2**53, -3], dtype='<f8'))
pair("u1_i2", np.arange(10, dtype='u1'), np.arange(10, dtype='<i2'))
pair("i4_f4", np.array([100, 200, -7], dtype='<i4'), np.array([100.0005, 200, -7], dtype='<f4'))
pair("i4_f8_close", np.array([1000, 2000], dtype='<i4'), np.array([1000.0001, 2000.5], dtype='<f8'))
pair("bool_int", np.array([True, False, True]), np.array([1, 0, 1], dtype='<i8'))
pair("bool_bool", np.array([True, False, True]), np.array([True, True, True]))
c = (a[0] + 1j * a[1]).astype('<c16')
pair("complex", c, c * (1 + 1e-7))
pair("complex_nan", np.array([complex(np.nan, 1), 1 + 1j]), np.array([complex(np.nan, 2), 1 + 1j]))
pair("c8_c16", c.astype('<c8'), c)
pair("c16_f8", np.array([1 + 0j, 2 + 1e-9j]), np.array([1.0, 2.0]))
h = (rng.standard_normal(50) * 10).astype('<f2')
pair("f2", h, (h.astype('f4') * (1 + 2e-4)).astype('<f2'))
pair("f2_f4", h, h.astype('<f4') + np.float32(1e-3))
pair("inf", np.array([np.inf, -np.inf, 1.0]), np.array([np.inf, -np.inf, 1.0]))
pair("inf_sign", np.array([np.inf, 1.0]), np.array([-np.inf, 1.0]))
pair("inf_big", np.array([np.inf, 1.0]), np.array([1e308, 1.0]))
f4 = rng.standard_normal(200).astype('<f4')
pair("f4_edge", f4, (f4 * np.float32(1 + 1e-5)).astype('<f4'))
pair("f4_overflow", np.array([3e38, 1], dtype='<f4'), np.array([-3e38, 1], dtype='<f4'))
pair("u8_big", np.array([2**64 - 1, 3], dtype='<u8'), np.array([2**64 - 2, 3], dtype='<u8'))
pair("empty_mixed", np.zeros((0, 3), dtype='<f4'), np.zeros((0, 3), dtype='<i8'))
pair("zero_d", np.array(1.5), np.array(1.5 + 1e-9))
pair("str", np.array(["ab", "cd"]), np.array(["ab", "ce"]))
pair("str_widths", np.array(["ab", "cd"]), np.array(["ab", "cd"], dtype='<U7'))
pair("str_bytes", np.array(["ab"]), np.array([b"ab"]))
pair("bytes", np.array([b"ab", b"x"]), np.array([b"ab", b"x"], dtype='S5'))
dt = np.array(['2020-01-01', 'NaT', '1999-12-31'], dtype='M8[D]')
pair("dt_same", dt, dt.copy())
pair("dt_differ", dt, dt + np.array([0, 0, 1], dtype='m8[D]'))
pair("dt_nat_only", np.array(['NaT'], dtype='M8[s]'), np.array(['NaT'], dtype='M8[s]'))
td = np.array([10, 'NaT', 1000, -5], dtype='m8[s]')
pair("td_same", td, td.copy())
pair("td_close", td, td + np.array([1, 0, 3, 0], dtype='m8[s]'))
pair("td_far", td, td * 2)
pair("td_nat_vs_num", np.array([1, 'NaT'], dtype='m8[ms]'), np.array([1, 2], dtype='m8[ms]'))
R = [('x', '<f8'), ('id', '<i4')]
pair("rec_negzero", np.array([(-0.0, 1), (2.0, 3)], dtype=R), np.array([(0.0, 1), (2.0, 3)], dtype=R))
al = np.dtype([('a', 'u1'), ('b', '<f8')], align=True)
p1 = np.zeros(3, dtype=al); p1.view('u1')[...] = 0xAB; p1['a'] = [1, 2, 3]; p1['b'] = [0.5, 1.5, 2.5]
p2 = np.zeros(3, dtype=al); p2.view('u1')[...] = 0x11; p2['a'] = [1, 2, 3]; p2['b'] = [0.5, 1.5, 2.5]
pair("rec_padding", p1, p2)
pair("rec_aligned_packed", p1, np.array(p1.tolist(), dtype=[('a', 'u1'), ('b', '<f8')]))
pair("rec_nan", np.array([(np.nan, 1), (2.0, 3)], dtype=R), np.array([(np.nan, 1), (2.0, 3)], dtype=R))
pair("rec_nan_vs_num", np.array([(np.nan, 1)], dtype=R), np.array([(1.0, 1)], dtype=R))
pair("rec_close", np.array([(1.0, 1), (2.0, 3)], dtype=R), np.array([(1.0 + 1e-7, 1), (2.0, 3)], dtype=R))
pair("rec_far", np.array([(1.0, 1), (2.0, 3)], dtype=R), np.array([(1.5, 1), (2.0, 4)], dtype=R))
pair("rec_inf", np.array([(np.inf, 1)], dtype=R), np.array([(np.inf, 1)], dtype=R))
pair("rec_inf_sign", np.array([(np.inf, 1)], dtype=R), np.array([(-np.inf, 1)], dtype=R))
S = [('s', 'U4'), ('v', '<f4')]
pair("rec_str", np.array([("ab", 1.0), ("cd", 2.0)], dtype=S), np.array([("ab", 1.0), ("ce", 2.0)], dtype=S))
N = [('pos', [('x', '<f8'), ('y', '<f8')]), ('id', '<i8')]
pair("rec_nested", np.array([((1, 2), 3), ((4, 5), 6)], dtype=N), np.array([((1, 2), 3), ((4, 5.5), 6)], dtype=N))
V = [('v', '<f8', (3,)), ('k', '<u1')]
pair("rec_sub", np.array([([1, 2, 3], 1), ([4, 5, 6], 2)], dtype=V), np.array([([1, 2, 3 + 1e-9], 1), ([4, 5, 6], 2)], dtype=V))
SR = [('p', [('x', '<i1'), ('y', '<f8')], (2,)), ('q', '?')]
sr = np.array([([(1, 0.5), (2, 1.5)], True), ([(3, 2.5), (4, 3.5)], False)], dtype=SR)
sr2 = sr.copy(); sr2['p']['y'][1, 1] = 3.5 + 1e-7
pair("rec_subrec", sr, sr2)
pair("rec_dtypes", np.array([(1.0, 1)], dtype=[('x', '<f4'), ('id', '<i8')]), np.array([(1.0, 1)], dtype=[('x', '<f8'), ('id', '<i2')]))
pair("rec_dtypes_close", np.array([(0.1, 1)], dtype=[('x', '<f4'), ('id', '<i8')]), np.array([(0.1, 1)], dtype=[('x', '<f8'), ('id', '<i2')]))
pair("rec_names", np.array([(1.0, 1)], dtype=R), np.array([(1.0, 1)], dtype=[('y', '<f8'), ('id', '<i4')]))
pair("rec_vs_plain", np.array([(1.0, 1)], dtype=R), np.array([1.0]))
T = [('t', 'M8[s]'), ('d', 'm8[ms]')]
pair("rec_nat", np.array([('NaT', 5)], dtype=T), np.array([('NaT', 5)], dtype=T))
pair("rec_td", np.array([('2020-01-01', 5)], dtype=T), np.array([('2020-01-01', 6)], dtype=T))
pair("rec_td_nat", np.array([('2020-01-01', 'NaT')], dtype=T), np.array([('2020-01-01', 'NaT')], dtype=T))
pair("rec_0d", np.array((1.0, 2), dtype=R), np.array((1.0, 3), dtype=R))
pair("rec_big", np.zeros(3000, dtype=R), np.where(np.arange(3000) % 1000 == 999, np.array((1.0, 0), dtype=R), np.zeros(1, dtype=R)).astype(R))

options = [[], ["--equal-nan"], ["--rtol", "1e-05", "--atol", "1e-08"], ["--rtol", "1e-09", "--atol", "0"],
           ["--rtol", "0", "--atol", "0.001"], ["--rtol", "0.5", "--atol", "0"], ["--atol", "inf"],
           ["--rtol", "1e-06"], ["--atol", "1", "--equal-nan"], ["--rtol", "0", "--atol", "0"]]

def opt(o):
    tol = "--rtol" in o or "--atol" in o
    rtol = float(o[o.index("--rtol") + 1]) if "--rtol" in o else 1e-5
    atol = float(o[o.index("--atol") + 1]) if "--atol" in o else 1e-8
    return tol, rtol, atol, "--equal-nan" in o

def leaf_equal(x, y, tol, rtol, atol, eqnan):
    # Elementwise: True where numpy calls the values equal (or close).
    kx, ky = x.dtype.kind, y.dtype.kind
    if kx in 'biufc' and ky in 'biufc':
        if tol:
            return np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=eqnan)
        eq = x == y
        if eqnan and kx in 'fc' and ky in 'fc':
            eq |= np.isnan(x) & np.isnan(y)
        return eq
    if kx in 'mM' and kx == ky and x.dtype.str[1:] == y.dtype.str[1:]:
        nx, ny = np.isnat(x), np.isnat(y)
        if tol and kx == 'm':
            if math.isinf(atol):
                eq = ~(nx | ny)
            else:
                eq = np.isclose(x, y, rtol=rtol, atol=int(math.floor(atol)))
        else:
            eq = x == y
        if eqnan:
            eq |= nx & ny
        return eq
    if kx in 'SU' and kx == ky:
        return x == y
    return None

def leaf_paths(dt, prefix=()):
    out = []
    for k in dt.names:
        f = dt.fields[k][0]
        base = f
        while base.shape != ():
            base = base.base
        if base.names is not None:
            out += leaf_paths(base, prefix + (k,))
        else:
            out.append(prefix + (k,))
    return out

def shape_of(dt, path):
    shape = ()
    for k in path:
        f = dt.fields[k][0]
        shape += f.shape
        dt = f.base
        while dt.shape != ():
            shape += dt.shape
            dt = dt.base
    return shape

def item_equal(x, y, o):
    # Per item (record or element): True where every value is equal.
    if x.shape != y.shape or (x.dtype.names is None) != (y.dtype.names is None):
        return None
    if x.dtype.names is None:
        return leaf_equal(x, y, *o)
    px, py = leaf_paths(x.dtype), leaf_paths(y.dtype)
    if px != py or any(shape_of(x.dtype, p) != shape_of(y.dtype, p) for p in px):
        return None
    eq = np.ones(x.shape, dtype=bool)
    for p in px:
        lx, ly = x, y
        for k in p:
            lx, ly = lx[k], ly[k]
        e = leaf_equal(lx, ly, *o)
        if e is None:
            return None
        eq &= e.reshape(x.shape + (-1,)).all(axis=-1) if e.ndim > x.ndim else e
    return eq

res = {"options": options, "cases": {}}
for name, (x, y) in P.items():
    np.save(os.path.join(d, name + "_a.npy"), x)
    np.save(os.path.join(d, name + "_b.npy"), y)
    x, y = np.load(os.path.join(d, name + "_a.npy")), np.load(os.path.join(d, name + "_b.npy"))
    rows = []
    for o in options:
        eq = item_equal(x, y, opt(o))
        if eq is None:
            rows.append({"equal": False})
            continue
        eq = np.asarray(eq)
        v = {"equal": bool(eq.all())}
        if not v["equal"]:
            v["count"] = int((~eq).sum())
            first = np.argwhere(~eq)[0] if eq.ndim else []
            v["first"] = "(" + ", ".join(str(int(i)) for i in first) + ("," if len(first) == 1 else "") + ")"
        rows.append(v)
    res["cases"][name] = rows
print(json.dumps(res))
`

// diff answers as numpy answers for every pair of a corpus and every
// option it takes: np.array_equal, np.array_equal(equal_nan=True) and
// np.isclose at several tolerances (--atol inf among them), over plain
// arrays of every numeric dtype and of mixed dtypes (compared by value
// after numpy's promotion), strings, datetime64 and timedelta64 with
// NaT, and records compared field by field by value (padding and
// offsets never; -0.0 equal to 0.0; NaN only with --equal-nan; the
// tolerances per field). Where they differ, the report gives numpy's
// count of items that differ and the first.
func TestDiffAsNumpyEveryOption(t *testing.T) {
	dir := t.TempDir()
	out := pypeer.Run(t, diffCorpus, nil, dir)
	var want struct {
		Options [][]string
		Cases   map[string][]struct {
			Equal bool
			Count int
			First string
		}
	}
	require.NoError(t, json.Unmarshal(out, &want))
	require.Len(t, want.Options, 10)
	require.Equal(t, 66, len(want.Cases), "pairs in the corpus")
	names := make([]string, 0, len(want.Cases))
	for name := range want.Cases {
		names = append(names, name)
	}
	sort.Strings(names)
	agree, total := 0, 0
	for _, name := range names {
		a, b := filepath.Join(dir, name+"_a.npy"), filepath.Join(dir, name+"_b.npy")
		for i, opts := range want.Options {
			v := want.Cases[name][i]
			total++
			r := cli(t, nil, append(append([]string{"diff"}, opts...), a, b)...)
			code := map[bool]int{true: 0, false: 1}[v.Equal]
			ok := assert.Equal(t, code, r.code, "diff %s %s: numpy says equal=%v\nstdout %s\nstderr %s", strings.Join(opts, " "), name, v.Equal, r.stdout, r.stderr)
			if code == 0 {
				ok = assert.Empty(t, r.stdout, name) && ok
			}
			if v.Count > 0 {
				ok = assert.Contains(t, r.stdout, fmt.Sprintf(" differ: %d of ", v.Count), "%s %v", name, opts) && ok
				ok = assert.Contains(t, r.stdout, "  first at "+v.First, "%s %v", name, opts) && ok
			}
			if ok {
				agree++
			}
		}
	}
	t.Logf("diff agrees with numpy on %d of %d (pair, option) combinations", agree, total)
}

// The report of two records names the field that differs, first and per
// field; of two dtypes, how numpy's promotion compared them.
func TestDiffReportsFieldsAndDTypes(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os
d = sys.argv[1]
N = [('pos', [('x', '<f8'), ('y', '<f8')]), ('v', '<f4', (3,)), ('name', 'U3')]
a = np.array([((1, 2), [1, 2, 3], 'ab'), ((4, 5), [4, 5, 6], 'cd')], dtype=N)
b = a.copy(); b['pos']['y'][1] = 5.5; b['v'][1, 2] = 7; b['name'][1] = 'ce'
np.save(os.path.join(d, "a.npy"), a); np.save(os.path.join(d, "b.npy"), b)
SR = [('p', [('x', '<i1'), ('y', '<f8')], (2,)), ('q', '?')]
sr = np.array([([(1, 0.5), (2, 1.5)], True), ([(3, 2.5), (4, 3.5)], False)], dtype=SR)
sr2 = sr.copy(); sr2['p']['y'][1, 1] = 3.6
np.save(os.path.join(d, "sr.npy"), sr); np.save(os.path.join(d, "sr2.npy"), sr2)
np.save(os.path.join(d, "f8.npy"), np.array([1.0, 2.0, 3.0]))
np.save(os.path.join(d, "f4.npy"), np.array([1.0, 2.0, 3.5], dtype='<f4'))
`, nil, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	r := cli(t, nil, "diff", p("a.npy"), p("b.npy"))
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Equal(t, p("a.npy")+" and "+p("b.npy")+" differ: 1 of 2 records (50%)\n"+
		"  first at (1,), field pos.y: 5.0 vs 5.5\n"+
		"  field pos.y: 1 record, max absolute difference 0.5, max relative difference 0.0909091\n"+
		"  field v: 1 record, max absolute difference 1, max relative difference 0.142857\n"+
		"  field name: 1 record\n", r.stdout)
	r = cli(t, nil, "diff", p("sr.npy"), p("sr2.npy"))
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Equal(t, p("sr.npy")+" and "+p("sr2.npy")+" differ: 1 of 2 records (50%)\n"+
		"  first at (1,), field p[1].y: 3.5 vs 3.6\n"+
		"  field p.y: 1 record, max absolute difference 0.1, max relative difference 0.0277778\n", r.stdout)
	r = cli(t, nil, "diff", p("f8.npy"), p("f4.npy"))
	assert.Equal(t, 1, r.code, r.stderr)
	assert.Equal(t, p("f8.npy")+" and "+p("f4.npy")+" differ: 1 of 3 elements (33.3%)\n"+
		"  first at (2,): 3.0 vs 3.5\n"+
		"  dtypes <f8 and <f4 compared as <f8 (numpy's promotion)\n"+
		"  max absolute difference 0.5, max relative difference 0.142857\n", r.stdout)
	r = cli(t, nil, "diff", "--atol", "0.5", p("f8.npy"), p("f4.npy"))
	assert.Equal(t, 0, r.code, "np.allclose(f8, f4, atol=0.5): %s", r.stdout)
}
