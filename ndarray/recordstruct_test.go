package ndarray

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"
	"unsafe"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type point struct {
	ID int32   `npy:"id"`
	X  float64 `npy:"x"`
	Y  float32 `npy:"y"`
}

func pointAt(i int) point {
	return point{ID: int32(7*i - 3), X: float64(i)*0.5 - 2.25, Y: float32(i)*0.25 + 1}
}

type inner struct {
	P [3]float32 `npy:"p"`
	Q int8       `npy:"q"`
}

type outer struct {
	A     uint16 `npy:"a"`
	Inner inner  `npy:"inner"`
	M     [2][2]int64
	OK    bool      `npy:"ok"`
	C     complex64 `npy:"c"`
}

func outerAt(i int) outer {
	o := outer{A: uint16(3*i + 1), OK: i%2 == 0, C: complex(float32(i), -0.5*float32(i))}
	for k := range o.Inner.P {
		o.Inner.P[k] = float32(i) + float32(k)*0.5
	}
	o.Inner.Q = int8(i - 2)
	for r := range 2 {
		for c := range 2 {
			o.M[r][c] = int64(i*4+r*2+c) * 1000000007
		}
	}
	return o
}

type deepX struct {
	X uint16 `npy:"x"`
}

type deepR struct {
	X int16 `npy:"x"`
	Y uint8 `npy:"y"`
}

type deep struct {
	J [3][2]int32   `npy:"j"`
	I [2][1]deepX   `npy:"i"`
	R [100]deepR    `npy:"r"`
	N [5]byte       `npy:"name"`
	S [2]float64    `npy:"-"`
	s int64         // unexported: skipped
	E struct{}      `npy:"e"`
	Z [0]int32      `npy:"z"`
	T *int          `npy:"-"`
	L []byte        `npy:"-"`
	W float64       `npy:"w"`
	K [1]complex128 `npy:"k"`
}

func deepAt(i int) deep {
	var d deep
	for r := range 3 {
		for c := range 2 {
			d.J[r][c] = int32(-(i*6 + r*2 + c))
		}
	}
	d.I[0][0].X, d.I[1][0].X = uint16(i), uint16(60000+i)
	for k := range d.R {
		d.R[k] = deepR{X: int16(i*100 - k), Y: uint8(k + i)}
	}
	copy(d.N[:], fmt.Sprintf("n%d", i))
	d.W = float64(i) / 8
	d.K[0] = complex(float64(i), 1e300)
	return d
}

const nRecords = 5

