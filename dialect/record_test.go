package dialect

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Record arrays as msgpack_numpy.encode writes them decode to numpy's
// dtype (as numpy reads the descr back: str shows names, formats, offsets,
// titles, item size) and bytes, and encode back to the same bytes. What
// msgpack-numpy's own decode makes of them is recorded, as the package doc
// tells it.
func TestRecordMsgpackNumpyPeer(t *testing.T) {
	pypeer.RequireModule(t, "msgpack_numpy", "python3-msgpack-numpy")
	out := pypeer.Run(t, `
import json
import numpy as np
import msgpack_numpy as m
dtypes = {
    "plain": "[('x', '<i4'), ('y', '<f8')]",
    "subarray": "[('pos', '<f4', (3,)), ('m', '>i2', (2, 2)), ('ok', '?')]",
    "nested": "[('a', '<i2'), ('b', [('c', '>u2'), ('d', 'S3')], (2,)), ('e', [('f', [('g', '<c8')])])]",
    "padded": "{'names': ['a', 'b'], 'formats': ['u1', '<f8'], 'offsets': [0, 8], 'itemsize': 24}",
    "aligned": "np.dtype([('a', 'u1'), ('b', '<i4'), ('c', [('d', 'u1'), ('e', '<f8')])], align=True)",
    "bigendian": "[('a', '>i8'), ('b', '>c8'), ('c', '>f2'), ('d', '>U2')]",
    "nestedsubarray": "[('a', ('<i4', (2,)), (3,))]",
    "titles": "[(('Title A', 'a'), '<i4'), ('b', '<f4')]",
    "unicode": "[('températureé', '<f4'), ('名前', '<U3'), ('x y', 'V3')]",
    "onefield": "[('x', '<i4')]",
    "empty": "[]",
    "void": "'V8'",
}
rng = np.random.default_rng(21)
res = []
for name, expr in dtypes.items():
    dt = np.dtype(eval(expr))
    for shape in [(0,), (3,), (2, 2), ()]:
        n = int(np.prod(shape, dtype=np.int64))
        arr = np.frombuffer(rng.bytes(n * dt.itemsize), dtype=np.uint8).copy()
        arr = arr.view(dt).reshape(shape) if dt.itemsize else np.zeros(shape, dt)
        packed = msgpack.packb(arr, default=m.encode, use_bin_type=True)
        want = str(np.lib.format.descr_to_dtype(dt.descr)) if dt.names is not None else dt.str
        try:
            got = msgpack.unpackb(packed, object_hook=m.decode)
            theirs = str(got.dtype)
        except Exception as e:
            theirs = type(e).__name__
        res.append({"name": name + str(list(shape)), "str": want, "packed": packed.hex(),
                    "data": arr.tobytes().hex(), "theirs": theirs})
try:
    msgpack.packb(np.zeros(1, [('a', '<i4'), ('t', '>M8[ms]')]), default=m.encode, use_bin_type=True)
    datetime_field = "sent"
except ValueError as e:
    datetime_field = str(e)
print(json.dumps({"cases": res, "datetime_field": datetime_field}))
`, nil)
	var res struct {
		Cases []struct {
			Name, Str, Packed, Data, Theirs string
		}
		DatetimeField string `json:"datetime_field"`
	}
	require.NoError(t, json.Unmarshal(out, &res))
	cases := res.Cases
	require.Len(t, cases, 12*4)
	// msgpack-numpy cannot send a datetime field, so ndpack does not.
	assert.Equal(t, "cannot include dtype 'M' in a buffer", res.DatetimeField)
	withTime, err := ndarray.NewRecord([]ndarray.Field{{Name: "a", DType: ndarray.MustParseDType("<i4")},
		{Name: "t", DType: ndarray.MustParseDType(">M8[ms]"), Offset: 4}}, 0)
	require.NoError(t, err)
	_, err = MsgpackNumpy.Marshal(&ndarray.Array{DType: withTime, Shape: []int{1}, Data: make([]byte, 12)})
	assert.ErrorIs(t, err, ErrUnsupported)
	theirs := map[string]string{}
	for _, c := range cases {
		theirs[c.Name] = c.Theirs
		t.Run(c.Name, func(t *testing.T) {
			packed, _ := hex.DecodeString(c.Packed)
			a, d, err := Unmarshal(packed)
			require.NoError(t, err)
			assert.Equal(t, MsgpackNumpy, d)
			assert.Equal(t, c.Str, a.DType.String())
			assert.Equal(t, c.Data, hex.EncodeToString(a.Data))
			again, err := MsgpackNumpy.Marshal(a)
			require.NoError(t, err)
			assert.Equal(t, c.Packed, hex.EncodeToString(again), "encoded as msgpack_numpy.encode encodes it")
			_, err = OpenPI.Marshal(a)
			if a.DType.IsRecord() {
				assert.ErrorIs(t, err, ErrStructured)
				assert.ErrorContains(t, err, "OpenPI cannot carry the record dtype")
			}
		})
	}
	// The package doc's account of msgpack-numpy's own decode.
	assert.Equal(t, "[('x', '<i4'), ('y', '<f8')]", theirs["plain[3]"])
	assert.Equal(t, "TypeError", theirs["titles[3]"])
	assert.Equal(t, "IndexError", theirs["nestedsubarray[3]"])
	assert.Equal(t, "[('a', 'u1'), ('f1', 'V7'), ('b', '<f8'), ('f3', 'V8')]", theirs["padded[3]"])
	assert.Equal(t, "[('f0', 'V8')]", theirs["void[3]"])
}

