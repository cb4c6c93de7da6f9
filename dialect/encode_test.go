package dialect

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
)

// Data past what a msgpack bin holds is refused, never written with its
// length cut to 32 bits.
func TestEncodeRefusesDataOverBin32(t *testing.T) {
	for _, d := range []Dialect{MsgpackNumpy, OpenPI} {
		_, err := d.layout(ndarray.DTypeOf[uint8](), []int{1 << 32}, 1<<32)
		require.ErrorIs(t, err, ndarray.ErrTooLarge, d.String())
		_, err = d.layout(ndarray.DTypeOf[uint8](), []int{1<<32 - 1}, 1<<32-1)
		require.NoError(t, err, d.String())
	}
}
