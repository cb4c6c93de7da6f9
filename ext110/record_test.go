package ext110

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordCasesPy builds, with numpy, the record arrays of the tests: each
// dtype over a few shapes, with random bytes (bool fields 0 or 1). full is
// the reference's encoding with its descr always kept: pack_ndarray's own
// bytes except for one-entry descrs, which it drops.
const recordCasesPy = `
import json
import numpy as np

dtypes = {
    "plain": "[('x', '<i4'), ('y', '<f8')]",
    "subarray": "[('pos', '<f4', (3,)), ('m', '>i2', (2, 2)), ('ok', '?')]",
    "nested": "[('a', '<i2'), ('b', [('c', '>u2'), ('d', 'S3')], (2,)), ('e', [('f', [('g', '<c8')])])]",
    "padded": "{'names': ['a', 'b'], 'formats': ['u1', '<f8'], 'offsets': [0, 8], 'itemsize': 24}",
    "aligned": "np.dtype([('a', 'u1'), ('b', '<i4'), ('c', [('d', 'u1'), ('e', '<f8')])], align=True)",
    "bigendian": "[('a', '>i8'), ('b', '>c8'), ('c', '>f2'), ('d', '>U2'), ('t', '>M8[ms]')]",
    "nestedsubarray": "[('a', ('<i4', (2,)), (3,)), ('b', (('<u2', (2,)), (2,)), (2,))]",
    "titles": "[(('Title A', 'a'), '<i4'), ('b', '<f4'), (('t2', 'c'), [('d', 'u1'), (('T3', 'e'), 'u1')])]",
    "unicode": "[('températureé', '<f4'), ('名前', '<U3'), ('x y\\'\"', 'V3')]",
    "onefield": "[('x', '<i4')]",
    "onepadded": "{'names': ['x'], 'formats': ['<i4'], 'itemsize': 8}",
    "empty": "[]",
    "voidfields": "[('a', 'V4'), ('', '<i2')]",
}
rng = np.random.default_rng(21)
res = []
for name, expr in dtypes.items():
    dt = np.dtype(eval(expr))
    for shape in [(0,), (3,), (2, 2), ()]:
        n = int(np.prod(shape, dtype=np.int64))
        arr = np.frombuffer(rng.bytes(n * dt.itemsize), dtype=np.uint8).copy()
        arr = arr.view(dt).reshape(shape) if dt.itemsize else np.zeros(shape, dt)
        iface = dict(arr.__array_interface__)
        del iface["strides"]
        iface["data"] = arr.tobytes()
        full = msgpack.packb(ExtType(110, msgpack.packb(iface)))
        ref = msgpack.packb(pack_ndarray(arr))
        if len(dt.descr) != 1:
            assert ref == full, name
        try:
            msgpack.unpackb(ref, ext_hook=ext_hook)
            hook = ""
        except Exception as e:
            hook = type(e).__name__ + ": " + str(e)
        # What numpy itself makes of the descr (np.load does the same):
        # an aligned struct's flag is not in it.
        rt = np.lib.format.descr_to_dtype(dt.descr)
        assert rt == dt and (str(rt) == str(dt) or name == "aligned"), name
        res.append({"name": name + str(list(shape)), "str": str(rt), "entries": len(dt.descr),
                    "ref": ref.hex(), "full": full.hex(), "data": arr.tobytes().hex(), "hook": hook})
print(json.dumps(res))
`

type recordCase struct {
	Name    string `json:"name"`
	Str     string `json:"str"`
	Entries int    `json:"entries"`
	Ref     string `json:"ref"`
	Full    string `json:"full"`
	Data    string `json:"data"`
	Hook    string `json:"hook"`
}

