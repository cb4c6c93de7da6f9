package npybridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// recordCasesPy makes the record arrays of the interop tests, the same ones
// on every run (seeded), as a list of (name, array, fortran).
const recordCasesPy = `
import numpy as np, io, json, sys, base64, warnings
warnings.simplefilter('ignore')

def deep(n):
    dt = np.dtype('<i2')
    for i in range(n):
        dt = np.dtype([('l%d' % i, dt), ('pad%d' % i, '|u1')])
    return dt

DTYPES = {
    'simple': np.dtype([('x', '<f4'), ('y', '<i8')]),
    'nested': np.dtype([('id', '<u4'), ('pos', [('x', '<f8'), ('y', '<f8')]), ('ok', '?')]),
    'padded': np.dtype({'names': ['a', 'b'], 'formats': ['<i2', '<f8'], 'offsets': [0, 8], 'itemsize': 24}),
    'gap_first': np.dtype({'names': ['a'], 'formats': ['<u2'], 'offsets': [6], 'itemsize': 8}),
    'aligned': np.dtype([('a', 'i1'), ('b', '<f8'), ('c', '<i2')], align=True),
    'aligned_nested': np.dtype([('a', 'i1'), ('n', np.dtype([('x', 'i1'), ('y', '<i4')], align=True))], align=True),
    'bigendian': np.dtype([('a', '>f8'), ('b', '<i4'), ('c', '>u2'), ('d', '>c8'), ('e', '>U2')]),
    'all_big': np.dtype([('a', '>f8'), ('b', '>i4'), ('n', [('c', '>u2')], (2,))]),
    'subarray': np.dtype([('pos', '<f4', (3,)), ('m', '>i2', (2, 2)), ('one', '<i4', (1,)), ('none', '<i4', (0,))]),
    'nested_subarray': np.dtype([('a', [('b', '<i4', (2,)), ('c', [('d', '>f2', (3,))], (2,))], (2,))]),
    'subarray_of_subarray': np.dtype([('a', ('<i4', (2,)), (3,))]),
    'titles': np.dtype([(('Title A', 'a'), '<i4'), (('tb', 'b'), '|S3'), ('c', '<f2')]),
    'titles_padded': np.dtype({'names': ['a', 'b'], 'formats': ['<i4', 'u1'], 'offsets': [0, 6], 'titles': ['ta', None], 'itemsize': 8}),
    'latin1_names': np.dtype([('\xe9t\xe9', '<f4'), ('na\xefve', '<i2')]),
    'utf8_names': np.dtype([('\u6e29\u5ea6', '<f4'), ('x', '<i2'), ('\U0001f600', 'u1')]),
    'escaped_names': np.dtype([("it's", 'u1'), ('a"b\'', 'u1'), ('tab\there\\\\', 'u1'), ('\x00\x7f\xa0\xad', 'u1'), ('nl\n', 'u1')]),
    'kinds': np.dtype([('s', 'S5'), ('u', '<U3'), ('v', 'V4'), ('t', '<M8[ns]'), ('d', '>m8[10s]'), ('b', '?'),
                       ('h', '<f2'), ('q', '<c16'), ('g', '<f16'), ('z', '|S0'), ('i1', 'i1'), ('u8', '>u8'), ('g2', '<M8')]),
    'empty_record': np.dtype([]),
    'padding_only': np.dtype({'names': [], 'formats': [], 'itemsize': 8}),
    'unnamed_field': np.dtype([('', '<i4'), ('b', 'u1')]),
    'deep': deep(12),
    'wide': np.dtype([('field_number_%05d' % i, '<f8' if i % 3 else '>i2') for i in range(3500)]),
}

SHAPES = [(5,), (0,), (), (2, 3)]

def cases():
    rng = np.random.default_rng(21)
    out = []
    for name, dt in DTYPES.items():
        shapes = [(4,)] if name == 'wide' else SHAPES
        for shape in shapes:
            n = int(np.prod(shape, dtype=np.int64))
            raw = rng.bytes(n * dt.itemsize)
            a = np.frombuffer(raw, dtype=dt).reshape(shape).copy() if dt.itemsize else np.zeros(shape, dt)
            out.append((name + str(shape), a, False))
        a = np.frombuffer(rng.bytes(12 * dt.itemsize), dtype=dt).reshape(3, 4).copy() if dt.itemsize else np.zeros((3, 4), dt)
        out.append((name + ' fortran', np.asfortranarray(a), True))
    return out

def saved(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()

def b64(b):
    return base64.b64encode(b).decode()
`

