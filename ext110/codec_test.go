package ext110

import (
	"bytes"
	"math"
	"runtime"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// np.arange(6.).reshape(2, 3) as the reference pack_ndarray writes it
// (shared/specs/FACTS.md, checked against msgpack-python 1.0.3).
var arange6 = unhex("c7566e84a464617461c430" +
	"0000000000000000 000000000000f03f 0000000000000040 0000000000000840 0000000000001040 0000000000001440" +
	"a774797065737472a33c6638a57368617065920203a776657273696f6e03")

func TestMarshalGolden(t *testing.T) {
	a, err := ndarray.FromSlice([]float64{0, 1, 2, 3, 4, 5}, 2, 3)
	require.NoError(t, err)
	a, err = a.ToOrder('<')
	require.NoError(t, err)
	b, err := Marshal(a)
	require.NoError(t, err)
	assert.Equal(t, arange6, b)
	assert.Len(t, b, 89)
	n, err := Size(a)
	require.NoError(t, err)
	assert.Equal(t, 89, n)

	// np.array(5, dtype='>i2'): 0-d, shape is the empty array 0x90.
	s, err := ndarray.New(ndarray.MustParseDType(">i2"), nil, []byte{0, 5})
	require.NoError(t, err)
	b, err = Marshal(s)
	require.NoError(t, err)
	assert.Equal(t, unhex("c7266e84a464617461c4020005a774797065737472a33e6932a5736861706590a776657273696f6e03"), b)
}

func TestAppendKeepsPrefix(t *testing.T) {
	a, err := Unmarshal(arange6)
	require.NoError(t, err)
	dst := []byte("head")
	out, err := Options{}.Append(dst, a)
	require.NoError(t, err)
	assert.Equal(t, append([]byte("head"), arange6...), out)
}

func TestUnmarshalGolden(t *testing.T) {
	a, err := Unmarshal(arange6)
	require.NoError(t, err)
	assert.Equal(t, "<f8", a.DType.String())
	assert.Equal(t, []int{2, 3}, a.Shape)
	v, err := ndarray.Values[float64](a)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 2, 3, 4, 5}, v)

	// The default decode copies; the NoCopy one aliases the input, whose
	// data (from byte 11) is placed 8-aligned here: misaligned, it would be
	// copied once to align it.
	in := append(make([]byte, 5, 5+len(arange6)), arange6...)[5:]
	c, err := Unmarshal(in)
	require.NoError(t, err)
	z, err := UnmarshalNoCopy(in)
	require.NoError(t, err)
	in[11+8] = 0xff // first byte of element 1
	assert.Equal(t, byte(0x00), c.Data[8])
	assert.Equal(t, byte(0xff), z.Data[8])
}

