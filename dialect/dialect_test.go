package dialect

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const corpusDir = "../../shared/corpus/dialects"

// corpusEntry is expected.json's description of one message.
type corpusEntry struct {
	Dialect    string `json:"dialect"`
	UseBinType bool   `json:"use_bin_type"`
	Arrays     map[string]struct {
		Typestr string `json:"typestr"`
		Shape   []int  `json:"shape"`
		SHA256  string `json:"sha256"`
	} `json:"arrays"`
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Every single-array message the real packers wrote decodes to the array
// they describe, and ndpack encodes that array back to the same bytes.
func TestCorpus(t *testing.T) {
	raw := sharedfiles.ReadFile(t, filepath.Join(corpusDir, "expected.json"))
	var expected map[string]corpusEntry
	require.NoError(t, json.Unmarshal(raw, &expected))
	names := make([]string, 0, len(expected))
	for n := range expected {
		names = append(names, n)
	}
	sort.Strings(names)
	single := 0
	for _, name := range names {
		e := expected[name]
		w, ok := e.Arrays[""]
		if !ok {
			continue // whole messages: see the message tests
		}
		single++
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(corpusDir, name+".msgpack"))
			require.NoError(t, err)
			a, d, err := Unmarshal(b)
			require.NoError(t, err)
			assert.Equal(t, e.Dialect, d.String())
			assert.Equal(t, w.Typestr, a.DType.String())
			assert.Equal(t, w.Shape, append([]int{}, a.Shape...))
			assert.Equal(t, w.SHA256, sha(a.Data))
			if e.UseBinType {
				again, err := d.Marshal(a)
				require.NoError(t, err)
				assert.Equal(t, hex.EncodeToString(b), hex.EncodeToString(again), "encoded as the packer encodes it")
			}
		})
	}
	assert.Greater(t, single, 200)
}

// Both ways with Debian's python3-msgpack-numpy, every standard dtype and
// the usual shapes: ndpack decodes what it packs, packs byte for byte what
// it packs, and it decodes what ndpack packs to the same array.
func TestMsgpackNumpyPeer(t *testing.T) {
	pypeer.RequireModule(t, "msgpack_numpy", "python3-msgpack-numpy")
	out := pypeer.Run(t, `
import json
import numpy as np
import msgpack_numpy as m
rng = np.random.default_rng(11)
res = []
for ts in ["|b1", "|i1", "<i2", ">i2", "<i4", ">i8", "|u1", "<u2", ">u4", "<u8", "<f2", ">f4", "<f8", ">f8", "<c8", ">c16", "<U3", "|S4"]:
    for shape in [(), (0,), (1,), (5,), (3, 4), (2, 0, 3), (2, 3, 4)]:
        dt = np.dtype(ts)
        n = int(np.prod(shape, dtype=np.int64))
        if dt.kind == "b":
            a = rng.integers(0, 2, n).astype(dt).reshape(shape)
        else:
            a = np.frombuffer(rng.bytes(n * dt.itemsize), dtype=dt).reshape(shape)
        res.append({"typestr": ts, "shape": list(shape), "data": a.tobytes().hex(),
                    "packed": msgpack.packb(a, default=m.encode, use_bin_type=True).hex()})
print(json.dumps(res))
`, nil)
	var cases []struct {
		Typestr string `json:"typestr"`
		Shape   []int  `json:"shape"`
		Data    string `json:"data"`
		Packed  string `json:"packed"`
	}
	require.NoError(t, json.Unmarshal(out, &cases))
	var ours []string
	for _, c := range cases {
		data, _ := hex.DecodeString(c.Data)
		want, err := ndarray.New(ndarray.MustParseDType(c.Typestr), c.Shape, data)
		require.NoError(t, err)
		packed, _ := hex.DecodeString(c.Packed)
		got, d, err := Unmarshal(packed)
		require.NoError(t, err, "%s %v", c.Typestr, c.Shape)
		assert.Equal(t, MsgpackNumpy, d)
		assert.True(t, want.Equal(got), "%s %v decoded", c.Typestr, c.Shape)
		b, err := MsgpackNumpy.Marshal(want)
		require.NoError(t, err)
		assert.Equal(t, c.Packed, hex.EncodeToString(b), "%s %v encoded", c.Typestr, c.Shape)
		ours = append(ours, hex.EncodeToString(b))
	}
	in, _ := json.Marshal(ours)
	back := pypeer.Run(t, `
import json
import numpy as np
import msgpack_numpy as m
res = []
for h in json.load(sys.stdin):
    a = msgpack.unpackb(bytes.fromhex(h), object_hook=m.decode)
    res.append([a.dtype.str, list(a.shape), a.tobytes().hex()])
print(json.dumps(res))
`, in)
	var decoded [][]any
	require.NoError(t, json.Unmarshal(back, &decoded))
	require.Len(t, decoded, len(cases))
	for i, c := range cases {
		assert.Equal(t, c.Typestr, decoded[i][0])
		assert.Equal(t, c.Data, decoded[i][2], "%s %v", c.Typestr, c.Shape)
	}
	t.Logf("%d arrays both ways", len(cases))
}