// recordCases has numpy build the record arrays that the Go values above
// describe, with the same formulas, in every layout, and describe them:
// dtype.descr (as JSON), itemsize, the raw bytes, and for some fields the
// view numpy's a[path] gives.
const recordCases = `
import json, sys
n = int(sys.argv[1])

def point_dt(order, align, names=('id', 'x', 'y')):
    t = {'id': order + 'i4', 'x': order + 'f8', 'y': order + 'f4'}
    return np.dtype([(k, t[k]) for k in names], align=align)

def fill_point(a):
    for i in range(n):
        a['id'][i] = 7 * i - 3
        a['x'][i] = i * 0.5 - 2.25
        a['y'][i] = i * 0.25 + 1

def outer_dt(o, align):
    inner = np.dtype([('p', o + 'f4', (3,)), ('q', 'i1')], align=align)
    return np.dtype([('a', o + 'u2'), ('inner', inner), ('M', o + 'i8', (2, 2)), ('ok', '?'), ('c', o + 'c8')], align=align)

def fill_outer(a):
    for i in range(n):
        a['a'][i] = 3 * i + 1
        for k in range(3):
            a['inner']['p'][i, k] = i + k * 0.5
        a['inner']['q'][i] = i - 2
        for r in range(2):
            for c in range(2):
                a['M'][i, r, c] = (i * 4 + r * 2 + c) * 1000000007
        a['ok'][i] = i % 2 == 0
        a['c'][i] = complex(i, -0.5 * i)

def deep_dt(o, align):
    return np.dtype([('j', (o + 'i4', (2,)), (3,)),
                     ('i', np.dtype([('x', o + 'u2')], align=align), (2, 1)),
                     ('r', np.dtype([('x', o + 'i2'), ('y', 'u1')], align=align), (100,)),
                     ('name', 'S5'), ('e', np.dtype([])), ('z', o + 'i4', (0,)),
                     ('w', o + 'f8'), ('k', o + 'c16', (1,))], align=align)

def fill_deep(a):
    for i in range(n):
        for r in range(3):
            for c in range(2):
                a['j'][i, r, c] = -(i * 6 + r * 2 + c)
        a['i']['x'][i, 0, 0] = i
        a['i']['x'][i, 1, 0] = 60000 + i
        for k in range(100):
            a['r']['x'][i, k] = i * 100 - k
            a['r']['y'][i, k] = k + i
        a['name'][i] = ('n%d' % i).encode()
        a['w'][i] = i / 8
        a['k'][i, 0] = complex(i, 1e300)

views = {'outer': ['a', 'inner', 'inner.p', 'inner.q', 'M', 'ok', 'c'],
         'deep': ['j', 'i', 'i.x', 'r.x', 'r.y', 'name', 'z', 'k']}
sets = {'outer': ('inner.q', 'i1'), 'deep': ('i.x', 'u2')}

# numpy leaves the bytes between fields of a copy (ascontiguousarray, copy)
# uninitialized; clean zeroes every byte that no field covers, so that
# bytes compare.
def field_mask(dt):
    if dt.names is None:
        if dt.subdtype is None:
            return np.ones(dt.itemsize, bool)
        base, shape = dt.subdtype
        return np.tile(field_mask(base), int(np.prod(shape)))
    m = np.zeros(dt.itemsize, bool)
    for name in dt.names:
        f, off = dt.fields[name][:2]
        m[off:off + f.itemsize] |= field_mask(f)
    return m

def clean(arr):
    raw = np.frombuffer(np.ascontiguousarray(arr).tobytes(), np.uint8).copy()
    if arr.dtype.itemsize:
        raw = raw.reshape(-1, arr.dtype.itemsize) * field_mask(arr.dtype)
    return raw.astype(np.uint8).tobytes().hex()

def view(a, path):
    v = a
    for p in path.split('.'):
        v = v[p]
    return v

out = []
for kind, mk, fill in (('point', point_dt, fill_point), ('outer', outer_dt, fill_outer), ('deep', deep_dt, fill_deep)):
    for order in '<>':
        for align in (False, True):
            dt = mk(order, align)
            a = np.zeros(n, dt)
            fill(a)
            case = {'kind': kind, 'order': order, 'align': align, 'descr': dt.descr,
                    'itemsize': dt.itemsize, 'data': clean(a), 'views': []}
            for path in views.get(kind, []):
                v = view(a, path)
                case['views'].append({'path': path, 'shape': v.shape, 'strides': v.strides,
                    'str': v.dtype.str if v.dtype.names is None else None,
                    'data': clean(v),
                    'native': np.ascontiguousarray(v).astype(v.dtype.newbyteorder('=')).tobytes().hex() if v.dtype.names is None else ''})
            if kind in sets:
                path, t = sets[kind]
                b = a.copy()
                v = view(b, path)
                v[...] = (np.arange(v.size) * 3 + 1).astype(t).reshape(v.shape)
                case['set'] = {'path': path, 'data': clean(b)}
            out.append(case)
if True:
    dt = point_dt('<', False, ('y', 'x', 'id'))
    a = np.zeros(n, dt)
    fill_point(a)
    out.append({'kind': 'point', 'order': '<', 'align': False, 'reordered': True, 'descr': dt.descr,
                'itemsize': dt.itemsize, 'data': clean(a), 'views': []})
print(json.dumps(out))
`

type numpyView struct {
	Path    string `json:"path"`
	Shape   []int  `json:"shape"`
	Strides []int  `json:"strides"`
	Str     string `json:"str"`
	Data    string `json:"data"`
	Native  string `json:"native"`
}

