package zarr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

func requireZarr(t *testing.T) {
	t.Helper()
	pypeer.RequireModule(t, "zarr", "python3-zarr")
	pypeer.RequireModule(t, "numcodecs", "python3-numcodecs")
}

// TestMetaAsZarrPythonWrites has zarr-python 2.13 write the .zarray of
// arrays of every kind of dtype, fill value, order and compressor ndpack
// carries: ParseMeta reads each and Marshal writes it back byte for byte.
func TestMetaAsZarrPythonWrites(t *testing.T) {
	requireZarr(t)
	out := pypeer.Run(t, `
import json, zarr, numcodecs, numpy as np
cases = [
    ('<f4', (5, 3), (2, 2), numcodecs.Zlib(level=6), 0.0, 'C'),
    ('>f8', (7,), (7,), None, np.nan, 'F'),
    ('<f2', (), (), None, -np.inf, 'C'),
    ('|b1', (4, 4), (3, 3), numcodecs.Zlib(level=1), True, 'C'),
    ('<i8', (0, 3), (1, 3), None, -(2**63), 'C'),
    ('>u2', (9,), (4,), None, 65535, 'C'),
    ('<c8', (3,), (2,), None, complex(1.5, -np.inf), 'C'),
    ('|S5', (3,), (2,), None, b'ab', 'C'),
    ('<U3', (3,), (2,), None, 'h\u00e9\U0001f600', 'C'),
    ('<M8[ns]', (3,), (2,), None, np.datetime64(17, 'ns'), 'C'),
    ('>m8[25s]', (3,), (2,), None, None, 'C'),
    ([('a', '<i4'), ('b', '>f8', (2, 3)), ('c', [('x', '|u1'), ('y', '<U2')])], (4,), (3,), None, None, 'C'),
    ('<f8', (1e6,), (1000,), numcodecs.Zlib(level=9), 1e-300, 'C'),
    ('<f8', (10,), (10,), None, 123456789012345678.0, 'C'),
]
for dt, shape, chunks, comp, fill, order in cases:
    store = {}
    shape = tuple(int(s) for s in shape)
    z = zarr.create(shape=shape, chunks=chunks, dtype=dt, compressor=comp, fill_value=fill, order=order, store=store)
    print(json.dumps(store['.zarray'].decode('ascii')))
`, nil)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 14 {
		t.Fatalf("zarr-python wrote %d lines", len(lines))
	}
	for _, line := range lines {
		var zarray string
		if err := json.Unmarshal([]byte(line), &zarray); err != nil {
			t.Fatal(err)
		}
		m, err := ParseMeta([]byte(zarray))
		if err != nil {
			t.Errorf("%s: %v", zarray, err)
			continue
		}
		back, err := m.Marshal()
		if err != nil || string(back) != zarray {
			t.Errorf("zarr-python wrote\n%s\nndpack writes it back as\n%s (%v)", zarray, back, err)
		}
	}
}

// interopArrays are the arrays the peer tests store both ways: every kind
// of dtype, chunks with edge chunks, one chunk, a 0-d and an empty array.
var interopArrays = []struct {
	name, dt string
	shape    []int
	chunks   []int
}{
	{"f4", "<f4", []int{37, 23}, []int{10, 7}},
	{"f8be", ">f8", []int{50}, []int{16}},
	{"i2cube", "<i2", []int{6, 7, 8}, []int{4, 3, 8}},
	{"u1", "|u1", []int{300, 3}, nil},
	{"b1", "|b1", []int{11, 5}, []int{4, 4}},
	{"c16", "<c16", []int{9}, []int{9}},
	{"s5", "|S5", []int{8}, []int{3}},
	{"u3", "<U3", []int{8}, []int{5}},
	{"dt", "<M8[us]", []int{12}, []int{5}},
	{"scalar", "<f8", []int{}, []int{}},
	{"empty", "<i4", []int{0, 4}, []int{1, 4}},
}

