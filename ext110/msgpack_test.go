package ext110

import (
	"bytes"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

type reading struct {
	Name     string         `msgpack:"name"`
	Image    *ndarray.Array `msgpack:"image"`
	Spectrum *ndarray.Array `msgpack:"spectrum"`
}

// le returns a little-endian copy of a test array built without error.
func le(a *ndarray.Array, err error) *ndarray.Array {
	if err == nil {
		a, err = a.ToOrder('<')
	}
	if err != nil {
		panic(err)
	}
	return a
}

func TestNestedInMsgpack(t *testing.T) {
	img := le(ndarray.FromSlice([]uint16{1, 2, 3, 4, 5, 6}, 2, 3))
	spec := le(ndarray.FromSlice([]float64{0.5, 1.5}))

	// A struct field: the ext object inside the message is exactly what
	// Marshal writes on its own.
	msg, err := msgpack.Marshal(&reading{Name: "cam", Image: img, Spectrum: spec})
	require.NoError(t, err)
	imgBytes, _ := Marshal(img)
	specBytes, _ := Marshal(spec)
	assert.True(t, bytes.Contains(msg, imgBytes))
	assert.True(t, bytes.Contains(msg, specBytes))

	var back reading
	require.NoError(t, msgpack.Unmarshal(msg, &back))
	assert.Equal(t, "cam", back.Name)
	assert.True(t, img.Equal(back.Image))
	assert.True(t, spec.Equal(back.Spectrum))

	// Into interface{}: arrays come back as *ndarray.Array.
	var generic map[string]any
	require.NoError(t, msgpack.Unmarshal(msg, &generic))
	got, ok := generic["image"].(*ndarray.Array)
	require.True(t, ok, "%T", generic["image"])
	assert.True(t, img.Equal(got))

	// A slice and a map of arrays, and a nil array.
	msg, err = msgpack.Marshal(map[string]any{"list": []any{img, 7, spec}, "none": (*ndarray.Array)(nil)})
	require.NoError(t, err)
	var anyBack any
	require.NoError(t, msgpack.Unmarshal(msg, &anyBack))
	m := anyBack.(map[string]any)
	list := m["list"].([]any)
	assert.True(t, img.Equal(list[0].(*ndarray.Array)))
	assert.EqualValues(t, 7, list[1])
	assert.True(t, spec.Equal(list[2].(*ndarray.Array)))
	assert.Nil(t, m["none"])
}

func TestNestedRefusesBadArrays(t *testing.T) {
	s, _ := ndarray.New(ndarray.MustParseDType("|S2"), []int{1}, []byte("ab"))
	_, err := msgpack.Marshal([]any{s})
	assert.ErrorIs(t, err, ndarray.ErrNonstandard)

	// A malformed payload inside a message fails the whole decode.
	bad := ext8(mpMap(mpStr("data"), mpBin([]byte{1}), mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 1}))
	var v any
	err = msgpack.Unmarshal(append([]byte{0x91}, bad...), &v)
	assert.ErrorIs(t, err, ndarray.ErrDataLength)

	// A hostile length inside a message: truncated, not a 4 GiB allocation.
	err = msgpack.Unmarshal([]byte{0x91, 0xc9, 0xff, 0xff, 0xff, 0xff, 110, 0x84}, &v)
	assert.Error(t, err)
}

func TestStream(t *testing.T) {
	a := le(ndarray.FromSlice([]int32{1, -2, 3}))
	b := le(ndarray.FromSlice([]complex128{complex(1, 2)}))
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	require.NoError(t, enc.Encode(a))
	require.NoError(t, enc.Encode(b))
	require.NoError(t, enc.EncodeFrom(a.DType, a.Shape, bytes.NewReader(a.Data)))
	ab, _ := Marshal(a)
	bb, _ := Marshal(b)
	assert.Equal(t, append(append(append([]byte{}, ab...), bb...), ab...), buf.Bytes())

	dec := NewDecoder(&buf)
	for _, want := range []*ndarray.Array{a, b, a} {
		got, err := dec.Decode()
		require.NoError(t, err)
		assert.True(t, want.Equal(got))
	}
	_, err := dec.Decode()
	assert.Equal(t, "EOF", err.Error())

	err = enc.EncodeFrom(a.DType, a.Shape, bytes.NewReader(a.Data[:5]))
	assert.ErrorContains(t, err, "data source ended after 5 of 12 bytes")
}

func TestDecoderLimits(t *testing.T) {
	a := le(ndarray.FromSlice(make([]float64, 100)))
	b, _ := Marshal(a)
	dec := NewDecoder(bytes.NewReader(b))
	dec.MaxSize = 100
	_, err := dec.Decode()
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	assert.EqualError(t, err, "ext110: too large at byte 0: payload of 838 bytes exceeds the limit of 100 (Decoder.MaxSize)")

	dec = NewDecoder(bytes.NewReader(b[:len(b)-3]))
	_, err = dec.Decode()
	assert.ErrorIs(t, err, ndarray.ErrTruncated)
	assert.Contains(t, err.Error(), "stream ended inside the ext payload")

	// A large object really arrives through the growing buffer.
	big := le(ndarray.FromSlice(make([]float64, 100_000)))
	big.Data[len(big.Data)-1] = 7
	bb, _ := Marshal(big)
	got, err := NewDecoder(bytes.NewReader(bb)).Decode()
	require.NoError(t, err)
	assert.True(t, big.Equal(got))
}

// An unset Array field is msgpack nil, left out under omitempty, and an
// Array held by value encodes wherever it is (the library alone refuses
// values it cannot address).
func TestZeroAndValueArrays(t *testing.T) {
	a, _ := ndarray.FromSlice([]int16{1, 2})
	type rec struct {
		Set   ndarray.Array  `msgpack:"set"`
		Unset ndarray.Array  `msgpack:"unset"`
		Omit  ndarray.Array  `msgpack:"omit,omitempty"`
		Ptr   *ndarray.Array `msgpack:"ptr,omitempty"`
		Zero  *ndarray.Array `msgpack:"zero"`
	}
	b, err := msgpack.Marshal(&rec{Set: *a, Zero: &ndarray.Array{}})
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, msgpack.Unmarshal(b, &m))
	assert.Len(t, m, 3, "omit and ptr are left out: %v", m)
	assert.Nil(t, m["unset"])
	assert.Nil(t, m["zero"])
	assert.True(t, m["set"].(*ndarray.Array).Equal(a))

	var back rec
	require.NoError(t, msgpack.Unmarshal(b, &back))
	assert.True(t, back.Set.Equal(a))
	assert.True(t, back.Unset.IsZero())
	assert.Nil(t, back.Zero)

	// Not addressable: a map value and a value passed by itself.
	b, err = msgpack.Marshal(map[string]ndarray.Array{"x": *a})
	require.NoError(t, err)
	var mv map[string]ndarray.Array
	require.NoError(t, msgpack.Unmarshal(b, &mv))
	assert.True(t, a.Equal(ptr(mv["x"])))
	b2, err := msgpack.Marshal(*a)
	require.NoError(t, err)
	want, _ := Marshal(a)
	assert.Equal(t, want, b2, "byte-identical to the reference form")

	// A zero DType prints readably where users meet it.
	assert.Equal(t, "<invalid dtype>", ndarray.DType{}.String())
	_, err = Marshal(&ndarray.Array{Shape: []int{1}, Data: []byte{0}})
	assert.EqualError(t, err, "ext110: malformed payload: cannot encode: ndarray: invalid dtype: the zero DType (an unset field?) is not a dtype")
}

func ptr[T any](v T) *T { return &v }
