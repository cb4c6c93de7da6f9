package ndarray

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func roundTrip[T Element](t *testing.T, typestr string, values []T) {
	t.Helper()
	a, err := FromSlice(values)
	require.NoError(t, err)
	native := MustParseDType(typestr).WithOrder(NativeOrder())
	assert.Equal(t, native, a.DType)
	got, err := Values[T](a)
	require.NoError(t, err)
	assert.Equal(t, values, got)
	for _, o := range []byte{'<', '>'} {
		swapped, err := a.ToOrder(o)
		require.NoError(t, err)
		got, err := Values[T](swapped)
		require.NoError(t, err)
		assert.Equal(t, values, got, "order %c", o)
		for i := range values {
			v, err := At[T](swapped, i)
			require.NoError(t, err)
			assert.Equal(t, values[i], v)
		}
	}
}

func TestTypedRoundTrip(t *testing.T) {
	roundTrip(t, "|b1", []bool{true, false, true})
	roundTrip(t, "|i1", []int8{-128, 0, 127})
	roundTrip(t, "<i2", []int16{-32768, 1, 32767})
	roundTrip(t, "<i4", []int32{math.MinInt32, 5, math.MaxInt32})
	roundTrip(t, "<i8", []int64{math.MinInt64, 5, math.MaxInt64})
	roundTrip(t, "|u1", []uint8{0, 1, 255})
	roundTrip(t, "<u2", []uint16{0, 1, 65535})
	roundTrip(t, "<u4", []uint32{0, 1, math.MaxUint32})
	roundTrip(t, "<u8", []uint64{0, 1, math.MaxUint64})
	roundTrip(t, "<f4", []float32{float32(math.Inf(-1)), 1.5, float32(math.Copysign(0, -1))})
	roundTrip(t, "<f8", []float64{math.Inf(1), 2.25, math.SmallestNonzeroFloat64, math.Copysign(0, -1)})
	roundTrip(t, "<c8", []complex64{complex(1, -2), complex(3.5, 0)})
	roundTrip(t, "<c16", []complex128{complex(1, -2), complex(math.MaxFloat64, 0)})
}

func TestBigEndianBytes(t *testing.T) {
	a, err := FromSlice([]uint32{0x01020304, 0x0a0b0c0d})
	require.NoError(t, err)
	be, err := a.ToOrder('>')
	require.NoError(t, err)
	assert.Equal(t, ">u4", be.DType.String())
	assert.Equal(t, []byte{1, 2, 3, 4, 10, 11, 12, 13}, be.Data)

	c, err := FromSlice([]complex64{complex(1, 2)})
	require.NoError(t, err)
	cbe, err := c.ToOrder('>')
	require.NoError(t, err)
	// Each half of a complex is swapped on its own.
	want := make([]byte, 8)
	binary.BigEndian.PutUint32(want, math.Float32bits(1))
	binary.BigEndian.PutUint32(want[4:], math.Float32bits(2))
	assert.Equal(t, want, cbe.Data)
}

func TestToOrderNoSwapReturnsSame(t *testing.T) {
	a, _ := FromSlice([]uint8{1, 2})
	b, err := a.ToOrder('>')
	require.NoError(t, err)
	assert.Same(t, a, b)
	_, err = a.ToOrder('|')
	assert.ErrorIs(t, err, ErrDType)
}

func TestValuesAliasesWhenPossible(t *testing.T) {
	a, _ := FromSlice([]float64{1, 2})
	v, err := Values[float64](a)
	require.NoError(t, err)
	v[0] = 9
	x, _ := At[float64](a, 0)
	assert.Equal(t, 9.0, x, "native, aligned data is aliased")

	// Misaligned data is copied.
	buf := make([]byte, 17)
	mis, err := New(a.DType, []int{2}, buf[1:])
	require.NoError(t, err)
	w, err := Values[float64](mis)
	require.NoError(t, err)
	w[0] = 7
	assert.Equal(t, byte(0), buf[1])
}

func TestBoolFromArbitraryBytes(t *testing.T) {
	a, err := New(MustParseDType("|b1"), []int{3}, []byte{0, 2, 255})
	require.NoError(t, err)
	v, err := Values[bool](a)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, true}, v)
	b, err := At[bool](a, 2)
	require.NoError(t, err)
	assert.True(t, b)
}