func TestEncodeRefuses(t *testing.T) {
	s, err := ndarray.New(ndarray.MustParseDType("|S3"), []int{1}, []byte("abc"))
	require.NoError(t, err)
	_, err = Marshal(s)
	assert.ErrorIs(t, err, ndarray.ErrNonstandard)
	assert.Contains(t, err.Error(), "ext110: non-standard dtype: |S3 is outside YEP-110's standard kinds")
	b, err := Options{AllowNonstandard: true}.Marshal(s)
	require.NoError(t, err)
	back, err := Unmarshal(b)
	require.NoError(t, err)
	assert.True(t, s.Equal(back))

	bad := &ndarray.Array{DType: ndarray.DTypeOf[float64](), Shape: []int{2}, Data: make([]byte, 15)}
	_, err = Marshal(bad)
	assert.ErrorIs(t, err, ndarray.ErrDataLength)
	assert.ErrorIs(t, err, ndarray.ErrMalformed)

	// A payload over 2^32-1 bytes is refused before anything is read or
	// written.
	var sink countingWriter
	err = NewEncoder(&sink).EncodeFrom(ndarray.DTypeOf[uint8](), []int{1 << 32}, neverRead{t})
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	assert.Zero(t, sink.n)
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

type neverRead struct{ t *testing.T }

func (r neverRead) Read([]byte) (int, error) { r.t.Fatal("data was read"); return 0, nil }

func TestHeaderForms(t *testing.T) {
	// msgpack-python's choice of ext header by payload length, at each
	// boundary, for 1-d uint8 arrays.
	for _, c := range []struct{ payload, code, hlen int }{
		{255, 0xc7, 3}, {256, 0xc8, 4}, {65535, 0xc8, 4}, {65536, 0xc9, 6},
	} {
		n := elementsForPayload(t, c.payload)
		a, _ := ndarray.New(ndarray.DTypeOf[uint8](), []int{n}, make([]byte, n))
		b, err := Marshal(a)
		require.NoError(t, err)
		assert.Equal(t, byte(c.code), b[0], "payload %d", c.payload)
		assert.Len(t, b, c.payload+c.hlen)
		back, err := Unmarshal(b)
		require.NoError(t, err)
		assert.True(t, a.Equal(back))
	}
}

// elementsForPayload finds the 1-d uint8 length whose payload is exactly p.
func elementsForPayload(t *testing.T, p int) int {
	for n := max(0, p-64); n <= p; n++ {
		l, err := Options{}.layoutFor(ndarray.DTypeOf[uint8](), []int{n}, n)
		require.NoError(t, err)
		if l.payload == p {
			return n
		}
	}
	t.Fatalf("no length gives payload %d", p)
	return 0
}

func TestDecodeTolerates(t *testing.T) {
	data := []byte{1, 0, 2, 0, 3, 0}
	want, err := ndarray.New(ndarray.MustParseDType("<u2"), []int{3}, data)
	require.NoError(t, err)
	cases := map[string][]byte{
		"reordered keys": ext8(mpMap(mpStr("version"), []byte{3}, mpStr("shape"), []byte{0x91, 3},
			mpStr("typestr"), mpStr("<u2"), mpStr("data"), mpBin(data))),
		"data as str": ext8(mpMap(mpStr("data"), mpStr(string(data)), mpStr("typestr"), mpStr("<u2"),
			mpStr("shape"), []byte{0x91, 3}, mpStr("version"), []byte{3})),
		"extra descr and strides nil": ext8(mpMap(mpStr("data"), mpBin(data), mpStr("strides"), []byte{0xc0},
			mpStr("descr"), []byte{0x91, 0x92, 0xa0, 0xa3, '<', 'u', '2'},
			mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 3}, mpStr("version"), []byte{3})),
		"wide integers": ext8(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"),
			mpStr("shape"), []byte{0x91, 0xcf, 0, 0, 0, 0, 0, 0, 0, 3}, mpStr("version"), []byte{0xd3, 0, 0, 0, 0, 0, 0, 0, 3})),
		"signed int dims": ext8(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"),
			mpStr("shape"), []byte{0x91, 0xd0, 3}, mpStr("version"), []byte{3})),
		"ext32 on a small payload": ext32(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"),
			mpStr("shape"), []byte{0x91, 3}, mpStr("version"), []byte{3})),
		"other version, no version": ext8(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"),
			mpStr("shape"), []byte{0x91, 3})),
		"version 4": ext8(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"),
			mpStr("shape"), []byte{0x91, 3}, mpStr("version"), []byte{4})),
		"bin keys and map16": ext8(append([]byte{0xde, 0, 3}, append(append(append(
			mpBin([]byte("data")), mpBin(data)...), append(mpBin([]byte("typestr")), mpStr("<u2")...)...),
			append(mpBin([]byte("shape")), 0x91, 3)...)...)),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Unmarshal(in)
			require.NoError(t, err)
			assert.True(t, want.Equal(got), "%v", got)
			got, err = NewDecoder(bytesReader(in)).Decode()
			require.NoError(t, err)
			assert.True(t, want.Equal(got), "%v", got)
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	data := []byte{1, 0, 2, 0, 3, 0}
	ok := [][]byte{mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 3}, mpStr("version"), []byte{3}}
	with := func(extra ...[]byte) []byte { return mpMap(append(append([][]byte{}, ok...), extra...)...) }
	without := func(key string) []byte {
		var kv [][]byte
		for i := 0; i < len(ok); i += 2 {
			if string(ok[i][1:]) != key {
				kv = append(kv, ok[i], ok[i+1])
			}
		}
		return mpMap(kv...)
	}
	good := ext8(mpMap(ok...))
	cases := []struct {
		name  string
		in    []byte
		class error
		msg   string
	}{
		{"empty", nil, ndarray.ErrTruncated, "ext110: truncated input at byte 0: ext header needs 1 byte, 0 remain"},
		{"not ext", []byte{0x93, 1, 2, 3}, ndarray.ErrNotArray, "msgpack type byte 0x93 is not an ext header"},
		{"other ext code", append([]byte{0xc7, byte(len(good) - 3), 5}, good[3:]...), ndarray.ErrNotArray, "at byte 2: ext type 5, want 110"},
		{"negative ext code", append([]byte{0xc7, byte(len(good) - 3), 0xff}, good[3:]...), ndarray.ErrNotArray, "ext type -1, want 110"},
		{"truncated header", []byte{0xc9, 0, 0}, ndarray.ErrTruncated, "ext header needs 6 bytes"},
		{"truncated payload", good[:len(good)-1], ndarray.ErrTruncated, "ext header claims a 43-byte payload, 42 bytes remain"},
		{"4 GiB claim in 20 bytes", append([]byte{0xc9, 0xff, 0xff, 0xff, 0xff, 110}, make([]byte, 14)...), ndarray.ErrTruncated, "claims a 4294967295-byte payload"},
		{"trailing bytes", append(append([]byte{}, good...), 0xc0), ndarray.ErrMalformed, "1 byte after the ext 110 object"},
		{"payload not a map", ext8([]byte{0x93, 1, 2, 3}), ndarray.ErrMalformed, "payload is msgpack type byte 0x93, not a map"},
		{"missing shape", ext8(without("shape")), ndarray.ErrMalformed, `missing key "shape"`},
		{"missing typestr", ext8(without("typestr")), ndarray.ErrMalformed, `missing key "typestr"`},
		{"missing data", ext8(without("data")), ndarray.ErrMalformed, `missing key "data"`},
		{"left over in payload", ext8(append(mpMap(ok...), 0xc0)), ndarray.ErrMalformed, "1 byte left over inside the ext payload"},
		{"non-nil strides", ext8(with(mpStr("strides"), []byte{0x91, 2})), ErrStrided, "strides must be nil"},
		{"duplicate key", ext8(with(mpStr("shape"), []byte{0x91, 3})), ndarray.ErrMalformed, `duplicate key "shape"`},
		{"negative dimension", ext8(mpMap(mpStr("data"), mpBin(nil), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x92, 0xff, 0xff})), ndarray.ErrShape, "dimension 0 is negative (-1)"},
		{"dimension over int", ext8(mpMap(mpStr("data"), mpBin(nil), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 0xcf, 0xff, 0, 0, 0, 0, 0, 0, 0})), ndarray.ErrShape, "overflows int"},
		{"count overflow", ext8(mpMap(mpStr("data"), mpBin(nil), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x92, 0xcf, 0, 0, 0, 1, 0, 0, 0, 0, 0xcf, 0, 0, 0, 1, 0, 0, 0, 0})), ndarray.ErrShape, "element count of shape (4294967296, 4294967296) overflows int"},
		{"byte count overflow", ext8(mpMap(mpStr("data"), mpBin(nil), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})), ndarray.ErrShape, "byte count"},
		{"unknown typestr", ext8(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<q2"), mpStr("shape"), []byte{0x91, 3})), ndarray.ErrDType, `typestr "<q2": unknown kind 'q'`},
		{"data too short", ext8(mpMap(mpStr("data"), mpBin(data[:5]), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 3})), ndarray.ErrDataLength, "shape (3,) of <u2 needs 6 bytes, data has 5"},
		{"data too long", ext8(mpMap(mpStr("data"), mpBin(append(data, 0)), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 3})), ndarray.ErrDataLength, "needs 6 bytes, data has 7"},
		{"shape not array", ext8(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{3})), ndarray.ErrMalformed, "shape is msgpack type byte 0x03, not an array"},
		{"float dimension", ext8(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 0xca, 0x40, 0x40, 0, 0})), ndarray.ErrMalformed, "shape entry is msgpack type byte 0xca, not an integer"},
		{"key not a string", ext8(mpMap([]byte{1}, []byte{2})), ndarray.ErrMalformed, "map key is msgpack type byte 0x01, not str or bin"},
		{"huge map claim", ext8([]byte{0xdf, 0xff, 0xff, 0xff, 0xff}), ndarray.ErrTruncated, "map claims 4294967295, only 0 bytes remain"},
		{"huge shape claim", ext8(mpMap(mpStr("shape"), []byte{0xdd, 0xff, 0xff, 0xff, 0xff})), ndarray.ErrTruncated, "shape claims 4294967295"},
		{"huge skipped array", ext8(mpMap(mpStr("x"), []byte{0xdd, 0x7f, 0xff, 0xff, 0xff})), ndarray.ErrTruncated, "array claims 2147483647"},
		{"data bin claim", ext8(mpMap(mpStr("data"), []byte{0xc6, 0xff, 0xff, 0xff, 0xff})), ndarray.ErrTruncated, "data claims 4294967295"},
		{"fixext 16", append([]byte{0xd8, 110}, make([]byte, 16)...), ndarray.ErrMalformed, "payload is msgpack type byte 0x00, not a map"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Unmarshal(c.in)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.class)
			assert.Contains(t, err.Error(), c.msg)
			assert.Regexp(t, "^ext110: ", err.Error())
			// With the most an ext header frames, claims are checked as the
			// bytes arrive, as Unmarshal checks them.
			all := NewDecoder(bytesReader(c.in))
			all.MaxSize = 1<<32 - 1
			_, err = all.Decode()
			if len(c.in) == 0 {
				assert.Equal(t, "EOF", err.Error()) // an empty stream is a clean end
				return
			}
			if c.name == "trailing bytes" {
				// A stream reads the extra byte as the start of the next
				// object.
				dec := NewDecoder(bytesReader(c.in))
				_, err = dec.Decode()
				require.NoError(t, err)
				_, err = dec.Decode()
				assert.ErrorIs(t, err, ndarray.ErrNotArray)
				assert.Contains(t, err.Error(), "at byte 46: msgpack type byte 0xc0 is not an ext header")
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, c.class, "stream: %v", err)
		})
	}
}