type numpyCase struct {
	Kind      string          `json:"kind"`
	Order     string          `json:"order"`
	Align     bool            `json:"align"`
	Reordered bool            `json:"reordered"`
	Descr     json.RawMessage `json:"descr"`
	ItemSize  int             `json:"itemsize"`
	Data      string          `json:"data"`
	Views     []numpyView     `json:"views"`
	Set       *struct {
		Path string `json:"path"`
		Data string `json:"data"`
	} `json:"set"`
}

func (c numpyCase) String() string {
	return fmt.Sprintf("%s order %s align %v reordered %v", c.Kind, c.Order, c.Align, c.Reordered)
}

func loadNumpyCases(t *testing.T) []numpyCase {
	t.Helper()
	out := pypeer.Run(t, pypeer.Helpers+recordCases, nil, fmt.Sprint(nRecords))
	var cases []numpyCase
	require.NoError(t, json.Unmarshal(out, &cases))
	require.Len(t, cases, 13)
	return cases
}

// descrFromJSON builds the dtype that numpy's dtype.descr, as json.dumps
// writes it, describes: the dtype comes from numpy's own description of
// its array, not from the code under test.
func descrFromJSON(t *testing.T, raw json.RawMessage) DType {
	t.Helper()
	var list []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &list))
	items := make([]DescrItem, len(list))
	for i, e := range list {
		var parts []json.RawMessage
		require.NoError(t, json.Unmarshal(e, &parts))
		require.NoError(t, json.Unmarshal(parts[0], &items[i].Name))
		items[i].DType = formatFromJSON(t, parts[1])
		if len(parts) == 3 {
			require.NoError(t, json.Unmarshal(parts[2], &items[i].Shape))
		}
	}
	dt, err := RecordFromDescr(items)
	require.NoError(t, err)
	return dt
}

// formatFromJSON reads a descr entry's format: a typestr, a nested descr
// list, or a subarray [format, shape].
func formatFromJSON(t *testing.T, raw json.RawMessage) DType {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return MustParseDType(s)
	}
	var parts []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &parts))
	var shape []int
	if len(parts) == 2 && json.Unmarshal(parts[1], &shape) == nil {
		if json.Unmarshal(parts[0], &s) == nil || parts[0][0] == '[' && len(parts[0]) > 1 && parts[0][1] == '[' {
			sub, err := NewSubarray(formatFromJSON(t, parts[0]), shape)
			require.NoError(t, err)
			return sub
		}
	}
	return descrFromJSON(t, raw)
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// aligned returns a copy of b at an address aligned for any Go type.
func aligned(b []byte) []byte {
	words := make([]uint64, len(b)/8+1)
	out := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), len(b))
	copy(out, b)
	return out
}

func TestRecordsNumpy(t *testing.T) {
	for _, c := range loadNumpyCases(t) {
		t.Run(c.String(), func(t *testing.T) {
			dt := descrFromJSON(t, c.Descr)
			require.Equal(t, c.ItemSize, dt.ItemSize)
			data := aligned(mustHex(t, c.Data))
			a, err := New(dt, []int{nRecords}, data)
			require.NoError(t, err)
			native := c.Order == string(NativeOrder())
			switch c.Kind {
			case "point":
				checkRecords(t, a, pointAt, native && c.Align && !c.Reordered, native && c.Align && !c.Reordered)
			case "outer":
				checkRecords(t, a, outerAt, false, native && c.Align) // a bool field: never aliased
			case "deep":
				checkRecords(t, a, deepAt, false, false) // skipped fields; and the S5 field is no [5]uint8
			}
		})
	}
}