type recordCase struct {
	Name    string `json:"name"`
	NPY     []byte `json:"npy"`     // np.save of the array as numpy holds it
	CNPY    []byte `json:"cnpy"`    // the C-order file np.save writes of the same items
	Str     string `json:"str"`     // str(np.load(file).dtype)
	Zeroed  []byte `json:"zeroed"`  // the C-order data with zeros for padding
	Little  []byte `json:"little"`  // Zeroed with every field little-endian (newbyteorder('<'))
	Fortran bool   `json:"fortran"` // NPY is in Fortran order
}

func numpyRecordCases(t *testing.T) []recordCase {
	t.Helper()
	out := pypeer.Run(t, recordCasesPy+`
res = []
for name, a, fortran in cases():
    npy = saved(a)
    back = np.load(io.BytesIO(npy), max_header_size=1 << 20)
    cnpy = npy
    if fortran:
        # np.save of a C copy would not do: numpy copies records field by
        # field, leaving padding bytes uninitialised. The file's own
        # items, padding included, in C order instead.
        hdr = saved(np.zeros(a.shape, a.dtype))
        hdr = hdr[:len(hdr) - a.nbytes]
        raw = npy[len(npy) - a.nbytes:]
        if a.dtype.itemsize:
            raw = np.ascontiguousarray(np.frombuffer(raw, 'V%d' % a.dtype.itemsize).reshape(a.shape[::-1]).T).tobytes()
        cnpy = hdr + raw
    z = np.zeros(a.shape, a.dtype)
    z[...] = a
    little = np.zeros(a.shape, a.dtype.newbyteorder('<'))
    little[...] = z
    res.append({'name': name, 'npy': b64(npy), 'cnpy': b64(cnpy), 'str': str(back.dtype),
                'zeroed': b64(z.tobytes()), 'little': b64(little.tobytes()), 'fortran': fortran})
json.dump(res, sys.stdout)
`, nil)
	var cases []recordCase
	require.NoError(t, json.Unmarshal(out, &cases))
	require.Greater(t, len(cases), 100)
	return cases
}

// wideOptions reads the 'wide' case, whose header (version 2.0) is over
// numpy's default limit, as np.load(max_header_size=...) would.
var wideOptions = ReadOptions{MaxHeaderSize: 1 << 20}