// A record built in Go, not by the decoder, reaches msgpack-numpy's decode
// as the same dtype and bytes, and msgpack-numpy packs it as ndpack did.
func TestRecordGoToMsgpackNumpy(t *testing.T) {
	pypeer.RequireModule(t, "msgpack_numpy", "python3-msgpack-numpy")
	inner, err := ndarray.NewRecord([]ndarray.Field{
		{Name: "c", DType: ndarray.MustParseDType(">u2")},
		{Name: "d", DType: ndarray.MustParseDType("|S3"), Offset: 2},
	}, 0)
	require.NoError(t, err)
	rec, err := ndarray.NewRecord([]ndarray.Field{
		{Name: "x", DType: ndarray.MustParseDType("<f8")},
		{Name: "b", DType: inner, Shape: []int{2}, Offset: 8},
		{Name: "é", DType: ndarray.MustParseDType(">i4"), Shape: []int{2, 1}, Offset: 18},
	}, 0)
	require.NoError(t, err)
	data := make([]byte, 2*rec.ItemSize)
	for i := range data {
		data[i] = byte(i * 11)
	}
	a, err := ndarray.New(rec, []int{2}, data)
	require.NoError(t, err)
	packed, err := MsgpackNumpy.Marshal(a)
	require.NoError(t, err)
	out := pypeer.Run(t, `
import numpy as np
import msgpack_numpy as m
packed = sys.stdin.buffer.read()
arr = msgpack.unpackb(packed, object_hook=m.decode)
want = np.dtype([('x', '<f8'), ('b', [('c', '>u2'), ('d', 'S3')], (2,)), ('é', '>i4', (2, 1))])
print(arr.dtype == want, arr.shape, arr.tobytes() == bytes((i * 11) % 256 for i in range(len(arr.tobytes()))),
      msgpack.packb(arr, default=m.encode, use_bin_type=True) == packed)
`, packed)
	assert.Equal(t, "True (2,) True True\n", string(out))
}

func TestRecordRefusals(t *testing.T) {
	data := []byte("\xc4\x04data\xc4\x04\x00\x00\x00\x00")
	shape := []byte("\xc4\x05shape\x91\x01")
	mn := func(typ, kind string) []byte {
		b := []byte("\x85\xc4\x02nd\xc3\xc4\x04type")
		b = append(append(b, typ...), "\xc4\x04kind"...)
		b = append(append(b, kind...), shape...)
		return append(b, data...)
	}
	for name, c := range map[string]struct {
		in    []byte
		class error
		want  string
	}{
		"object field": {mn("\x91\x92\xa1o\xa2|O", "\xc4\x01V"), ErrPickle, "object array (pickle)"},
		"object type":  {mn("\xa2|O", "\xc4\x00"), ErrPickle, "object array (pickle)"},
		"V typestr":    {mn("\xa3|V4", "\xc4\x01V"), ndarray.ErrMalformed, "kind b'V' with a typestr"},
		"bad entry":    {mn("\x91\x91\xa1a", "\xc4\x01V"), ndarray.ErrMalformed, "descr entry 0 has 1 item"},
		"size":         {mn("\x91\x92\xa1a\xa3<i8", "\xc4\x01V"), ndarray.ErrDataLength, ""},
		"openpi": {[]byte("\x84\xc4\x0b__ndarray__\xc3\xc4\x04data\xc4\x04\x00\x00\x00\x00\xc4\x05dtype\x91\x92\xa1a\xa3<i4\xc4\x05shape\x91\x01"),
			ErrStructured, "OpenPI cannot carry record"},
	} {
		t.Run(name, func(t *testing.T) {
			_, _, err := Unmarshal(c.in)
			require.Error(t, err)
			assert.True(t, errors.Is(err, c.class), "%v", err)
			assert.ErrorContains(t, err, c.want)
			assert.ErrorContains(t, err, "dialect: ")
		})
	}
	// Older msgpack-numpy: a descr list without kind.
	a, _, err := Unmarshal(mn("\x91\x92\xa1a\xa3<i4", "\xc4\x00"))
	require.NoError(t, err)
	assert.Equal(t, "[('a', '<i4')]", a.DType.String())
}
