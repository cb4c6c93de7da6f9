package ext110

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// interopCase is one array both peers build: dtype and shape.
type interopCase struct {
	Typestr string `json:"typestr" msgpack:"typestr"`
	Shape   []int  `json:"shape" msgpack:"shape"`
}

// interopCases covers every standard dtype in both byte orders over the
// issue's shapes, plus uint8 and float64 arrays whose payloads sit on each
// side of the ext8/ext16/ext32 boundaries.
func interopCases(t *testing.T) []interopCase {
	var cases []interopCase
	shapes := [][]int{{}, {0}, {1}, {7}, {3, 4}, {2, 0, 3}, {2, 3, 4}}
	for _, kind := range []string{"b1", "i1", "u1", "i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "f16", "c8", "c16", "c32"} {
		orders := []string{"<", ">"}
		if kind == "b1" || kind == "i1" || kind == "u1" {
			orders = []string{"|"}
		}
		for _, o := range orders {
			for _, s := range shapes {
				cases = append(cases, interopCase{o + kind, s})
			}
		}
	}
	for _, p := range []int{254, 255, 256, 257, 65534, 65535, 65536, 65537} {
		cases = append(cases, interopCase{"|u1", []int{elementsForPayload(t, p)}})
	}
	cases = append(cases, interopCase{"<f8", []int{8190, 5}}, interopCase{">f8", []int{70000}})
	return cases
}

// The peers exchange, per array: its ext 110 object and its bytes in
// little-endian order, the value check that does not depend on the codec.
type interopArray struct {
	Typestr string `msgpack:"typestr"`
	Shape   []int  `msgpack:"shape"`
	Packed  []byte `msgpack:"packed"`
	LE      []byte `msgpack:"le"`
}

// pyHelpers is what the scripts below use besides the reference code.
const pyHelpers = pypeer.Helpers + "\nimport json\n"

func TestInteropPythonToGo(t *testing.T) {
	cases := interopCases(t)
	in, _ := json.Marshal(cases)
	out := pypeer.Run(t, pyHelpers+`
rng = np.random.default_rng(110)
res = []
for c in json.load(sys.stdin):
    arr = random_array(rng, c["typestr"], c["shape"])
    assert arr.dtype.str == c["typestr"], (arr.dtype.str, c)
    res.append({"typestr": c["typestr"], "shape": c["shape"],
                "packed": msgpack.packb(pack_ndarray(arr)), "le": little_endian_bytes(arr)})
sys.stdout.buffer.write(msgpack.packb(res))
`, in)
	var arrays []interopArray
	require.NoError(t, msgpack.Unmarshal(out, &arrays))
	require.Len(t, arrays, len(cases))
	for _, p := range arrays {
		t.Run(fmt.Sprintf("%s%v", p.Typestr, p.Shape), func(t *testing.T) {
			a, err := Unmarshal(p.Packed)
			require.NoError(t, err)
			assert.Equal(t, p.Typestr, a.DType.String())
			assert.Equal(t, p.Shape, a.Shape)
			little, err := a.ToOrder('<')
			require.NoError(t, err)
			assert.True(t, bytes.Equal(p.LE, little.Data), "values differ")
			again, err := Marshal(a)
			require.NoError(t, err)
			assert.True(t, bytes.Equal(p.Packed, again), "re-encoding differs from pack_ndarray:\n% x\n% x", p.Packed[:min(64, len(p.Packed))], again[:min(64, len(again))])
		})
	}
}

func TestInteropGoToPython(t *testing.T) {
	rng := rand.New(rand.NewPCG(110, 3))
	var arrays []interopArray
	for _, c := range interopCases(t) {
		dt := ndarray.MustParseDType(c.Typestr)
		n, err := ndarray.ByteSize(dt, c.Shape)
		require.NoError(t, err)
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.Uint32())
			if dt.Kind == 'b' {
				data[i] &= 1
			}
		}
		a, err := ndarray.New(dt, c.Shape, data)
		require.NoError(t, err)
		packed, err := Marshal(a)
		require.NoError(t, err)
		little, err := a.ToOrder('<')
		require.NoError(t, err)
		arrays = append(arrays, interopArray{c.Typestr, c.Shape, packed, little.Data})
	}
	in, err := msgpack.Marshal(arrays)
	require.NoError(t, err)
	out := pypeer.Run(t, pyHelpers+`
failures = []
arrays = msgpack.unpackb(sys.stdin.buffer.read())
for c in arrays:
    name = c["typestr"] + str(c["shape"])
    arr = msgpack.unpackb(c["packed"], ext_hook=ext_hook)
    if not isinstance(arr, np.ndarray):
        failures.append(name + ": ext_hook gave " + repr(type(arr)))
        continue
    if arr.dtype.str != c["typestr"] or arr.shape != tuple(c["shape"]):
        failures.append(name + ": got " + arr.dtype.str + str(arr.shape))
    elif little_endian_bytes(arr) != c["le"]:
        failures.append(name + ": values differ")
    elif msgpack.packb(pack_ndarray(arr)) != c["packed"]:
        failures.append(name + ": pack_ndarray writes other bytes")
print(json.dumps({"checked": len(arrays), "failures": failures}))
`, in)
	var res struct {
		Checked  int      `json:"checked"`
		Failures []string `json:"failures"`
	}
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	assert.Equal(t, len(arrays), res.Checked)
	assert.Empty(t, res.Failures)
}

// TestInteropNestedMessage checks an array inside a larger msgpack message,
// as yaq RPC carries it, decoded by msgpack-python with the reference hook.
func TestInteropNestedMessage(t *testing.T) {
	img := le(ndarray.FromSlice([]uint16{1, 2, 3, 4, 5, 6}, 2, 3))
	msg, err := msgpack.Marshal(map[string]any{"id": 1, "result": map[string]any{"image": img}})
	require.NoError(t, err)
	out := pypeer.Run(t, `
import numpy as np
m = msgpack.unpackb(sys.stdin.buffer.read(), ext_hook=ext_hook)
a = m["result"]["image"]
print(m["id"], a.dtype.str, a.shape, a.tolist())
`, msg)
	assert.Equal(t, "1 <u2 (2, 3) [[1, 2, 3], [4, 5, 6]]\n", string(out))
}
