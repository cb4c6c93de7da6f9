package avro

import (
	"errors"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The YEP-113 ndarray record has a typestr and no descr: a record array
// would arrive as opaque |V<n> bytes, so it is refused, by every path that
// writes one, naming the dtype.
func TestRecordArrayRefused(t *testing.T) {
	rec, err := ndarray.NewRecord([]ndarray.Field{
		{Name: "x", DType: ndarray.MustParseDType("<i4")},
		{Name: "y", DType: ndarray.MustParseDType("<f8"), Offset: 4},
	}, 0)
	require.NoError(t, err)
	a, err := ndarray.New(rec, []int{2}, make([]byte, 24))
	require.NoError(t, err)
	for name, encode := range map[string]func() ([]byte, error){
		"AppendArray":      func() ([]byte, error) { return ArrayOptions{}.AppendArray(nil, a) },
		"AllowNonstandard": func() ([]byte, error) { return ArrayOptions{AllowNonstandard: true}.AppendArray(nil, a) },
		"Schema.Append": func() ([]byte, error) {
			s, err := ParseSchema(ArraySchema)
			require.NoError(t, err)
			return s.Append(nil, a)
		},
		"gathered": func() ([]byte, error) {
			big, err := ndarray.New(rec, []int{1 << 12}, make([]byte, 12<<12))
			require.NoError(t, err)
			s, err := ParseSchema(ArraySchema)
			require.NoError(t, err)
			_, err = s.AppendPieces(nil, big)
			return nil, err
		},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := encode()
			require.Error(t, err)
			assert.Empty(t, b)
			assert.True(t, errors.Is(err, ErrDoesNotFit), "%v", err)
			assert.ErrorContains(t, err, "avro: ")
			assert.ErrorContains(t, err, "the record dtype [('x', '<i4'), ('y', '<f8')] cannot be carried")
		})
	}
}

func TestObjectTypestrRefused(t *testing.T) {
	// shape [1], typestr "|O", data 8 bytes, version 3
	in := []byte{2, 2, 0, 4, '|', 'O', 16, 0, 0, 0, 0, 0, 0, 0, 0, 6}
	_, _, err := DecodeArray(in)
	require.Error(t, err)
	assert.ErrorIs(t, err, ndarray.ErrMalformed)
	assert.ErrorContains(t, err, "object array (pickle)")
}