// checkRecords reads a's records as T, checks them against at, and
// writes them back into a's dtype, which must give numpy's bytes. alias
// says the read must be zero-copy; sameDType that a's dtype must be
// RecordDTypeOf[T], numpy's align=True layout of T's fields.
func checkRecords[T any](t *testing.T, a *Array, at func(int) T, alias, sameDType bool) {
	t.Helper()
	want := make([]T, nRecords)
	for i := range want {
		want[i] = at(i)
	}
	got, err := RecordsOf[T](a)
	require.NoError(t, err)
	require.Equal(t, want, got)
	assert.Equal(t, alias, unsafe.Pointer(&got[0]) == unsafe.Pointer(&a.Data[0]), "zero-copy")

	// Misaligned data is read right, by copy.
	shifted := append(make([]byte, 1, len(a.Data)+1), a.Data...)[1:]
	b, err := New(a.DType, a.Shape, shifted)
	require.NoError(t, err)
	got, err = RecordsOf[T](b)
	require.NoError(t, err)
	require.Equal(t, want, got)
	assert.NotEqual(t, unsafe.Pointer(&got[0]), unsafe.Pointer(&shifted[0]))

	into := make([]T, 2)
	n, err := CopyRecords(into, a)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.Equal(t, want[:2], into)

	own, err := RecordDTypeOf[T]()
	require.NoError(t, err)
	if sameDType {
		assert.True(t, own == a.DType, "RecordDTypeOf %s\nnumpy align=True %s", own, a.DType)
		w, err := FromRecords(want)
		require.NoError(t, err)
		assert.Equal(t, hex.EncodeToString(a.Data), hex.EncodeToString(w.Data))
	}
	w, err := FromRecordsAs(a.DType, want)
	require.NoError(t, err)
	assert.Equal(t, hex.EncodeToString(a.Data), hex.EncodeToString(w.Data), "FromRecordsAs %s", a.DType)
}

func TestFieldViewNumpy(t *testing.T) {
	for _, c := range loadNumpyCases(t) {
		if len(c.Views) == 0 {
			continue
		}
		t.Run(c.String(), func(t *testing.T) {
			dt := descrFromJSON(t, c.Descr)
			a, err := New(dt, []int{nRecords}, mustHex(t, c.Data))
			require.NoError(t, err)
			for _, nv := range c.Views {
				v, err := a.Field(nv.Path)
				require.NoError(t, err, nv.Path)
				assert.Equal(t, nv.Shape, v.Shape, nv.Path)
				assert.Equal(t, nv.Strides, v.Strides, nv.Path)
				if nv.Str != "" {
					assert.Equal(t, nv.Str, v.DType.String(), nv.Path)
				} else {
					assert.True(t, v.DType.IsRecord(), nv.Path)
				}
				va, err := v.Array()
				require.NoError(t, err)
				assert.Equal(t, nv.Data, hex.EncodeToString(va.Data), nv.Path)
				if nv.Native != "" {
					assert.Equal(t, nv.Native, nativeHex(t, a, v), nv.Path)
				}
				// Setting the view from its own copy changes nothing.
				before := hex.EncodeToString(a.Data)
				require.NoError(t, v.Set(va))
				assert.Equal(t, before, hex.EncodeToString(a.Data))
			}
			if c.Set != nil {
				v, err := a.Field(c.Set.Path)
				require.NoError(t, err)
				switch v.DType.Kind {
				case 'i':
					vals := make([]int8, numElements(t, v.Shape))
					for i := range vals {
						vals[i] = int8(i*3 + 1)
					}
					require.NoError(t, SetFieldValues(a, c.Set.Path, vals))
				default:
					vals := make([]uint16, numElements(t, v.Shape))
					for i := range vals {
						vals[i] = uint16(i*3 + 1)
					}
					require.NoError(t, SetFieldValues(a, c.Set.Path, vals))
				}
				assert.Equal(t, c.Set.Data, hex.EncodeToString(a.Data))
			}
		})
	}
}

