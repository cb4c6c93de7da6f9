package ndpack_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
)

const dialectCorpus = "../shared/corpus/dialects"

// arraysAt collects the arrays of a decoded message by their path, as the
// corpus names them ("/observation/image", "/frames/0").
func arraysAt(v any, path string, out map[string]*ndarray.Array) {
	switch x := v.(type) {
	case *ndarray.Array:
		out[path] = x
	case map[string]any:
		for k, e := range x {
			arraysAt(e, path+"/"+k, out)
		}
	case []any:
		for i, e := range x {
			arraysAt(e, fmt.Sprintf("%s/%d", path, i), out)
		}
	}
}

// Whole messages written by the real packers decode with their arrays
// where the packers put them.
func TestDialectMessagesFromCorpus(t *testing.T) {
	raw := sharedfiles.ReadFile(t, filepath.Join(dialectCorpus, "expected.json"))
	var expected map[string]struct {
		Arrays map[string]struct {
			Typestr string `json:"typestr"`
			Shape   []int  `json:"shape"`
			SHA256  string `json:"sha256"`
		} `json:"arrays"`
	}
	require.NoError(t, json.Unmarshal(raw, &expected))
	for name, e := range expected {
		b, err := os.ReadFile(filepath.Join(dialectCorpus, name+".msgpack"))
		require.NoError(t, err)
		var v any
		require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(b, &v), name)
		got := map[string]*ndarray.Array{}
		arraysAt(v, "", got)
		require.Len(t, got, len(e.Arrays), name)
		for path, w := range e.Arrays {
			a := got[path]
			require.NotNil(t, a, "%s: %q", name, path)
			s := sha256.Sum256(a.Data)
			assert.Equal(t, w.SHA256, hex.EncodeToString(s[:]), "%s %s", name, path)
			assert.Equal(t, w.Typestr, a.DType.String())
		}
	}
	// With NoDialects, the maps stay maps.
	b, _ := os.ReadFile(filepath.Join(dialectCorpus, "pi_policy_request.msgpack"))
	var v map[string]any
	require.NoError(t, ndpack.MessageOptions{NoDialects: true}.UnmarshalMessage(b, &v))
	_, isArray := v["observation/image"].(*ndarray.Array)
	assert.False(t, isArray)
}

// A marker key that is not first is still found; a dialect map that lies
// about its data is an error.
func TestDialectKeyOrderAndLies(t *testing.T) {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	a, _ = a.ToOrder('<')
	late := map[string]any{"shape": []int{3}, "dtype": "<i2", "data": a.Data, "__ndarray__": true}
	msg, _ := msgpack.Marshal(map[string]any{"x": late, "n": 1})
	var v map[string]any
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(msg, &v))
	assert.True(t, a.Equal(v["x"].(*ndarray.Array)))

	late["shape"] = []int{4}
	msg, _ = msgpack.Marshal(map[string]any{"x": late})
	err := ndpack.MessageOptions{}.UnmarshalMessage(msg, &v)
	assert.ErrorIs(t, err, ndarray.ErrDataLength)
	assert.True(t, strings.HasPrefix(err.Error(), "dialect: "), err.Error())
}

// Messages can be written with arrays in either dialect, which the Python
// peers read as arrays.
func TestMarshalMessageInDialects(t *testing.T) {
	pypeer.RequireModule(t, "msgpack_numpy", "python3-msgpack-numpy")
	img, _ := ndarray.FromSlice([]uint8{1, 2, 3, 4, 5, 6}, 2, 3)
	state, _ := ndarray.FromSlice([]float32{0.5, -1})
	state, _ = state.ToOrder('<')
	msg := map[string]any{"observation/image": img, "observation/state": state, "prompt": "pick"}
	var blobs []string
	for _, d := range []dialect.Dialect{dialect.MsgpackNumpy, dialect.OpenPI} {
		b, err := ndpack.MessageOptions{Encoding: d}.MarshalMessage(msg)
		require.NoError(t, err)
		blobs = append(blobs, hex.EncodeToString(b))
		var back map[string]any
		require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(b, &back))
		assert.True(t, img.Equal(back["observation/image"].(*ndarray.Array)), d)
	}
	in, _ := json.Marshal(blobs)
	out := pypeer.Run(t, `
import json
import numpy as np
import msgpack_numpy as m
def openpi(obj):
    if b"__ndarray__" in obj:
        return np.ndarray(buffer=obj[b"data"], dtype=np.dtype(obj[b"dtype"]), shape=obj[b"shape"])
    return obj
mn, pi = json.load(sys.stdin)
res = []
for h, hook in ((mn, m.decode), (pi, openpi)):
    d = msgpack.unpackb(bytes.fromhex(h), object_hook=hook)
    res.append([d["prompt"], d["observation/image"].tolist(), d["observation/state"].tolist()])
print(json.dumps(res))
`, in)
	var res [][]any
	require.NoError(t, json.Unmarshal(out, &res))
	want := []any{"pick", []any{[]any{1.0, 2.0, 3.0}, []any{4.0, 5.0, 6.0}}, []any{0.5, -1.0}}
	assert.Equal(t, [][]any{want, want}, res)
}