// TestRecordsNumpyWritesWeReadAndWrite: every record file np.save writes
// reads with the dtype numpy reads (by its str), and Write gives back
// np.save's bytes exactly: header text, version, padding, data.
func TestRecordsNumpyWritesWeReadAndWrite(t *testing.T) {
	cases := numpyRecordCases(t)
	versions := map[byte]int{}
	for _, c := range cases {
		h, err := wideOptions.ReadHeader(bytes.NewReader(c.NPY))
		require.NoError(t, err, c.Name)
		versions[c.NPY[6]]++
		assert.True(t, h.DType.IsRecord(), "%s: a record must never become a plain %s", c.Name, h.DType)
		assert.Equal(t, c.Fortran && len(h.Shape) > 1, h.FortranOrder, c.Name)
		if !strings.HasPrefix(c.Name, "wide") {
			assert.Equal(t, c.Str, h.DType.String(), "%s: String is numpy's str(dtype)", c.Name)
		}

		a, err := wideOptions.Read(bytes.NewReader(c.NPY))
		require.NoError(t, err, c.Name)
		var buf bytes.Buffer
		require.NoError(t, Write(&buf, a), c.Name)
		if !assert.Equal(t, c.CNPY, buf.Bytes(), "%s: Write is np.save, byte for byte", c.Name) {
			end := min(200, len(c.CNPY), buf.Len())
			t.Logf("numpy:  %q\nndpack: %q", c.CNPY[:end], buf.Bytes()[:end])
		}
		hdr := AppendHeader(nil, a.DType, a.Shape)
		assert.Equal(t, c.CNPY[:min(len(hdr), len(c.CNPY))], hdr, "%s: AppendHeader", c.Name)
		zeroed, err := ndarray.New(a.DType, a.Shape, c.Zeroed)
		require.NoError(t, err, c.Name)
		little, err := zeroed.ToOrder('<')
		require.NoError(t, err, c.Name)
		assert.Equal(t, c.Little, little.Data, "%s: ToOrder('<') moves the bytes numpy's astype moves", c.Name)

		// The dtype survives its own descr.
		items, err := a.DType.Descr()
		require.NoError(t, err, c.Name)
		back, err := ndarray.RecordFromDescr(items)
		require.NoError(t, err, c.Name)
		assert.True(t, back == a.DType, c.Name)
	}
	t.Logf("%d cases; format versions %v", len(cases), versions)
	assert.Positive(t, versions[2], "the wide record needs version 2.0")
	assert.Positive(t, versions[3], "non-latin-1 names need version 3.0")
}

// goRecord is a record built in Go, not read from numpy: nested, padded,
// big-endian, titled, with subarrays and a latin-1 name.
func goRecord(t *testing.T) ndarray.DType {
	inner, err := ndarray.NewRecord([]ndarray.Field{
		{Name: "x", DType: ndarray.MustParseDType(">i2")},
		{Name: "s", DType: ndarray.MustParseDType("|S3"), Offset: 2},
	}, 6)
	require.NoError(t, err)
	dt, err := ndarray.NewRecord([]ndarray.Field{
		{Name: "id", Title: "identifier", DType: ndarray.MustParseDType("<u4")},
		{Name: "pos", DType: ndarray.DTypeOf[float32](), Shape: []int{3}, Offset: 8},
		{Name: "n", DType: inner, Shape: []int{2}, Offset: 20},
		{Name: "t\u00e9", DType: ndarray.MustParseDType(">f8"), Offset: 32},
	}, 48)
	require.NoError(t, err)
	return dt
}

