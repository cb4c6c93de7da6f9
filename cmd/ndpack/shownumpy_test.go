package main

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// showCorpus is Python that saves, into sys.argv[1], the arrays of records,
// nested records, subarrays, strings, datetimes and timedeltas that show
// is held to, and prints what numpy makes of each: print(a) (at numpy's
// options, at precision 3 through np.array2string, and with no summary),
// json.dumps of a.tolist() with the values JSON cannot hold mapped as
// show --json maps them (records as objects of their fields in order,
// datetimes as np.datetime_as_string, timedeltas as their count, NaN as
// "NaN", complex as [re, im], bytes as UTF-8 text), and the CSV Python's
// csv module writes of the same values.
const showCorpus = `
import numpy as np, os, json, csv, io
d = sys.argv[1]
rng = np.random.default_rng(43)
A = {}
r = np.zeros(3, dtype=[('x', '<f4'), ('id', '<u2')]); r['x'] = [0.5, 1.5, 2.5]; r['id'] = [7, 8, 9]
A["rec"] = r
n = np.zeros(2, dtype=[('pos', [('x', '<i4'), ('y', '<i4')]), ('v', '<f8', (2,)), ('s', 'U3'), ('b', 'S2'),
                       ('t', 'M8[D]'), ('d', 'm8[s]'), ('c', 'c16'), ('ok', '?')])
n['pos']['x'] = [1, 3]; n['pos']['y'] = [2, 4]; n['v'] = [[1.5, 2], [3, 4e10]]; n['s'] = ['ab', 'c\n']
n['b'] = [b'x', b'\xff']; n['t'] = np.array(['2020-01-01', 'NaT'], dtype='M8[D]'); n['d'] = [5, -3]
n['c'] = [1 + 2j, 3]; n['ok'] = [True, False]
A["rec_all"] = n
A["rec_all_0d"] = np.array(n[1], dtype=n.dtype)
nest = np.zeros(2, dtype=[('pos', [('x', '<f8'), ('y', '<f8')]), ('id', '<i8')])
nest['pos']['x'] = [1, 3]; nest['pos']['y'] = [2, 4.25]; nest['id'] = [10, -200]
A["recnest"] = nest
deep = np.zeros(2, dtype=[('a', [('b', [('c', '<i2', (2,)), ('d', '<f4')]), ('e', 'U4')]), ('f', '<u1')])
deep['a']['b']['c'] = [[1, -2], [300, 4]]; deep['a']['b']['d'] = [0.1, np.nan]; deep['a']['e'] = ['xy', "it's"]; deep['f'] = [255, 0]
A["recdeep"] = deep
sub = np.zeros(3, dtype=[('v', '<f8', (3,)), ('m', '<i2', (2, 2)), ('one', '<f4', (1,))])
sub['v'] = rng.standard_normal((3, 3)); sub['m'] = np.arange(12).reshape(3, 2, 2) * 7; sub['one'] = [[0.5], [1e-9], [2]]
A["recsub"] = sub
A["recsubdtype"] = np.array([([[1, 2], [3, 4], [5, 6]],), ([[7, 8], [9, 10], [11, 12]],)], dtype=[('a', ('<i4', (2,)), (3,))])
recsubrec = np.zeros(2, dtype=[('p', [('x', '<i1'), ('y', '<f8')], (2,)), ('q', '?')])
recsubrec['p']['x'] = [[1, 2], [3, 4]]; recsubrec['p']['y'] = [[0.5, 1], [1.5, 1e20]]
A["recsubrec"] = recsubrec
al = np.zeros(3, dtype=np.dtype([('a', 'u1'), ('b', '<f8'), ('c', '<i2')], align=True))
al.view('u1')[...] = 0xAB
al['a'] = [1, 2, 3]; al['b'] = [-0.0, 0.0, 1.25]; al['c'] = [-1, 0, 1]
A["recaligned"] = al
big = np.zeros(2500, dtype=[('i', '<i4'), ('f', '<f8'), ('s', 'U2')])
big['i'] = np.arange(2500); big['f'] = np.arange(2500) / 3; big['s'] = ['a', 'bb', 'c', 'dd', 'e'] * 500
A["recbig"] = big
A["rec2d"] = np.array([[(1, 2.5), (3, 4.5)], [(5, 6.5), (7, 8.5)], [(9, 1e-7), (0, 0)]], dtype=[('i', '>i2'), ('f', '>f8')])
A["rec0d"] = np.array((1.0, 2), dtype='f8,i4')
A["rectitles"] = np.array([(1.5, 2)], dtype=[(('Temperature', 't'), '<f2'), ('n', '<u2')])
A["recnofields"] = np.zeros(3, dtype=np.dtype({'names': [], 'formats': [], 'itemsize': 4}))
A["recone"] = np.array([(1,), (2,)], dtype=[('only', '<i8')])
A["recwide"] = np.array([tuple(range(30))] * 2, dtype=[('field%d' % i, '<i4') for i in range(30)])
A["dt_D"] = np.array(['2020-01-01', '2024-02-29'], dtype='M8[D]')
A["dt_nat"] = np.array(['2020-01-01T10:00', 'NaT'], dtype='M8[m]')
A["dt_allnat"] = np.array(['NaT', 'NaT'], dtype='M8[D]')
A["dt_s"] = np.array([0, 86399, -1, 10**10], dtype='M8[s]')
A["dt_ms"] = np.array([1, -1, 1234567890123], dtype='M8[ms]')
A["dt_us"] = np.array([1, -1, 2**50], dtype='M8[us]')
A["dt_ns"] = np.array([5, -5, 2**62, -2**62], dtype='M8[ns]')
A["dt_ps"] = np.array([5, -5, 2**60], dtype='M8[ps]')
A["dt_fs"] = np.array([5, -5, 2**62, -2**62], dtype='M8[fs]')
A["dt_as"] = np.array([5, -5, 2**62, -2**62], dtype='M8[as]')
A["dt_h"] = np.array([5, -5, 10**6], dtype='M8[h]')
A["dt_M"] = np.array([0, -1, 25, -30000], dtype='M8[M]')
A["dt_Y"] = np.array([0, -1970, -1971, 8030, 30000], dtype='M8[Y]')
A["dt_W"] = np.array([3, -3], dtype='M8[W]')
A["dt_10s"] = np.array([5, -7], dtype='M8[10s]')
A["dt_3M"] = np.array([3, 'NaT'], dtype='M8[3M]')
A["dt_far"] = np.array([-10**6, 10**7, -3000 * 366], dtype='M8[D]')
A["dt_be"] = np.array(['1999-12-31', '2000-03-01'], dtype='>M8[D]')
A["dt_2d"] = np.array([['2020-01-01', 'NaT'], ['1969-07-20', '2038-01-19']], dtype='M8[D]')
A["dt_0d"] = np.array('2024-02-29T12:30', dtype='M8[m]')
A["dt_0d_nat"] = np.array('NaT', dtype='M8[s]')
A["td_s"] = np.array([1, 2, 3], dtype='m8[s]')
A["td_nat"] = np.array([1, 2, 'NaT'], dtype='m8[s]')
A["td_ns"] = np.array([-1, 2**62], dtype='m8[ns]')
A["td_10s"] = np.array([5, -7], dtype='m8[10s]')
A["td_generic"] = np.array([5, -2], dtype='i8').view('m8')
A["td_0d"] = np.array(5, dtype='m8[s]')
A["td_0d_10s"] = np.array(5, dtype='m8[10s]')
A["td_0d_generic"] = np.array(-5, dtype='m8')
A["td_0d_nat"] = np.array('NaT', dtype='m8[D]')
A["U_quotes"] = np.array(["ab", "it's", 'x"y', "", "back\\slash"])
A["U_wide"] = np.array(["\u00e9t\u00e9 %d" % i for i in range(40)])
A["U_0d"] = np.array("it's")
A["S_bytes"] = np.array([b"ab", b"\x00c", b"\xffz", b"q'"])
A["S_0d"] = np.array(b"ab")
A["V_void"] = np.array([b"\x00\x01\x7f", b"\xff'a"], dtype='V3')
for name, a in A.items():
    np.save(os.path.join(d, name + ".npy"), a)

def jv(x):
    if isinstance(x, np.ndarray):
        return [jv(e) for e in x]
    if isinstance(x, np.void):
        if x.dtype.names is not None:
            return {k: jv(x[k]) for k in x.dtype.names}
        return "0x" + x.tobytes().hex()
    if isinstance(x, np.datetime64):
        return "NaT" if np.isnat(x) else np.datetime_as_string(x)
    if isinstance(x, np.timedelta64):
        return "NaT" if np.isnat(x) else int(x.astype('i8'))
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        if np.isnan(x):
            return "NaN"
        if np.isinf(x):
            return "+Inf" if x > 0 else "-Inf"
        return float(str(x))
    if isinstance(x, np.complexfloating):
        return [jv(x.real), jv(x.imag)]
    if isinstance(x, np.bytes_):
        return x.decode('utf-8', 'replace')
    if isinstance(x, np.str_):
        return str(x)
    raise TypeError(type(x))

def esc(s):
    return "".join(c if c in "\n\t\r" or c.isprintable() else repr(c)[1:-1] for c in s)

def cv(x):
    if isinstance(x, np.datetime64):
        return "NaT" if np.isnat(x) else np.datetime_as_string(x)
    if isinstance(x, np.timedelta64):
        return "NaT" if np.isnat(x) else str(int(x.astype('i8')))
    if isinstance(x, np.bytes_):
        return esc(x.decode('utf-8', 'backslashreplace'))
    if isinstance(x, np.str_):
        return esc(str(x))
    return str(x)

def leaves(dt, prefix):
    out = []
    for k in dt.names:
        fdt = dt.fields[k][0]
        shape, base = fdt.shape, fdt.base
        while base.shape != ():
            shape, base = shape + base.shape, base.base
        for idx in np.ndindex(*shape):
            name = prefix + k + "".join("[%d]" % i for i in idx)
            if base.names is not None:
                out += [(name + "." + n, (k, idx) + p) for n, p in leaves(base, "")]
            else:
                out.append((name, (k, idx)))
    return out

def pick(x, path):
    while path:
        k, idx = path[0], path[1]
        x = x[k]
        if idx:
            x = x[idx]
        path = path[2:]
    return x

res = {}
for name in A:
    a = np.load(os.path.join(d, name + ".npy"))  # as ndpack reads it (an aligned dtype loads unaligned)
    e = {"print": str(a) + "\n"}
    np.set_printoptions(precision=3)
    e["p3"] = (np.array2string(a) if a.ndim else str(a)) + "\n"
    np.set_printoptions(precision=8, threshold=sys.maxsize)
    e["full"] = str(a) + "\n"
    np.set_printoptions(threshold=1000)
    if a.dtype.kind != 'V' or a.dtype.names:
        e["json"] = json.dumps({"dtype": a.dtype.str if a.dtype.names is None else str(a.dtype), "shape": list(a.shape), "values": jv(a[()] if a.ndim == 0 else a)})
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    if a.dtype.names and a.ndim <= 1:
        cols = leaves(a.dtype, "")
        w.writerow([esc(c[0]) for c in cols])
        for rec in np.atleast_1d(a):
            w.writerow([cv(pick(rec, list(c[1]))) for c in cols])
        e["csv"] = out.getvalue()
    elif a.dtype.names is None and a.dtype.kind != 'V' and a.ndim <= 2:
        for row in (np.atleast_1d(a) if a.ndim < 2 else a):
            w.writerow([cv(v) for v in np.atleast_1d(row)])
        e["csv"] = out.getvalue()
    res[name] = e
print(json.dumps(res))
`