// OpenPI maps ndpack writes are read, by the rules of openpi_client's
// unpack (np.ndarray(buffer=data, dtype=np.dtype(dtype), shape=shape)),
// to the arrays written.
func TestOpenPIPeer(t *testing.T) {
	var blobs, want []string
	for _, ts := range []string{"|b1", "|i1", ">i2", "<i4", "<i8", "|u1", "<u2", ">u4", "<u8", "<f2", "<f4", ">f8", "<U3", "|S2"} {
		for _, shape := range [][]int{{}, {0}, {5}, {3, 4}, {2, 0, 3}} {
			dt := ndarray.MustParseDType(ts)
			n, _ := ndarray.ByteSize(dt, shape)
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(i*7 + 3)
				if dt.Kind == 'b' {
					data[i] &= 1
				}
			}
			a, err := ndarray.New(dt, shape, data)
			require.NoError(t, err)
			b, err := OpenPI.Marshal(a)
			require.NoError(t, err)
			blobs = append(blobs, hex.EncodeToString(b))
			want = append(want, ts+" "+ndarray.FormatShape(shape)+" "+hex.EncodeToString(data))
		}
	}
	in, _ := json.Marshal(blobs)
	out := pypeer.Run(t, `
import json
import numpy as np
def unpack(obj):
    if b"__ndarray__" in obj:
        return np.ndarray(buffer=obj[b"data"], dtype=np.dtype(obj[b"dtype"]), shape=obj[b"shape"])
    return obj
res = []
for h in json.load(sys.stdin):
    a = msgpack.unpackb(bytes.fromhex(h), object_hook=unpack)
    res.append("%s %s %s" % (a.dtype.str, str(a.shape).replace(",)", ",)"), a.tobytes().hex()))
print(json.dumps(res))
`, in)
	var got []string
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Equal(t, want, got)
}

func TestRefusals(t *testing.T) {
	good, _ := MsgpackNumpy.Marshal(mustArray(t))
	openpi, _ := OpenPI.Marshal(mustArray(t))
	cases := map[string]struct {
		in   []byte
		want error
	}{
		"pickle":       {bytes.Replace(good, []byte("\xc4\x04kind\xc4\x00"), []byte("\xc4\x04kind\xc4\x01O"), 1), ErrPickle},
		"structured":   {bytes.Replace(openpi, []byte("\xc4\x05dtype\xa3<i2"), []byte("\xc4\x05dtype\x91\x92\xa1a\xa3<i2"), 1), ErrStructured},
		"short data":   {bytes.Replace(good, []byte("\xc4\x0c"), []byte("\xc4\x0b"), 1)[:len(good)-1], ndarray.ErrDataLength},
		"truncated":    {good[:len(good)-3], ndarray.ErrTruncated},
		"not a map":    {[]byte{0x93, 1, 2, 3}, ndarray.ErrNotArray},
		"plain map":    {[]byte{0x81, 0xa1, 'a', 0x01}, ndarray.ErrNotArray},
		"trailing":     {append(append([]byte{}, good...), 0xc0), ndarray.ErrMalformed},
		"neg dim":      {bytes.Replace(good, []byte("\x92\x02\x03"), []byte("\x92\xff\xfa"), 1), ndarray.ErrShape},
		"huge claim":   {[]byte{0x85, 0xc4, 0x02, 'n', 'd', 0xc3, 0xc4, 0x04, 'd', 'a', 't', 'a', 0xc6, 0xff, 0xff, 0xff, 0xf0}, ndarray.ErrTruncated},
		"bad typestr":  {bytes.Replace(good, []byte("<i2"), []byte("<i3"), 1), ndarray.ErrDType},
		"OpenPI false": {[]byte("\x84\xc4\x0b__ndarray__\xc2"), ndarray.ErrMalformed},
	}
	for name, c := range cases {
		_, _, err := Unmarshal(c.in)
		assert.ErrorIs(t, err, c.want, "%s: %v", name, err)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "dialect: "), err.Error())
		}
	}
	c, _ := ndarray.FromSlice([]complex64{1})
	_, err := OpenPI.Marshal(c)
	assert.ErrorIs(t, err, ErrUnsupported)
	dtm, _ := ndarray.New(ndarray.MustParseDType("<M8[D]"), []int{1}, make([]byte, 8))
	_, err = MsgpackNumpy.Marshal(dtm)
	assert.ErrorIs(t, err, ErrUnsupported)
	b, err := OpenPI.Marshal(dtm)
	require.NoError(t, err, "OpenPI sends datetimes")
	back, _, err := Unmarshal(b)
	require.NoError(t, err)
	assert.True(t, dtm.Equal(back))
}

// Numpy scalars of both dialects decode as 0-d arrays; the OpenPI form holds
// the value as a native msgpack number.
func TestScalars(t *testing.T) {
	mn, _ := hex.DecodeString("83c4026e64c2c40474797065a33c6938c40464617461c4080500000000000000")
	a, d, err := Unmarshal(mn)
	require.NoError(t, err)
	assert.Equal(t, MsgpackNumpy, d)
	v, _ := ndarray.At[int64](a)
	assert.Equal(t, "<i8 ()", a.String())
	assert.Equal(t, int64(5), v)
	pi, _ := hex.DecodeString("83c40d5f5f6e7067656e657269635f5fc3c40464617461cb3ff8000000000000c4056474797065a33c6634")
	a, d, err = Unmarshal(pi)
	require.NoError(t, err)
	assert.Equal(t, OpenPI, d)
	f, _ := ndarray.At[float32](a)
	assert.Equal(t, "<f4 ()", a.String())
	assert.Equal(t, float32(1.5), f)
}

func mustArray(t *testing.T) *ndarray.Array {
	a, err := ndarray.FromSlice([]int16{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	a, _ = a.ToOrder('<')
	return a
}