func TestFromSliceShape(t *testing.T) {
	_, err := FromSlice([]float64{1, 2, 3}, 2, 2)
	assert.ErrorIs(t, err, ErrDataLength)
	_, err = FromSlice([]float64{}, 2, -1)
	assert.ErrorIs(t, err, ErrShape)
	s := Scalar(int32(7))
	assert.Equal(t, []int{}, s.Shape)
	assert.Equal(t, 1, s.Len())
	e, err := FromSlice([]float32{}, 2, 0, 3)
	require.NoError(t, err)
	v, err := Values[float32](e)
	require.NoError(t, err)
	assert.Equal(t, []float32{}, v)
}

func TestColumnMajor(t *testing.T) {
	// Logical array a[i][j][k] = 100i + 10j + k of shape (2, 3, 4).
	shape := []int{2, 3, 4}
	var fortran []int32 // column-major: i fastest
	for k := 0; k < 4; k++ {
		for j := 0; j < 3; j++ {
			for i := 0; i < 2; i++ {
				fortran = append(fortran, int32(100*i+10*j+k))
			}
		}
	}
	raw, _ := FromSlice(fortran)
	a, err := FromColumnMajor(raw.DType, shape, raw.Data)
	require.NoError(t, err)
	for i := 0; i < 2; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 4; k++ {
				v, err := At[int32](a, i, j, k)
				require.NoError(t, err)
				assert.Equal(t, int32(100*i+10*j+k), v)
			}
		}
	}
	back, err := a.ColumnMajorData()
	require.NoError(t, err)
	assert.Equal(t, raw.Data, back)

	_, err = FromColumnMajor(raw.DType, []int{5, 5}, raw.Data)
	assert.ErrorIs(t, err, ErrDataLength)
}

func TestFromRowsAndRows(t *testing.T) {
	a, err := FromRows([][]float32{{1, 2, 3}, {4, 5, 6}})
	require.NoError(t, err)
	assert.Equal(t, "<f4 (2, 3)", a.String())
	v, _ := Values[float32](a)
	assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, v)
	rows, err := Rows[float32](a)
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 2, 3}, {4, 5, 6}}, rows)
	rows[1] = append(rows[1], 7) // capped: cannot spill into another row
	assert.Equal(t, []float32{4, 5, 6, 7}, rows[1])

	_, err = FromRows([][]int16{{1, 2}, {3, 4}, {5}})
	assert.ErrorIs(t, err, ErrShape)
	assert.EqualError(t, err, "ndarray: invalid shape: ragged rows: row 2 has 1 value, row 0 has 2")
	empty, err := FromRows[uint8](nil)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 0}, empty.Shape)

	_, err = Rows[float32](Scalar[float32](1))
	assert.ErrorIs(t, err, ErrShape)
	_, err = Rows[float64](a)
	assert.ErrorIs(t, err, ErrType)
}

// Aligned asks what Values needs to read in place: the item's size up to
// 8 for numbers, half of it for complex ones, nothing for strings.
func TestAligned(t *testing.T) {
	buf := make([]byte, 64) // a heap block: 8-aligned
	for _, c := range []struct {
		typestr string
		aligned []int // of the offsets 0..7
	}{
		{"<f8", []int{0}}, {"<i2", []int{0, 2, 4, 6}}, {"<c8", []int{0, 4}}, {"<c16", []int{0}},
		{"<M8[s]", []int{0}}, {"|S3", []int{0, 1, 2, 3, 4, 5, 6, 7}}, {"|b1", []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{"<f2", []int{0, 2, 4, 6}},
	} {
		dt := MustParseDType(c.typestr)
		var got []int
		for off := 0; off < 8; off++ {
			a := &Array{DType: dt, Shape: []int{1}, Data: buf[off : off+dt.ItemSize]}
			if a.Aligned() {
				got = append(got, off)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(c.aligned) {
			t.Errorf("%s: aligned at offsets %v, want %v", c.typestr, got, c.aligned)
		}
	}
	if !(&Array{DType: DTypeOf[float64](), Shape: []int{0}}).Aligned() {
		t.Error("an empty array is aligned")
	}
}
