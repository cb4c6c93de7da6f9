package ndarray

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFieldPaths(t *testing.T) {
	in := mustRecord(t, []Field{{Name: "b", DType: MustParseDType(">u2")}, {Name: "c.d", DType: DTypeOf[uint8](), Offset: 2}}, 0)
	dt := mustRecord(t, []Field{
		{Name: "a", Title: "T", DType: in},
		{Name: "a.b", DType: DTypeOf[uint8](), Offset: 3},
		{Name: "s", DType: in, Shape: []int{2}, Offset: 4},
	}, 0)
	a, err := New(dt, []int{2}, []byte{
		0, 1, 2, 3, 0, 4, 5, 0, 6, 7,
		0, 8, 9, 10, 0, 11, 12, 0, 13, 14,
	})
	require.NoError(t, err)

	// A name holding a dot is found before the path through "a".
	v, err := a.Field("a.b")
	require.NoError(t, err)
	assert.Equal(t, DTypeOf[uint8](), v.DType)
	assert.Equal(t, 3, v.Offset)
	// Through the title, then into a name holding a dot.
	u, err := FieldValues[uint8](a, "T.c.d")
	require.NoError(t, err)
	assert.Equal(t, []uint8{2, 9}, u)
	// Through a subarray of records, a big-endian field.
	s, err := FieldValues[uint16](a, "s.b")
	require.NoError(t, err)
	assert.Equal(t, []uint16{4, 6, 11, 13}, s)
	v, err = a.Field("s.b")
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, v.Shape)
	assert.Equal(t, []int{10, 3}, v.Strides)
	require.NoError(t, SetFieldValues(a, "s.b", []uint16{0x0102, 0x0304, 0x0506, 0x0708}))
	assert.Equal(t, []byte{
		0, 1, 2, 3, 1, 2, 5, 3, 4, 7,
		0, 8, 9, 10, 5, 6, 12, 7, 8, 14,
	}, a.Data)

	for _, bad := range []string{"", "x", "a.", "a.x", "s.c", "s.b.c", "a.b.c"} {
		_, err := a.Field(bad)
		assert.True(t, errors.Is(err, ErrIndex), "%q: %v", bad, err)
	}
	_, err = FieldValues[float64](a, "s.b")
	assert.True(t, errors.Is(err, ErrType))
	_, err = FieldValues[uint8](a, "s")
	assert.True(t, errors.Is(err, ErrType), "a record field has no scalar values")
	assert.True(t, errors.Is(SetFieldValues(a, "s.b", []uint16{1}), ErrDataLength))
	f, err := FromSlice([]float64{1})
	require.NoError(t, err)
	_, err = f.Field("x")
	assert.True(t, errors.Is(err, ErrType))

	// Set converts the byte order of plain dtypes, refuses other dtypes.
	v, err = a.Field("s.b")
	require.NoError(t, err)
	src, err := FromSlice([]uint16{1, 2, 3, 4}, 2, 2)
	require.NoError(t, err)
	require.NoError(t, v.Set(src))
	got, err := FieldValues[uint16](a, "s.b")
	require.NoError(t, err)
	assert.Equal(t, []uint16{1, 2, 3, 4}, got)
	i4, err := FromSlice([]int32{1, 2, 3, 4})
	require.NoError(t, err)
	assert.True(t, errors.Is(v.Set(i4), ErrType))
	short, err := FromSlice([]uint16{1})
	require.NoError(t, err)
	assert.True(t, errors.Is(v.Set(short), ErrDataLength))
}

// A field reached through a large subarray of records is copied element
// by element, without a plan of one run per element.
func TestFieldManyRuns(t *testing.T) {
	in := mustRecord(t, []Field{{Name: "x", DType: MustParseDType("<i2")}, {Name: "y", DType: DTypeOf[uint8](), Offset: 2}}, 0)
	dt := mustRecord(t, []Field{{Name: "r", DType: in, Shape: []int{1000}}}, 0)
	a, err := Zeros(dt, 3)
	require.NoError(t, err)
	want := make([]int16, 3000)
	for i := range want {
		want[i] = int16(i - 1500)
	}
	require.NoError(t, SetFieldValues(a, "r.x", want))
	got, err := FieldValues[int16](a, "r.x")
	require.NoError(t, err)
	assert.Equal(t, want, got)
	y, err := FieldValues[uint8](a, "r.y")
	require.NoError(t, err)
	assert.Equal(t, make([]uint8, 3000), y)
}
