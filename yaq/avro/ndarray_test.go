package avro

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An independent Avro implementation, Debian's python3-avro, writes the
// record as ndpack does, and reads what ndpack writes.
func TestArrayRecordWithPythonAvro(t *testing.T) {
	pypeer.RequireModule(t, "avro", "python3-avro")
	out := pypeer.Run(t, `
import io, json
import numpy as np
import avro.schema, avro.io
schema = avro.schema.parse(sys.argv[1])
rng = np.random.default_rng(113)
res = []
for ts in ["|b1", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u4", "<u8", "<f2", "<f4", ">f8", "<c8", ">c16"]:
    for shape in [(), (0,), (1,), (5,), (64,), (3, 4), (2, 0, 3), (2048, 2048) if ts == "<u2" else (2, 3, 4)]:
        dt = np.dtype(ts)
        n = int(np.prod(shape, dtype=np.int64))
        a = (rng.integers(0, 2, n).astype(dt) if dt.kind == "b" else np.frombuffer(rng.bytes(n * dt.itemsize), dtype=dt)).reshape(shape)
        buf = io.BytesIO()
        avro.io.DatumWriter(schema).write({"shape": list(shape), "typestr": ts, "data": a.tobytes(), "version": 3}, avro.io.BinaryEncoder(buf))
        res.append({"typestr": ts, "shape": list(shape), "data": a.tobytes().hex(), "avro": buf.getvalue().hex()})
print(json.dumps(res))
`, nil, ArraySchema)
	var cases []struct {
		Typestr string `json:"typestr"`
		Shape   []int  `json:"shape"`
		Data    string `json:"data"`
		Avro    string `json:"avro"`
	}
	require.NoError(t, json.Unmarshal(out, &cases))
	var ours []string
	for _, c := range cases {
		data, _ := hex.DecodeString(c.Data)
		want, err := ndarray.New(ndarray.MustParseDType(c.Typestr), c.Shape, data)
		require.NoError(t, err)
		rec, _ := hex.DecodeString(c.Avro)
		got, n, err := DecodeArray(append(rec, 0xff)) // a byte after it is left alone
		require.NoError(t, err, "%s %v", c.Typestr, c.Shape)
		assert.Equal(t, len(rec), n)
		assert.True(t, want.Equal(got), "%s %v decoded", c.Typestr, c.Shape)
		b, err := ArrayOptions{}.AppendArray(nil, want)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(rec, b), "%s %v encoded as python3-avro encodes it", c.Typestr, c.Shape)
		ours = append(ours, hex.EncodeToString(b))
	}
	in, _ := json.Marshal(ours)
	back := pypeer.Run(t, `
import io, json
import avro.schema, avro.io
schema = avro.schema.parse(sys.argv[1])
res = []
for h in json.load(sys.stdin):
    r = avro.io.DatumReader(schema).read(avro.io.BinaryDecoder(io.BytesIO(bytes.fromhex(h))))
    res.append([r["typestr"], r["shape"], r["data"].hex(), r["version"]])
print(json.dumps(res))
`, in, ArraySchema)
	var decoded [][]any
	require.NoError(t, json.Unmarshal(back, &decoded))
	require.Len(t, decoded, len(cases))
	for i, c := range cases {
		assert.Equal(t, c.Typestr, decoded[i][0])
		assert.Equal(t, c.Data, decoded[i][2])
		assert.Equal(t, 3.0, decoded[i][3])
	}
	t.Logf("%d records both ways", len(cases))
}