func recordCases(t *testing.T) []recordCase {
	t.Helper()
	out := pypeer.Run(t, recordCasesPy, nil)
	var cases []recordCase
	require.NoError(t, json.Unmarshal(out, &cases))
	require.Len(t, cases, 13*4)
	return cases
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// What pack_ndarray writes for a record decodes to numpy's dtype (its str,
// which shows names, formats, offsets, titles and item size, as numpy reads
// the descr back) and bytes, and encodes back to the same bytes; the
// reference's own ext_hook fails on it.
func TestRecordInteropPythonToGo(t *testing.T) {
	for _, c := range recordCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			full := mustHex(t, c.Full)
			a, err := Unmarshal(full)
			require.NoError(t, err)
			assert.True(t, a.DType.IsRecord())
			assert.Equal(t, c.Str, a.DType.String())
			assert.Equal(t, c.Data, hex.EncodeToString(a.Data))
			h, err := DecodeHeader(full)
			require.NoError(t, err)
			assert.Equal(t, a.DType, h.DType)

			again, err := Options{AllowNonstandard: true}.Marshal(a)
			require.NoError(t, err)
			assert.Equal(t, c.Full, hex.EncodeToString(again), "encoded as pack_ndarray encodes it, descr kept")
			n, err := Size(a)
			require.NoError(t, err)
			assert.Equal(t, len(again), n)
			var buf bytes.Buffer
			require.NoError(t, (&Encoder{Options: Options{AllowNonstandard: true}, w: &buf}).Encode(a))
			assert.Equal(t, c.Full, hex.EncodeToString(buf.Bytes()), "Encoder")
			buf.Reset()
			require.NoError(t, (&Encoder{Options: Options{AllowNonstandard: true}, w: &buf}).EncodeFrom(a.DType, a.Shape, bytes.NewReader(a.Data)))
			assert.Equal(t, c.Full, hex.EncodeToString(buf.Bytes()), "EncodeFrom")

			_, err = Marshal(a)
			assert.ErrorIs(t, err, ndarray.ErrNonstandard)
			assert.ErrorContains(t, err, "record dtype")

			switch c.Entries {
			case 0:
				assert.Equal(t, c.Ref, c.Full)
				assert.Empty(t, c.Hook, "np.dtype([]) needs no tuple")
			default:
				assert.Equal(t, c.Ref, c.Full)
				assert.Contains(t, c.Hook, "TypeError: Field elements must be 2- or 3-tuples")
			case 1:
				// The reference drops a one-entry descr: its bytes
				// are a plain void, which is all they say.
				ref, err := Unmarshal(mustHex(t, c.Ref))
				require.NoError(t, err)
				assert.True(t, ref.DType.IsPlain())
				assert.Equal(t, a.DType.ItemSize, ref.DType.ItemSize)
			}
		})
	}
}

// pyTupleHook is an ext_hook that reads a record as the reference ext_hook
// means to: descr's lists turned back into the tuples numpy wants.
const pyTupleHook = `
import numpy as np

def fmt(f):
    if isinstance(f, list) and len(f) == 2 and (isinstance(f[1], int) or (isinstance(f[1], list) and all(isinstance(x, int) for x in f[1]))):
        return (fmt(f[0]), tuple(f[1]) if isinstance(f[1], list) else f[1])
    if isinstance(f, list):
        return descr(f)
    return f

def descr(d):
    out = []
    for e in d:
        name = tuple(e[0]) if isinstance(e[0], list) else e[0]
        item = (name, fmt(e[1])) + ((tuple(e[2]),) if len(e) == 3 else ())
        out.append(item)
    return out

def tuple_hook(code, data):
    iface = msgpack.unpackb(data)
    if "descr" in iface:
        dt = np.lib.format.descr_to_dtype(descr(iface["descr"]))
    else:
        dt = np.dtype(iface["typestr"])
    return np.frombuffer(iface["data"], dtype=dt).reshape(iface["shape"]) if dt.itemsize else np.zeros(iface["shape"], dt)
`

// Records built in Go, not by the decoder, reach numpy as the same dtype
// and bytes, and pack_ndarray writes what ndpack wrote.
func TestRecordInteropGoToPython(t *testing.T) {
	f8 := ndarray.MustParseDType("<f8")
	inner, err := ndarray.NewRecord([]ndarray.Field{
		{Name: "c", DType: ndarray.MustParseDType(">u2")},
		{Name: "d", Title: "the d", DType: ndarray.MustParseDType("|S3"), Offset: 4},
	}, 8)
	require.NoError(t, err)
	sub, err := ndarray.NewSubarray(ndarray.MustParseDType("<i4"), []int{2})
	require.NoError(t, err)
	rec, err := ndarray.NewRecord([]ndarray.Field{
		{Name: "x", DType: f8},
		{Name: "b", DType: inner, Shape: []int{2}, Offset: 8},
		{Name: "s", DType: sub, Shape: []int{3}, Offset: 24},
		{Name: "é", DType: ndarray.MustParseDType(">i8"), Offset: 56},
	}, 72)
	require.NoError(t, err)
	data := make([]byte, 3*72)
	for i := range data {
		data[i] = byte(i * 7)
	}
	a, err := ndarray.New(rec, []int{3}, data)
	require.NoError(t, err)
	packed, err := Options{AllowNonstandard: true}.Marshal(a)
	require.NoError(t, err)
	out := pypeer.Run(t, pyTupleHook+`
import sys
packed = sys.stdin.buffer.read()
arr = msgpack.unpackb(packed, ext_hook=tuple_hook)
want = np.dtype({'names': ['x', 'b', 's', 'é'],
                 'formats': ['<f8', (np.dtype({'names': ['c', 'd'], 'formats': ['>u2', 'S3'], 'offsets': [0, 4], 'titles': [None, 'the d'], 'itemsize': 8}), (2,)),
                             (('<i4', (2,)), (3,)), '>i8'],
                 'offsets': [0, 8, 24, 56], 'itemsize': 72})
print(arr.dtype == want, arr.shape, arr.tobytes() == bytes((i * 7) % 256 for i in range(3 * 72)),
      msgpack.packb(pack_ndarray(arr)) == packed)
`, packed)
	assert.Equal(t, "True (3,) True True\n", string(out))
}

