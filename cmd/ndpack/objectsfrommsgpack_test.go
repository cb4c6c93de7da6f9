package main

import (
	"bytes"
	"math"
	"math/big"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/npybridge"
)

// convert --objects of a msgpack list of plain values writes the object
// array numpy reads back equal, element by element and type by type.
func TestObjectsFromMsgpackList(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "list.msgpack"), filepath.Join(dir, "out.npy")
	const values = `["a", "\u00e9\u2603", 1, -7, 2**64 - 1, None, True, 2.5, float("inf"), b"xy", [1, [2, 3]], [], [[1], [2, 3]], {"k": 1, 2: [None]}, {}]`
	pypeer.Run(t, pypeer.Helpers+`
open(sys.argv[1], "wb").write(msgpack.packb(`+values+`))
`, nil, in)
	r := cli(t, nil, "convert", "--objects", in, out)
	require.Equal(t, 0, r.code, r.stderr)
	got := pypeer.Run(t, pypeer.Helpers+`
want = `+values+`
a = np.load(sys.argv[1], allow_pickle=True)
assert a.dtype == object and a.shape == (len(want),), (a.dtype, a.shape)
def same(x, y):
    if type(x) is not type(y):
        return False
    if isinstance(x, list):
        return len(x) == len(y) and all(same(p, q) for p, q in zip(x, y))
    if isinstance(x, dict):
        return list(x) == list(y) and all(same(x[k], y[k]) for k in x)
    return x == y
for i, (x, y) in enumerate(zip(a, want)):
    print(i, same(x, y), repr(x))
`, nil, out)
	assert.Equal(t, "0 True 'a'\n1 True 'é☃'\n2 True 1\n3 True -7\n4 True 18446744073709551615\n5 True None\n6 True True\n7 True 2.5\n8 True inf\n9 True b'xy'\n10 True [1, [2, 3]]\n11 True []\n12 True [[1], [2, 3]]\n13 True {'k': 1, 2: [None]}\n14 True {}\n", string(got))

	// ndpack reads back what it wrote: the same values.
	a, err := npybridge.ReadOptions{AllowObjects: true}.ReadObjects(bytes.NewReader(readFile(t, out)))
	require.NoError(t, err)
	assert.Equal(t, []int{15}, a.Shape)
	assert.Equal(t, "a", a.Values[0])
	assert.Equal(t, "é☃", a.Values[1])
	assert.Nil(t, a.Values[5])

	// Without --objects the list is still refused, as before.
	r = cli(t, nil, "convert", in, filepath.Join(dir, "no.npy"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "a list holding no array")
}

// FuzzObjectsFromMsgpack: any msgpack list read as --objects reads it
// either fails or writes a pickle that ndpack's own reader reads back to
// the same values. Nothing may panic.
func FuzzObjectsFromMsgpack(f *testing.F) {
	f.Add([]byte("\x93\xa1a\x01\xc0"))
	f.Add([]byte("\x92\x91\x01\x92\x02\x03"))
	f.Add([]byte("\x91\x81\xa1k\xc4\x02xy"))
	f.Add([]byte("\x92\xcf\xff\xff\xff\xff\xff\xff\xff\xff\xcb\x40\x04\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 || b[0]&0xf0 != 0x90 && b[0] != 0xdc && b[0] != 0xdd {
			return
		}
		a, err := listObjects(b).objects()
		if err != nil {
			return
		}
		pk, err := npybridge.AppendObjects(nil, a)
		if err != nil {
			return // a value pickle cannot carry: refused, not written
		}
		back, err := npybridge.ReadOptions{AllowObjects: true}.ReadObjects(bytes.NewReader(pk))
		if err != nil {
			t.Fatalf("ndpack cannot read the object array it wrote: %v", err)
		}
		if !reflect.DeepEqual(normalObjects(a.Values), normalObjects(back.Values)) {
			t.Fatalf("read back %#v, wrote %#v", back.Values, a.Values)
		}
	})
}

// normalObjects is values with what the pickle round trip may spell
// differently made alike: a uint64 is read back as a *big.Int, an empty
// list may be nil, and a float is compared by its bits (NaN included).
func normalObjects(v any) any {
	switch x := v.(type) {
	case uint64:
		return new(big.Int).SetUint64(x).String()
	case int64:
		return big.NewInt(x).String()
	case *big.Int:
		return x.String()
	case float64:
		return math.Float64bits(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalObjects(e)
		}
		return out
	case npybridge.Dict:
		out := make([]any, 0, 2*len(x))
		for _, it := range x {
			out = append(out, normalObjects(it.Key), normalObjects(it.Value))
		}
		return out
	}
	return v
}
