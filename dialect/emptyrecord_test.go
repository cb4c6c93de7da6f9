package dialect

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
)

// A record with no fields (numpy's dtype({'names': [], 'formats': [],
// 'itemsize': 8})) cannot be told from the plain |V8 on the wire: numpy
// gives both the descr [("", "|V8")] and the typestr |V8, so
// msgpack_numpy.encode packs both to the bytes below (numpy 1.24 and 2),
// and it comes back as |V8. The package doc says so.
func TestEmptyRecordIsPlainVoidOnTheWire(t *testing.T) {
	rec, err := ndarray.NewRecord(nil, 8)
	require.NoError(t, err)
	numpys := append([]byte("\x85\xc4\x02nd\xc3\xc4\x04type\x91\x92\xa0\xa3|V8\xc4\x04kind\xc4\x01V\xc4\x05shape\x91\x02\xc4\x04data\xc4\x10"), make([]byte, 16)...)
	for _, dt := range []ndarray.DType{rec, ndarray.MustParseDType("|V8")} {
		a, err := ndarray.New(dt, []int{2}, make([]byte, 16))
		require.NoError(t, err)
		b, err := MsgpackNumpy.Marshal(a)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(numpys, b), "%s: %q", dt, b)
		back, _, err := Unmarshal(b)
		require.NoError(t, err)
		assert.Equal(t, "|V8", back.DType.String())
		assert.False(t, back.DType.IsRecord())
	}
}