func TestRecordRefusals(t *testing.T) {
	i4 := ndarray.MustParseDType("<i4")
	overlap, err := ndarray.NewRecord([]ndarray.Field{{Name: "a", DType: i4}, {Name: "b", DType: i4, Offset: 2}}, 0)
	require.NoError(t, err)
	a, _ := ndarray.New(overlap, []int{1}, make([]byte, 6))
	_, err = Options{AllowNonstandard: true}.Marshal(a)
	assert.ErrorIs(t, err, ndarray.ErrMalformed)
	assert.ErrorContains(t, err, "overlapping")

	// An unnamed void field reads back as padding: refused, not lost.
	hidden, err := ndarray.NewRecord([]ndarray.Field{{Name: "a", DType: i4}, {DType: ndarray.MustParseDType("|V4"), Offset: 4}}, 0)
	require.NoError(t, err)
	a, _ = ndarray.New(hidden, []int{1}, make([]byte, 8))
	_, err = Options{AllowNonstandard: true}.Marshal(a)
	assert.ErrorContains(t, err, "read as padding")

	sub, _ := ndarray.NewSubarray(i4, []int{2})
	a = &ndarray.Array{DType: sub, Shape: []int{1}, Data: make([]byte, 8)}
	_, err = Options{AllowNonstandard: true}.Marshal(a)
	assert.Error(t, err)
}

func TestRecordDecodeErrors(t *testing.T) {
	data := mpBin(make([]byte, 8))
	obj := func(descr []byte, typestr string) []byte {
		return ext8(mpMap(mpStr("data"), data, mpStr("descr"), descr, mpStr("typestr"), mpStr(typestr),
			mpStr("shape"), []byte{0x91, 0x01}, mpStr("version"), []byte{0x03}))
	}
	entry := func(name, format string) []byte {
		return append(append([]byte{0x92}, mpStr(name)...), mpStr(format)...)
	}
	list := func(items ...[]byte) []byte {
		return append([]byte{0x90 | byte(len(items))}, bytes.Join(items, nil)...)
	}

	a, err := Unmarshal(obj(list(entry("a", "<i4"), entry("b", "<f4")), "|V8"))
	require.NoError(t, err)
	assert.Equal(t, "[('a', '<i4'), ('b', '<f4')]", a.DType.String())
	// Only padding: the plain void (numpy's descr of one).
	a, err = Unmarshal(obj(list(entry("", "|V8")), "|V8"))
	require.NoError(t, err)
	assert.Equal(t, ndarray.MustParseDType("|V8"), a.DType)
	a, err = Unmarshal(obj(list(entry("", "|V4"), entry("", "|V4")), "|V8"))
	require.NoError(t, err)
	assert.Equal(t, ndarray.MustParseDType("|V8"), a.DType)
	// Another kind's typestr: descr is ignored, as numpy ignores it.
	a, err = Unmarshal(obj(list(entry("a", "<i4"), entry("b", "<f4")), "<f8"))
	require.NoError(t, err)
	assert.Equal(t, ndarray.MustParseDType("<f8"), a.DType)

	deep := entry("a", "<i8")
	for range 40 {
		deep = append(append([]byte{0x92}, mpStr("n")...), list(deep)...)
	}
	for name, c := range map[string]struct {
		in   []byte
		want string
	}{
		"size":      {obj(list(entry("a", "<i4")), "|V8"), "descr describes 4-byte records, typestr |V8 8-byte ones"},
		"object":    {obj(list(entry("a", "<i4"), entry("o", "|O")), "|V8"), "object array (pickle)"},
		"format":    {obj(list(entry("a", "<q4"), entry("b", "<f4")), "|V8"), "descr entry 0 (\"a\")'s format"},
		"duplicate": {obj(list(entry("a", "<i4"), entry("a", "<f4")), "|V8"), "already used"},
		"entry":     {obj(list([]byte{0x91, 0xa1, 'a'}), "|V8"), "descr entry 0 has 1 item"},
		"notlist":   {obj(mpStr("<i8"), "|V8"), "descr is msgpack type byte"},
		"deep":      {obj(list(deep), "|V8"), "nested more than 32 deep"},
		"twice": {ext8(mpMap(mpStr("data"), data, mpStr("descr"), list(entry("a", "<i8")), mpStr("descr"), list(entry("a", "<i8")),
			mpStr("typestr"), mpStr("|V8"), mpStr("shape"), []byte{0x91, 0x01})), "duplicate key"},
		"objecttypestr": {ext8(mpMap(mpStr("data"), data, mpStr("typestr"), mpStr("|O"), mpStr("shape"), []byte{0x91, 0x01})), "object array (pickle)"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Unmarshal(c.in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, ndarray.ErrMalformed), "%v", err)
			assert.ErrorContains(t, err, c.want)
			assert.ErrorContains(t, err, "ext110: ")
		})
	}
}