// nativeHex is FieldValues of the view's Go type, as bytes.
func nativeHex(t *testing.T, a *Array, v *FieldView) string {
	t.Helper()
	var raw []byte
	var err error
	get := func(p unsafe.Pointer, n int) { raw = unsafe.Slice((*byte)(p), n*v.DType.ItemSize) }
	switch v.DType.String() {
	case "<u2", ">u2":
		var x []uint16
		if x, err = FieldValues[uint16](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "<i2", ">i2":
		var x []int16
		if x, err = FieldValues[int16](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "<i4", ">i4":
		var x []int32
		if x, err = FieldValues[int32](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "<i8", ">i8":
		var x []int64
		if x, err = FieldValues[int64](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "<f4", ">f4":
		var x []float32
		if x, err = FieldValues[float32](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "<c8", ">c8":
		var x []complex64
		if x, err = FieldValues[complex64](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "<c16", ">c16":
		var x []complex128
		if x, err = FieldValues[complex128](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "|i1":
		var x []int8
		if x, err = FieldValues[int8](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "|u1":
		var x []uint8
		if x, err = FieldValues[uint8](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	case "|b1":
		var x []bool
		if x, err = FieldValues[bool](a, v.Path); len(x) > 0 {
			get(unsafe.Pointer(&x[0]), len(x))
		}
	default:
		return hex.EncodeToString(mustView(t, v).Data) // S5: no Go element type
	}
	require.NoError(t, err)
	return hex.EncodeToString(raw)
}

func mustView(t *testing.T, v *FieldView) *Array {
	a, err := v.Array()
	require.NoError(t, err)
	return a
}

type mismatched struct {
	X  float32    `npy:"x"`
	Q  int32      `npy:"q"`
	P  [2]float32 `npy:"p"`
	In struct {
		Z int8 `npy:"z"`
		W int8 `npy:"w"`
	} `npy:"in"`
	Pt point `npy:"pt"`
}

func TestRecordsMismatchListsAll(t *testing.T) {
	in := mustRecord(t, []Field{{Name: "z", DType: MustParseDType("<i2")}, {Name: "w", DType: MustParseDType("|i1"), Offset: 2}}, 0)
	dt := mustRecord(t, []Field{
		{Name: "x", DType: DTypeOf[float64]()},
		{Name: "p", DType: DTypeOf[float32](), Shape: []int{3}, Offset: 8},
		{Name: "in", DType: in, Offset: 20},
		{Name: "pt", DType: DTypeOf[float64](), Offset: 24},
	}, 0)
	a, err := Zeros(dt, 2)
	require.NoError(t, err)
	_, err = RecordsOf[mismatched](a)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrType))
	assert.Equal(t, `ndarray: element type mismatch: records {'names': ['x', 'p', 'in', 'pt'], 'formats': ['<f8', ('<f4', (3,)), [('z', '<i2'), ('w', 'i1')], '<f8'], 'offsets': [0, 8, 20, 24], 'itemsize': 32} read as Go ndarray.mismatched: `+
		`field "x": Go float32 at offset 0, file <f8 at offset 0; `+
		`field "q" missing in the file; `+
		`field "p": Go [2]float32 at offset 8, file ('<f4', (3,)) at offset 8; `+
		`field "in.z": Go int8 at offset 16, file <i2 at offset 20; `+
		`field "pt": Go ndarray.point at offset 24, file <f8 at offset 24`, err.Error())

	// Written into the dtype, fields the dtype has and T has not are named too.
	_, err = FromRecordsAs(mustRecord(t, []Field{{Name: "id", DType: MustParseDType("<i4")}, {Name: "v", DType: DTypeOf[uint8](), Offset: 4}}, 0), []point{{}})
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrType))
	assert.Contains(t, err.Error(), `written from Go ndarray.point: field "x" missing in the dtype; field "y" missing in the dtype; field "v" of the dtype has no Go field in ndarray.point`)

	// Thousands of mismatches make a short message.
	fields := make([]Field, 1000)
	for i := range fields {
		fields[i] = Field{Name: fmt.Sprint("f", i), DType: DTypeOf[uint8](), Offset: i}
	}
	_, err = FromRecordsAs(mustRecord(t, fields, 0), []point{{}})
	require.Error(t, err)
	assert.Less(t, len(err.Error()), 2000)
	assert.Contains(t, err.Error(), "; and 983 more")
}

type unsupported struct {
	S    string
	N    int `npy:"n"`
	F    func()
	OK   float64
	Dup  int8   `npy:"OK"`
	Skip string `npy:"-"`
	Dash int8   `npy:"-,"`
	hid  string
}

func TestRecordDTypeOfRefuses(t *testing.T) {
	_, err := RecordDTypeOf[unsupported]()
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrType))
	assert.Equal(t, `ndarray: element type mismatch: Go type ndarray.unsupported has no record dtype: `+
		"field \"S\": Go string has no dtype (skip it with `npy:\"-\"`); "+
		`field "n": Go int has a machine-dependent size; use a sized type such as int64; `+
		"field \"F\": Go func() has no dtype (skip it with `npy:\"-\"`); "+
		`field "OK": name used by two fields`, err.Error())
	_, err = RecordDTypeOf[int]()
	assert.True(t, errors.Is(err, ErrType))
	_, err = RecordsOf[point](&Array{DType: DTypeOf[float64](), Shape: []int{1}, Data: make([]byte, 8)})
	assert.True(t, errors.Is(err, ErrType))
	assert.Contains(t, err.Error(), "<f8 is not a record dtype")
	_, err = FromRecords([]unsupported{{}})
	assert.True(t, errors.Is(err, ErrType))

	type dashed struct {
		Dash int8 `npy:"-,"`
		Keep int8 `npy:",omitempty"`
	}
	dt, err := RecordDTypeOf[dashed]()
	require.NoError(t, err)
	assert.Equal(t, "[('-', 'i1'), ('Keep', 'i1')]", dt.String())
}

func TestRecordDTypeOf(t *testing.T) {
	dt, err := RecordDTypeOf[point]()
	require.NoError(t, err)
	o := string(NativeOrder())
	assert.Equal(t, "{'names': ['id', 'x', 'y'], 'formats': ['"+o+"i4', '"+o+"f8', '"+o+"f4'], 'offsets': [0, 8, 16], 'itemsize': 24}", dt.String())
	type empty struct{}
	dt, err = RecordDTypeOf[empty]()
	require.NoError(t, err)
	assert.Equal(t, 0, dt.ItemSize)
	assert.True(t, dt.IsRecord())
	got, err := RecordsOf[empty](&Array{DType: dt, Shape: []int{3}})
	require.NoError(t, err)
	assert.Len(t, got, 3)
}

func TestRecordsShapes(t *testing.T) {
	recs := []point{pointAt(0), pointAt(1), pointAt(2), pointAt(3), pointAt(4), pointAt(5)}
	a, err := FromRecords(recs, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, a.Shape)
	back, err := RecordsOf[point](a)
	require.NoError(t, err)
	assert.Equal(t, recs, back)
	v, err := a.Field("x")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, v.Shape)
	assert.Equal(t, []int{72, 24}, v.Strides)
	assert.Equal(t, []int{2, 3}, v.Shape)
	item, err := v.Item(1, 2)
	require.NoError(t, err)
	assert.Equal(t, 8, len(item))
	x, err := FieldValues[float64](a, "x")
	require.NoError(t, err)
	assert.Equal(t, []float64{-2.25, -1.75, -1.25, -0.75, -0.25, 0.25}, x)

	_, err = FromRecords(recs, 4)
	assert.True(t, errors.Is(err, ErrDataLength))
	_, err = v.Item(2, 0)
	assert.True(t, errors.Is(err, ErrIndex))
	_, err = v.Item(0)
	assert.True(t, errors.Is(err, ErrIndex))

	// 0-d and empty arrays.
	s, err := FromRecords(recs[:1], []int{}...)
	require.NoError(t, err)
	back, err = RecordsOf[point](s)
	require.NoError(t, err)
	assert.Equal(t, recs[:1], back)
	e, err := FromRecords([]point{})
	require.NoError(t, err)
	back, err = RecordsOf[point](e)
	require.NoError(t, err)
	assert.Empty(t, back)
	x, err = FieldValues[float64](e, "x")
	require.NoError(t, err)
	assert.Empty(t, x)
	n, err := CopyRecords(make([]point, 3), e)
	require.NoError(t, err)
	assert.Zero(t, n)

	// An invalid array is refused, not read past its end.
	bad := &Array{DType: a.DType, Shape: []int{7}, Data: a.Data}
	_, err = RecordsOf[point](bad)
	assert.True(t, errors.Is(err, ErrDataLength))
	_, err = bad.Field("x")
	assert.True(t, errors.Is(err, ErrDataLength))
}

type withBool struct {
	B  bool  `npy:"b"`
	V  int16 `npy:"v"`
	BS [3]bool
}

func TestRecordsBools(t *testing.T) {
	dt, err := RecordDTypeOf[withBool]()
	require.NoError(t, err)
	a, err := New(dt, []int{1}, []byte{7, 0, 2, 1, 0, 9, 255, 0})
	require.NoError(t, err)
	got, err := RecordsOf[withBool](a)
	require.NoError(t, err)
	assert.Equal(t, []withBool{{B: true, V: int16(binary.NativeEndian.Uint16([]byte{2, 1})), BS: [3]bool{false, true, true}}}, got)
	assert.NotEqual(t, unsafe.Pointer(&got[0]), unsafe.Pointer(&a.Data[0]), "bools are copied, and made 0 or 1")
	b, err := FieldValues[bool](a, "BS")
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true}, b)
	w, err := FromRecords(got)
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 0, 2, 1, 0, 1, 1, 0}, w.Data)
}

