package ndarray

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNumElements(t *testing.T) {
	for _, c := range []struct {
		shape []int
		n     int
	}{
		{nil, 1}, {[]int{}, 1}, {[]int{0}, 0}, {[]int{7}, 7}, {[]int{3, 4}, 12},
		{[]int{2, 0, 3}, 0}, {[]int{math.MaxInt, 1}, math.MaxInt},
		{[]int{math.MaxInt, 0}, 0}, {[]int{3, 0, 1 << 40}, 0},
		{make([]int, MaxDims), 0},
	} {
		n, err := NumElements(c.shape)
		require.NoError(t, err, "%v", c.shape)
		assert.Equal(t, c.n, n, "%v", c.shape)
	}
	_, err := NumElements([]int{3, -1})
	assert.ErrorIs(t, err, ErrShape)
	assert.EqualError(t, err, "ndarray: invalid shape: dimension 1 of shape (3, -1) is negative")
	_, err = NumElements([]int{0, -1})
	assert.ErrorIs(t, err, ErrShape)
	_, err = NumElements([]int{1 << 32, 1 << 32})
	assert.ErrorIs(t, err, ErrShape)
	assert.Contains(t, err.Error(), "overflows int")
	_, err = ByteSize(DTypeOf[float64](), []int{math.MaxInt / 4})
	assert.ErrorIs(t, err, ErrShape)
	// As NumPy: the non-zero dimensions must not overflow even when
	// another is 0 (np.empty((2**63-1, 2**63-1, 0)) fails), and the item
	// size counts (np.empty((2**63-1, 0), '<f8') fails too).
	_, err = NumElements([]int{math.MaxInt, math.MaxInt, 0})
	assert.ErrorIs(t, err, ErrShape)
	_, err = ByteSize(DTypeOf[float64](), []int{math.MaxInt, 0})
	assert.ErrorIs(t, err, ErrShape)
	n, err := ByteSize(DTypeOf[uint8](), []int{math.MaxInt, 0})
	require.NoError(t, err)
	assert.Equal(t, 0, n)
	// At most 32 dimensions, as NumPy.
	_, err = NumElements(make([]int, MaxDims+1))
	assert.ErrorIs(t, err, ErrShape)
	assert.EqualError(t, err, "ndarray: invalid shape: 33 dimensions, more than the 32 NumPy allows")
}

func TestZeroSizeItems(t *testing.T) {
	for _, ts := range []string{"|V0", "|S0", "<U0"} {
		dt, err := ParseDType(ts)
		require.NoError(t, err, ts)
		assert.Equal(t, 0, dt.ItemSize)
		assert.Equal(t, ts, dt.String())
		a, err := New(dt, []int{3}, nil)
		require.NoError(t, err)
		assert.Equal(t, 3, a.Len())
		assert.Equal(t, 0, len(a.Data))
		_, err = New(dt, []int{3}, []byte{0})
		assert.ErrorIs(t, err, ErrDataLength)
	}
	for _, ts := range []string{"<i0", "|b0", "<f0", "<M0"} {
		_, err := ParseDType(ts)
		assert.ErrorIs(t, err, ErrDType, ts)
	}
}

func TestNewValidates(t *testing.T) {
	_, err := New(DTypeOf[float64](), []int{2, 3}, make([]byte, 47))
	assert.ErrorIs(t, err, ErrDataLength)
	assert.EqualError(t, err, "ndarray: data length does not match shape: shape (2, 3) of <f8 needs 48 bytes, data has 47")
	a, err := New(DTypeOf[float64](), []int{2, 3}, make([]byte, 48))
	require.NoError(t, err)
	assert.Equal(t, 6, a.Len())
	assert.Equal(t, 2, a.NDim())
	assert.Equal(t, "<f8 (2, 3)", a.String())

	z, err := New(DTypeOf[int64](), nil, make([]byte, 8))
	require.NoError(t, err)
	assert.Equal(t, 1, z.Len())
	assert.Equal(t, "<i8 ()", z.String())
}

func TestOffsetAndItem(t *testing.T) {
	a, err := FromSlice([]int16{0, 1, 2, 3, 4, 5}, 2, 3)
	require.NoError(t, err)
	off, err := a.Offset(1, 2)
	require.NoError(t, err)
	assert.Equal(t, 10, off)
	_, err = a.Offset(2, 0)
	assert.ErrorIs(t, err, ErrIndex)
	_, err = a.Offset(1)
	assert.ErrorIs(t, err, ErrIndex)
	v, err := At[int16](a, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, int16(4), v)
	_, err = At[int32](a, 1, 1)
	assert.ErrorIs(t, err, ErrType)
}

func TestFormatShape(t *testing.T) {
	assert.Equal(t, "()", FormatShape(nil))
	assert.Equal(t, "(5,)", FormatShape([]int{5}))
	assert.Equal(t, "(2, 0, 3)", FormatShape([]int{2, 0, 3}))
}

func TestEqualAndClone(t *testing.T) {
	a, _ := FromSlice([]float64{1, 2, 3})
	b := a.Clone()
	assert.True(t, a.Equal(b))
	b.Data[0] ^= 1
	assert.False(t, a.Equal(b))
	c, _ := FromSlice([]float64{1, 2, 3}, 3, 1)
	assert.False(t, a.Equal(c))
}