// Record arrays travel in messages as ext 110 (pack_ndarray's form) and as
// msgpack-numpy maps, both found by the dialect-aware decoder with their
// fields; OpenPI, which cannot carry them, refuses them.
func TestRecordsInMessages(t *testing.T) {
	pypeer.RequireModule(t, "msgpack_numpy", "python3-msgpack-numpy")
	out := pypeer.Run(t, `
import numpy as np
import msgpack_numpy as m
dt = np.dtype([('t', '<f8'), ('pos', '>f4', (3,)), ('id', [('a', 'u1'), ('b', 'S2')])], align=True)
rec = np.zeros(2, dt)
rec['t'] = [1.5, 2.5]
rec['pos'][1] = [1, 2, 3]
rec['id']['b'] = [b'ab', b'cd']
msg = {"ext": pack_ndarray(rec), "mn": rec, "n": 3}
sys.stdout.buffer.write(msgpack.packb(msg, default=m.encode, use_bin_type=True))
`, nil)
	var v map[string]any
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(out, &v))
	ext, mn := v["ext"].(*ndarray.Array), v["mn"].(*ndarray.Array)
	require.NotNil(t, ext)
	require.NotNil(t, mn)
	// str(numpy.lib.format.descr_to_dtype(dt.descr))
	const want = "{'names': ['t', 'pos', 'id'], 'formats': ['<f8', ('>f4', (3,)), [('a', 'u1'), ('b', 'S2')]], 'offsets': [0, 8, 20], 'itemsize': 24}"
	assert.Equal(t, want, ext.DType.String())
	assert.True(t, ext.Equal(mn), "ext 110 and msgpack-numpy carry the same record array")
	f, ok := ext.DType.FieldByName("id")
	require.True(t, ok)
	assert.Equal(t, 20, f.Offset)
	assert.Equal(t, "ab", string(ext.Data[21:23]))

	// Written by ndpack: msgpack-numpy and (with the option) ext 110 come
	// back as they went; OpenPI refuses.
	b, err := ndpack.MessageOptions{Encoding: dialect.MsgpackNumpy}.MarshalMessage(map[string]any{"rec": ext})
	require.NoError(t, err)
	var back map[string]any
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(b, &back))
	assert.True(t, ext.Equal(back["rec"].(*ndarray.Array)))
	b, err = ndpack.MessageOptions{AllowNonstandard: true}.MarshalMessage(map[string]any{"rec": ext})
	require.NoError(t, err)
	back = nil
	require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(b, &back))
	assert.True(t, ext.Equal(back["rec"].(*ndarray.Array)))
	_, err = ndpack.MessageOptions{}.MarshalMessage(map[string]any{"rec": ext})
	assert.ErrorIs(t, err, ndarray.ErrNonstandard)
	_, err = ndpack.MessageOptions{Encoding: dialect.OpenPI}.MarshalMessage(map[string]any{"rec": ext})
	assert.ErrorIs(t, err, dialect.ErrStructured)
}

// Messages in a dialect are sized before they are written: one buffer of
// the message's size, the array copied once.
func TestMarshalMessageInDialectExactSize(t *testing.T) {
	a, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), 1<<20)
	for _, d := range []dialect.Dialect{dialect.MsgpackNumpy, dialect.OpenPI} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b, err := ndpack.MessageOptions{Encoding: d}.MarshalMessage(map[string]any{"x": a, "prompt": "p"})
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		assert.Equal(t, len(b), cap(b), d.String())
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(8<<20+64<<10), "%s: one buffer", d)
		var back map[string]any
		require.NoError(t, ndpack.MessageOptions{}.UnmarshalMessage(b, &back))
		assert.True(t, a.Equal(back["x"].(*ndarray.Array)))
	}
}