// TestRecordsWeWriteNumpyReads: a record array written by Write, by the npz
// writer, by an Appender row by row and by CreateMapped is what numpy loads:
// the same dtype (by its str) and the same bytes; numpy's np.save of its
// reading is byte for byte what Write wrote; OpenMapped and the npz
// reader give the array back.
func TestRecordsWeWriteNumpyReads(t *testing.T) {
	dt := goRecord(t)
	dir := t.TempDir()
	a, err := ndarray.Zeros(dt, 4)
	require.NoError(t, err)
	for i := range a.Data {
		a.Data[i] = byte(i*7 + 1)
	}

	files := map[string]string{}
	path := func(name string) string { p := filepath.Join(dir, name); files[name] = p; return p }
	require.NoError(t, WriteFile(path("write.npy"), a))

	w, err := AppendOptions{}.OpenAppend(context.Background(), path("append.npy"), dt)
	require.NoError(t, err)
	for i := 0; i < 4; i++ {
		row, err := ndarray.New(dt, []int{1}, a.Data[i*dt.ItemSize:(i+1)*dt.ItemSize])
		require.NoError(t, err)
		require.NoError(t, w.Append(row))
	}
	require.NoError(t, w.Close())

	m, err := MapOptions{RawByteOrder: true}.CreateMapped(path("mapped.npy"), dt, 4)
	require.NoError(t, err)
	copy(m.Array.Data, a.Data)
	require.NoError(t, m.Close())

	var zbuf bytes.Buffer
	zw := NewNPZWriter(&zbuf, true)
	require.NoError(t, zw.WriteArray("rec", a))
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(path("archive.npz"), zbuf.Bytes(), 0o644))

	var want bytes.Buffer
	require.NoError(t, Write(&want, a))
	in, err := json.Marshal(files)
	require.NoError(t, err)
	out := pypeer.Run(t, `
import sys, json, io, base64
import numpy as np
res = {}
for name, path in json.load(sys.stdin).items():
    a = np.load(path)
    if name.endswith('.npz'):
        a = a['rec']
    f = io.BytesIO()
    np.save(f, a)
    res[name] = {'str': str(a.dtype), 'data': base64.b64encode(a.tobytes()).decode(),
                 'save': base64.b64encode(f.getvalue()).decode()}
json.dump(res, sys.stdout)
`, in)
	var got map[string]struct {
		Str  string `json:"str"`
		Data []byte `json:"data"`
		Save []byte `json:"save"`
	}
	require.NoError(t, json.Unmarshal(out, &got))
	require.Len(t, got, len(files))
	for name, g := range got {
		assert.Equal(t, dt.String(), g.Str, name)
		assert.Equal(t, a.Data, g.Data, name)
		assert.Equal(t, want.Bytes(), g.Save, "%s: np.save of numpy's reading is Write's bytes", name)
	}

	mm, err := ReadOptions{}.OpenMapped(files["mapped.npy"])
	require.NoError(t, err)
	assert.True(t, mm.Array.Equal(a))
	require.NoError(t, mm.Close())
	z, err := OpenNPZ(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
	require.NoError(t, err)
	back, err := z.Read("rec")
	require.NoError(t, err)
	assert.True(t, back.Equal(a))

	// Appending to an existing record file takes the same record only.
	w, err = AppendOptions{}.OpenAppend(context.Background(), files["append.npy"], dt)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	_, err = AppendOptions{}.OpenAppend(context.Background(), files["append.npy"], dt.WithOrder('<'))
	assert.ErrorIs(t, err, ErrInvalidArray)
}

// What np.save refuses is refused before a byte is written: overlapping
// fields, an array of a subarray dtype.
func TestRecordsRefusedForWriting(t *testing.T) {
	i4 := ndarray.MustParseDType("<i4")
	over, err := ndarray.NewRecord([]ndarray.Field{{Name: "a", DType: i4}, {Name: "b", DType: i4, Offset: 2}}, 0)
	require.NoError(t, err)
	sub, err := ndarray.NewSubarray(i4, []int{2})
	require.NoError(t, err)
	for _, dt := range []ndarray.DType{over, sub} {
		a, err := ndarray.Zeros(dt, 2)
		require.NoError(t, err)
		var buf bytes.Buffer
		err = Write(&buf, a)
		require.ErrorIs(t, err, ErrInvalidArray, dt.String())
		assert.Zero(t, buf.Len())
		assert.ErrorIs(t, WriteFrom(&buf, dt, []int{2}, bytes.NewReader(a.Data)), ErrInvalidArray)
		_, err = AppendOptions{}.OpenAppend(context.Background(), filepath.Join(t.TempDir(), "x.npy"), dt)
		assert.ErrorIs(t, err, ErrInvalidArray)
		_, err = MapOptions{}.CreateMapped(filepath.Join(t.TempDir(), "x.npy"), dt, 2)
		assert.ErrorIs(t, err, ErrInvalidArray)
		zw := NewNPZWriter(&buf, false)
		assert.ErrorIs(t, zw.WriteArray("a", a), ErrInvalidArray)
		// The header AppendHeader cannot refuse is one np.load and Read
		// refuse, not a plain void.
		h := AppendHeader(nil, dt, []int{2})
		assert.NotContains(t, string(h), "|V")
		_, err = ReadOptions{}.ReadHeader(bytes.NewReader(h))
		assert.ErrorIs(t, err, ndarray.ErrMalformed)
	}
	_, err = over.Descr()
	assert.Contains(t, fmt.Sprint(err), "overlapping")
}