// show prints records, nested records, subarrays, strings, datetimes and
// timedeltas as numpy prints them (print(a), np.array2string at precision
// 3, no summary with --full), --json gives the values of
// json.dumps(a.tolist()) with records as objects of their fields in their
// order, and --csv what Python's csv module writes of those values, a
// column per leaf field under a row of their names.
func TestShowRecordsDatesAsNumpy(t *testing.T) {
	dir := t.TempDir()
	out := pypeer.Run(t, showCorpus, nil, dir)
	var want map[string]map[string]string
	require.NoError(t, json.Unmarshal(out, &want))
	require.Equal(t, 52, len(want), "arrays in the corpus")
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	agree, total := 0, 0
	for _, name := range names {
		w := want[name]
		f := filepath.Join(dir, name+".npy")
		for _, form := range []struct {
			key  string
			args []string
		}{{"print", nil}, {"p3", []string{"--precision", "3"}}, {"full", []string{"--full"}}, {"json", []string{"--json"}}, {"csv", []string{"--csv"}}} {
			expect, ok := w[form.key]
			if !ok {
				continue
			}
			total++
			r := cli(t, nil, append(append([]string{"show"}, form.args...), f)...)
			if !assert.Equal(t, 0, r.code, "%s %v: %s", name, form.args, r.stderr) {
				continue
			}
			got := r.stdout
			if form.key == "json" {
				expect, got = canonicalJSON(t, expect), canonicalJSON(t, got)
			}
			if assert.Equal(t, expect, got, "show %v %s", form.args, name) {
				agree++
			}
		}
	}
	t.Logf("show agrees with numpy on %d of %d (array, form) pairs", agree, total)
}