func TestHostileClaimAllocatesLittle(t *testing.T) {
	in := append([]byte{0xc9, 0xff, 0xff, 0xff, 0xff, 110, 0x84, 0xa4, 'd', 'a', 't', 'a', 0xc6, 0xff, 0xff, 0xff, 0xf0}, 0, 0, 0)
	require.Len(t, in, 20)
	for name, decode := range map[string]func() error{
		"Unmarshal": func() error { _, err := Unmarshal(in); return err },
		"Decoder": func() error {
			dec := NewDecoder(bytesReader(in))
			dec.MaxSize = 1<<32 - 1
			_, err := dec.Decode()
			return err
		},
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		err := decode()
		runtime.ReadMemStats(&after)
		assert.ErrorIs(t, err, ndarray.ErrTruncated, name)
		assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "%s allocated too much", name)
	}
	// Within the default limit, the claim is refused before anything is
	// read.
	_, err := NewDecoder(bytesReader(in)).Decode()
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
}

func TestZeroCopyIgnoresSize(t *testing.T) {
	big, _ := ndarray.New(ndarray.DTypeOf[float64](), []int{1 << 17}, make([]byte, 8<<17))
	b, err := Marshal(big)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := UnmarshalNoCopy(b); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 3.0)
}

func TestBigEndianRoundTrip(t *testing.T) {
	a, _ := ndarray.FromSlice([]float64{math.Pi, math.Copysign(0, -1), math.Inf(-1)})
	be, _ := a.ToOrder('>')
	b, err := Marshal(be)
	require.NoError(t, err)
	got, err := Unmarshal(b)
	require.NoError(t, err)
	assert.Equal(t, ">f8", got.DType.String())
	assert.True(t, be.Equal(got))
}