// fuzzRecord builds a record dtype from spec: field names that the test
// structs use, assorted dtypes and shapes, offsets anywhere, nesting.
func fuzzRecord(spec []byte, depth int) (DType, []byte, bool) {
	next := func() byte {
		if len(spec) == 0 {
			return 0
		}
		b := spec[0]
		spec = spec[1:]
		return b
	}
	names := []string{"id", "x", "y", "p", "q", "a", "inner", "M", "ok", "c", "j", "i", "r", "name", "w", "k", "z", "e"}
	types := []string{"<i4", ">i4", "<f8", ">f8", "<f4", ">f4", "|b1", "|u1", "|i1", "<u2", ">i2", "|S5", "<c8", ">c16", "<i8", "|V3"}
	shapes := [][]int{nil, {2}, {3}, {2, 2}, {2, 1}, {100}, {0}, {1}}
	n := int(next() % 6)
	fields := make([]Field, 0, n)
	for range n {
		f := Field{Name: names[int(next())%len(names)], Shape: shapes[int(next())%len(shapes)], Offset: int(next())}
		if t := next(); int(t)%(len(types)+1) == len(types) && depth < 3 {
			var ok bool
			if f.DType, spec, ok = fuzzRecord(spec, depth+1); !ok {
				return DType{}, spec, false
			}
		} else {
			f.DType = MustParseDType(types[int(t)%len(types)])
		}
		fields = append(fields, f)
	}
	dt, err := NewRecord(fields, int(next())%64)
	return dt, spec, err == nil
}