// canonicalJSON rewrites a JSON text with its objects' members in their
// order and numbers as Go's shortest float text (an integer literal as it
// is), so that texts that hold the same values, written by Python and by
// Go, compare equal.
func canonicalJSON(t *testing.T, text string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var b bytes.Buffer
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return b.String()
		}
		require.NoError(t, err, text)
		switch v := tok.(type) {
		case json.Delim:
			b.WriteString(v.String())
		case json.Number:
			if _, err := strconv.ParseInt(v.String(), 10, 64); err == nil || !strings.ContainsAny(v.String(), ".eE") {
				b.WriteString(v.String())
			} else {
				f, err := v.Float64()
				require.NoError(t, err)
				b.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
			}
		default:
			j, _ := json.Marshal(v)
			b.Write(j)
		}
		b.WriteByte(' ')
	}
}

// A record array's CSV quotes what RFC 4180 quotes: a newline inside a
// string is kept, inside quotes, not written as the two characters \n.
func TestShowCSVQuotesNewlines(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os
np.save(os.path.join(sys.argv[1], "s.npy"), np.array(["one\ntwo", 'say "hi"', "a,b", "back\\slash"]))
`, nil, dir)
	r := cli(t, nil, "show", "--csv", filepath.Join(dir, "s.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, "\"one\ntwo\"\n\"say \"\"hi\"\"\"\n\"a,b\"\nback\\slash\n", r.stdout)
}