// Blocks written with a negative count (and their byte size), as Avro
// allows, read as well; lengths and dimensions that lie are refused.
func TestArrayRecordRefusals(t *testing.T) {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3, 4, 5, 6}, 2, 3)
	a, _ = a.ToOrder('<')
	good, err := ArrayOptions{}.AppendArray(nil, a)
	require.NoError(t, err)
	// shape as one block of -2 items (2 bytes): 03 04 04 06 00
	negBlock := append([]byte{0x03, 0x04, 0x04, 0x06, 0x00}, good[4:]...)
	got, _, err := DecodeArray(negBlock)
	require.NoError(t, err)
	assert.True(t, a.Equal(got))

	for name, c := range map[string]struct {
		in   []byte
		want error
	}{
		"truncated":         {good[:len(good)-1], ndarray.ErrTruncated},
		"empty":             {nil, ndarray.ErrTruncated},
		"data too short":    {append(append([]byte{0x04, 0x04, 0x06, 0x00, 0x06, '<', 'i', '2', 0x16}, make([]byte, 11)...), 0x06), ndarray.ErrDataLength},
		"huge data claim":   {[]byte{0x00, 0x06, '<', 'i', '2', 0xfe, 0xff, 0xff, 0xff, 0x0f}, ndarray.ErrTruncated},
		"negative length":   {[]byte{0x00, 0x01}, ndarray.ErrMalformed},
		"negative dim":      {[]byte{0x02, 0x01, 0x00}, ndarray.ErrMalformed},
		"dims claim":        {[]byte{0xfe, 0xff, 0xff, 0xff, 0x0f}, ndarray.ErrMalformed},
		"bad typestr":       {bytes.Replace(good, []byte("<i2"), []byte("<i3"), 1), ndarray.ErrDType},
		"overlong varint":   {bytes.Repeat([]byte{0xff}, 12), ndarray.ErrMalformed},
		"33 dims":           {append([]byte{0x42}, bytes.Repeat([]byte{0x02}, 33)...), ndarray.ErrMalformed},
		"dimension > int32": {[]byte{0x02, 0x80, 0x80, 0x80, 0x80, 0x10, 0x00}, ndarray.ErrMalformed},
	} {
		_, _, err := DecodeArray(c.in)
		assert.ErrorIs(t, err, c.want, "%s: %v", name, err)
		if err != nil {
			assert.True(t, strings.HasPrefix(err.Error(), "avro: "), err.Error())
		}
	}
	s, _ := ndarray.New(ndarray.MustParseDType("|S2"), []int{1}, []byte("ab"))
	_, err = ArrayOptions{}.AppendArray(nil, s)
	assert.ErrorIs(t, err, ndarray.ErrNonstandard)
	b, err := ArrayOptions{AllowNonstandard: true}.AppendArray(nil, s)
	require.NoError(t, err)
	back, _, err := DecodeArray(b)
	require.NoError(t, err)
	assert.True(t, s.Equal(back))
}

func FuzzDecodeArray(f *testing.F) {
	for _, v := range [][]float64{{}, {1}, {1, 2, 3}} {
		a, _ := ndarray.FromSlice(v)
		b, _ := ArrayOptions{}.AppendArray(nil, a)
		f.Add(b)
	}
	f.Add([]byte{0x03, 0x04, 0x04, 0x06, 0x00, 0x06, '<', 'i', '2', 0x00, 0x06})
	f.Fuzz(func(t *testing.T, in []byte) {
		a, n, err := DecodeArray(in)
		if err != nil {
			return
		}
		if n > len(in) || a.Validate() != nil {
			t.Fatalf("took %d of %d bytes, or an invalid array", n, len(in))
		}
		b, err := ArrayOptions{AllowNonstandard: true}.AppendArray(nil, a)
		if err != nil {
			t.Fatal(err)
		}
		back, m, err := DecodeArray(b)
		if err != nil || m != len(b) || !back.Equal(a) {
			t.Fatalf("re-encoded record does not read back: %v", err)
		}
	})
}

// The records a real yaq daemon wrote: fake-camera's get_mappings answer
// (a map of null, ndarray or double) holds x_index and y_index, which read
// to the arrays yaqc decoded.
func TestArrayRecordFromRealDaemon(t *testing.T) {
	const dir = sharedYaq + "transcripts/"
	lines := sharedfiles.ReadFile(t, dir+"fake-camera.jsonl")
	var frame []byte
	for _, line := range strings.Split(string(lines), "\n") {
		var f struct {
			Seq   int    `json:"seq"`
			Frame string `json:"frame"`
		}
		if json.Unmarshal([]byte(line), &f) == nil && f.Seq == 112 {
			frame, _ = hex.DecodeString(f.Frame)
		}
	}
	require.NotNil(t, frame)
	// A map block of 3 entries: "x_index" -> union branch 1 (ndarray),
	// "y_index" -> branch 1, "mapping_id" -> branch 2 (double).
	r := reader{b: frame}
	count, err := r.varint("map block")
	require.NoError(t, err)
	assert.Equal(t, int64(3), count)
	want := map[string]string{
		"x_index": "<i2 (1, 512) 407715b8ded48be4426df98401cecd0e7ad61b9ad742649eb844de452d1c5f91",
		"y_index": "<i2 (256, 1) d93bf0591d37628e5f4aabec5c1969b05014fe5a19478ba3a1c7f2799e6dc84f",
	}
	for range 2 {
		key, err := r.bytes("key")
		require.NoError(t, err)
		branch, err := r.varint("union branch")
		require.NoError(t, err)
		assert.Equal(t, int64(1), branch, "the ndarray branch of [null, ndarray, double]")
		a, n, err := DecodeArray(frame[r.off:])
		require.NoError(t, err)
		r.off += n
		sum := sha256.Sum256(a.Data)
		assert.Equal(t, want[string(key)], a.String()+" "+hex.EncodeToString(sum[:]))
	}
}