func TestDecodeHeader(t *testing.T) {
	in := append(append([]byte{}, arange6...), 0xc0, 0xc0) // trailing bytes are allowed
	h, err := DecodeHeader(in)
	require.NoError(t, err)
	assert.Equal(t, "<f8", h.DType.String())
	assert.Equal(t, []int{2, 3}, h.Shape)
	assert.Equal(t, 11, h.DataOffset)
	assert.Equal(t, 48, h.DataLen)
	assert.Equal(t, 89, h.Len)
	a, _ := Unmarshal(arange6)
	assert.Equal(t, a.Data, in[h.DataOffset:h.DataOffset+h.DataLen])

	// Keys in another order: the data offset follows them.
	data := []byte{1, 0, 2, 0, 3, 0}
	in = ext8(mpMap(mpStr("shape"), []byte{0x91, 3}, mpStr("typestr"), mpStr("<u2"), mpStr("data"), mpBin(data)))
	h, err = DecodeHeader(in)
	require.NoError(t, err)
	assert.Equal(t, data, in[h.DataOffset:h.DataOffset+h.DataLen])

	_, err = DecodeHeader(arange6[:50])
	assert.ErrorIs(t, err, ndarray.ErrTruncated)
}

// The reference reads data from data+offset; ndpack would silently read
// from data. Only an offset of nil or 0 describes the bytes as they are.
func TestOffsetKey(t *testing.T) {
	data := []byte{1, 0, 2, 0, 3, 0}
	obj := func(offset []byte) []byte {
		return ext8(mpMap(mpStr("data"), mpBin(data), mpStr("typestr"), mpStr("<u2"),
			mpStr("shape"), []byte{0x91, 0x03}, mpStr("offset"), offset, mpStr("version"), []byte{0x03}))
	}
	for _, ok := range [][]byte{{0xc0}, {0x00}, {0xd1, 0, 0}} {
		a, err := Unmarshal(obj(ok))
		require.NoError(t, err, "% x", ok)
		assert.Equal(t, data, a.Data)
	}
	for _, bad := range [][]byte{{0x02}, {0xff}, {0xcd, 0x01, 0x00}} {
		_, err := Unmarshal(obj(bad))
		assert.ErrorIs(t, err, ErrOffset, "% x", bad)
	}
	_, err := Unmarshal(obj([]byte{0x02}))
	assert.EqualError(t, err, "ext110: non-zero offset at byte 44: offset 2: the array must start at the first byte of data")
	_, err = Unmarshal(obj([]byte{0xa1, 'x'}))
	assert.ErrorIs(t, err, ndarray.ErrMalformed)
}

// Arrays numpy cannot hold are neither read nor sent.
func TestNumpyShapeLimits(t *testing.T) {
	dims33 := append([]byte{0xdc, 0, 33}, bytes.Repeat([]byte{0x01}, 33)...)
	overflow := []byte{0x92, 0xcf, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}
	for name, shape := range map[string][]byte{"33 dims": dims33, "overflow": overflow} {
		n := 0
		if name == "33 dims" {
			n = 8
		}
		obj := ext8(mpMap(mpStr("data"), mpBin(make([]byte, n)), mpStr("typestr"), mpStr("<f8"),
			mpStr("shape"), shape, mpStr("version"), []byte{0x03}))
		_, err := Unmarshal(obj)
		assert.ErrorIs(t, err, ndarray.ErrShape, name)
	}
	_, err := Marshal(&ndarray.Array{DType: ndarray.DTypeOf[uint8](), Shape: make([]int, 33)})
	assert.ErrorIs(t, err, ndarray.ErrShape)
}