// TestZarrPythonReadsOurStores writes each array with no compressor and
// with zlib at levels 1 and 6: zarr.open(path)[...] equals the array, and
// its dtype, chunks and compressor are what was written.
func TestZarrPythonReadsOurStores(t *testing.T) {
	requireZarr(t)
	dir := t.TempDir()
	var want []string
	for i, c := range interopArrays {
		a := randomArray(t, ndarray.MustParseDType(c.dt), c.shape, uint64(i))
		if err := npybridge.WriteFile(filepath.Join(dir, c.name+".npy"), a); err != nil {
			t.Fatal(err)
		}
		for _, comp := range []*Compressor{nil, Zlib(1), Zlib(6)} {
			name := fmt.Sprintf("%s-%s.zarr", c.name, strings.ToLower(strings.NewReplacer("(", "", ")", "", "=", "").Replace(comp.String())))
			writeArray(t, Dir(filepath.Join(dir, name)), "", a, WriteOptions{Chunks: c.chunks, Compressor: comp})
			chunks := c.chunks
			if chunks == nil {
				chunks = DefaultChunks(a.DType, a.Shape)
			}
			want = append(want, fmt.Sprintf("%s %s %s %v %s", name, a.DType, formatShape(chunks), comp, "equal"))
		}
	}
	out := pypeer.Run(t, `
import os, sys, zarr, numpy as np
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    if not name.endswith('.zarr'):
        continue
    z = zarr.open(os.path.join(d, name), mode='r')
    a = np.load(os.path.join(d, name.split('-')[0] + '.npy'))
    got = z[...]
    same = got.dtype == a.dtype and got.shape == a.shape and got.tobytes() == a.tobytes()
    print(name, z.dtype.str, tuple(z.chunks), z.compressor, 'equal' if same else 'DIFFERENT')
`, nil, dir)
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	wantSorted := append([]string(nil), want...)
	sortStrings(wantSorted)
	if strings.Join(got, "\n") != strings.Join(wantSorted, "\n") {
		t.Errorf("zarr-python read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSorted, "\n"))
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestReadZarrPythonStores has zarr-python write stores (zarr.save_array,
// zarr.array with chunks and Zlib at several levels, edge chunks, chunks
// never written, Fortran order, "/" separators, groups within groups) and
// np.save what its own z[...] reads: ndpack reads every array equal to
// that, dtype and shape included.
func TestReadZarrPythonStores(t *testing.T) {
	requireZarr(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import os, sys, zarr, numcodecs, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(46)
def save_ref(name, z):
    np.save(os.path.join(d, name + '.npy'), z[...])
a = rng.standard_normal((37, 23)).astype('<f4')
zarr.save_array(os.path.join(d, 'saved.zarr'), a, compressor=None)
save_ref('saved', zarr.open(os.path.join(d, 'saved.zarr'), mode='r'))
for level in (1, 6, 9):
    z = zarr.array(a, chunks=(10, 7), compressor=numcodecs.Zlib(level=level), store=os.path.join(d, 'zlib%d.zarr' % level))
    save_ref('zlib%d' % level, z)
f = np.asfortranarray(rng.integers(-1000, 1000, (9, 8, 7)).astype('>i4'))
z = zarr.array(f, chunks=(4, 3, 5), order='F', compressor=numcodecs.Zlib(level=5), store=os.path.join(d, 'fortran.zarr'))
save_ref('fortran', z)
z = zarr.open(os.path.join(d, 'missing.zarr'), mode='w', shape=(20, 20), chunks=(6, 6), dtype='<f8', fill_value=-1.5, compressor=None)
z[2:5, 3:9] = 7.0
z[18:, 18:] = 3.0
save_ref('missing', z)
z = zarr.open(os.path.join(d, 'nan.zarr'), mode='w', shape=(5,), chunks=(2,), dtype='<f4', fill_value=np.nan, compressor=numcodecs.Zlib(level=1))
z[0] = 1
save_ref('nan', z)
store = zarr.NestedDirectoryStore(os.path.join(d, 'nested.zarr'))
z = zarr.array(np.arange(60, dtype='<u2').reshape(6, 10), chunks=(4, 4), store=store, compressor=None)
save_ref('nested', z)
rec = np.zeros(7, dtype=[('x', '<f4'), ('n', '>i2', (2,)), ('s', '|S3')])
rec['x'] = np.arange(7); rec['n'][:, 1] = 5; rec['s'] = b'ab'
z = zarr.array(rec, chunks=(3,), compressor=numcodecs.Zlib(level=1), store=os.path.join(d, 'records.zarr'))
save_ref('records', z)
z = zarr.array(np.array(['x', 'yy', '\u00e9\u00e9\u00e9'], dtype='<U3'), chunks=(2,), compressor=None, fill_value='', store=os.path.join(d, 'unicode.zarr'))
save_ref('unicode', z)
g = zarr.open_group(os.path.join(d, 'group.zarr'), mode='w')
g.array('b', np.arange(5, dtype='<i8'), chunks=(2,), compressor=None)
g.array('a', np.eye(3, dtype='|b1'), chunks=(2, 2), compressor=numcodecs.Zlib(level=2))
sub = g.create_group('sub')
sub.array('c', np.float64(2.5), compressor=None)
sub.create_group('empty')
for k in ('b', 'a', 'sub/c'):
    save_ref('group-' + k.replace('/', '-'), g[k])
`, nil, dir)
	for _, name := range []string{"saved", "zlib1", "zlib6", "zlib9", "fortran", "missing", "nan", "records", "unicode"} {
		arrays, err := ReadOptions{}.Open(Dir(filepath.Join(dir, name+".zarr")), "")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		checkRead(t, name, arrays[0], filepath.Join(dir, name+".npy"))
	}
	nested, err := os.ReadDir(filepath.Join(dir, "nested.zarr"))
	if err != nil || len(nested) != 3 { // .zarray, 0/, 1/
		t.Errorf("zarr-python's nested store holds %d entries: %v", len(nested), err)
	}
	if arrays, err := (ReadOptions{}).Open(Dir(filepath.Join(dir, "nested.zarr")), ""); err != nil {
		t.Errorf("nested: %v", err)
	} else {
		checkRead(t, "nested", arrays[0], filepath.Join(dir, "nested.npy"))
	}
	arrays, err := ReadOptions{}.Open(Dir(filepath.Join(dir, "group.zarr")), "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range arrays {
		names = append(names, a.Name)
		checkRead(t, "group "+a.Name, a, filepath.Join(dir, "group-"+strings.ReplaceAll(a.Name, "/", "-")+".npy"))
	}
	if strings.Join(names, " ") != "a b sub/c" {
		t.Errorf("the group's arrays: %q", names)
	}
}

// checkRead reads a whole, and streamed, and compares both with the .npy
// zarr-python's reading was saved as.
func checkRead(t *testing.T, name string, a *Array, npy string) {
	t.Helper()
	want, err := npybridge.ReadOptions{NativeOrder: false}.ReadFile(npy)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.Read()
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if got.DType != want.DType || !equalShape(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
		t.Errorf("%s: read %s %v, zarr-python %s %v", name, got.DType, got.Shape, want.DType, want.Shape)
	}
}

func equalShape(a, b []int) bool { return formatShape(a) == formatShape(b) }