func FuzzRecords(f *testing.F) {
	f.Add([]byte{3, 0, 0, 0, 0, 1, 0, 4, 2, 2, 0, 12, 4, 0}, make([]byte, 64))               // numpy's packed (id, x, y)
	f.Add([]byte{3, 0, 0, 0, 0, 1, 0, 8, 2, 2, 0, 16, 4, 24}, make([]byte, 96))              // align=True
	f.Add([]byte{2, 6, 4, 4, 16, 4, 0, 4, 16, 0, 0, 2, 1, 4, 0}, []byte("0123456789abcdef")) // nested
	f.Fuzz(func(t *testing.T, spec, data []byte) {
		dt, _, ok := fuzzRecord(spec, 0)
		if !ok {
			return
		}
		n := 0
		if dt.ItemSize > 0 {
			n = min(len(data)/dt.ItemSize, 64)
		}
		a, err := New(dt, []int{n}, data[:n*dt.ItemSize])
		require.NoError(t, err)
		if recs, err := RecordsOf[point](a); err == nil {
			require.Len(t, recs, n)
			if _, err := dt.Descr(); err == nil && len(dt.Fields()) == 3 {
				// Fields that neither overlap nor lie out of order come back.
				w, err := FromRecordsAs(dt, recs)
				require.NoError(t, err)
				back, err := RecordsOf[point](w)
				require.NoError(t, err)
				require.Equal(t, pointBits(recs), pointBits(back))
			}
		}
		RecordsOf[outer](a)
		RecordsOf[deep](a)
		CopyRecords(make([]inner, 2), a)
		for _, path := range []string{"id", "x", "y", "p", "inner", "inner.p", "inner.q", "r.x", "i.x", "name", "j", "e"} {
			v, err := a.Field(path)
			if err != nil {
				continue
			}
			va, err := v.Array()
			require.NoError(t, err)
			require.NoError(t, v.Set(va))
			require.Equal(t, data[:n*dt.ItemSize], a.Data, "setting a field to its own values changes nothing")
			if u, err := FieldValues[uint8](a, path); err == nil {
				require.NoError(t, SetFieldValues(a, path, u))
			}
			if x, err := FieldValues[float64](a, path); err == nil {
				require.Len(t, x, numElements(t, v.Shape))
			}
		}
	})
}

// pointBits is the bits of the points' fields (not their padding), so that
// NaNs compare.
func pointBits(v []point) [][3]uint64 {
	out := make([][3]uint64, len(v))
	for i, p := range v {
		out[i] = [3]uint64{uint64(p.ID), math.Float64bits(p.X), uint64(math.Float32bits(p.Y))}
	}
	return out
}

func TestRecordsEmptyStructArrayStillChecked(t *testing.T) {
	type none struct {
		P [0]point `npy:"p"`
	}
	in := mustRecord(t, []Field{{Name: "id", DType: MustParseDType("<i2")}}, 0)
	a, err := Zeros(mustRecord(t, []Field{{Name: "p", DType: in, Shape: []int{0}}}, 0), 2)
	require.NoError(t, err)
	_, err = RecordsOf[none](a)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `field "p.id": Go int32 at offset 0, file <i2 at offset 0; field "p.x" missing in the file`)
}

// The plan of numpy's packed (id, x, y) into point: id, then x and y
// back to back on both sides, merged into one run and cut into words.
func TestRecordPlanMerges(t *testing.T) {
	o := NativeOrder()
	packed := mustRecord(t, []Field{
		{Name: "id", DType: MustParseDType("<i4").WithOrder(o)},
		{Name: "x", DType: DTypeOf[float64]().WithOrder(o), Offset: 4},
		{Name: "y", DType: DTypeOf[float32]().WithOrder(o), Offset: 12},
	}, 0)
	_, p, err := recordPlan[point](packed, false)
	require.NoError(t, err)
	assert.Equal(t, []move{{kind: mvWord, src: 0, dst: 0, size: 4}, {kind: mvWord, src: 4, dst: 8, size: 8}, {kind: mvWord, src: 12, dst: 16, size: 4}}, p.moves)
	assert.False(t, p.identity)

	other := byte('<')
	if o == '<' {
		other = '>'
	}
	_, p, err = recordPlan[point](packed.WithOrder(other), false)
	require.NoError(t, err)
	assert.Equal(t, []move{{kind: mvSwap, src: 0, dst: 0, size: 4}, {kind: mvSwap, src: 4, dst: 8, size: 8}, {kind: mvSwap, src: 12, dst: 16, size: 4}}, p.moves)

	own, err := RecordDTypeOf[point]()
	require.NoError(t, err)
	_, p, err = recordPlan[point](own, false)
	require.NoError(t, err)
	assert.True(t, p.identity)
	assert.False(t, p.whole, "the 4 bytes after id are Go's padding")
}

func numElements(t *testing.T, shape []int) int {
	t.Helper()
	n, err := NumElements(shape)
	require.NoError(t, err)
	return n
}
