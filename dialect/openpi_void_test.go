package dialect

import (
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// OpenPI's packer raises on kinds V, O and c ("Unsupported dtype"), so its
// writer here refuses a plain void array as it refuses records and complex
// ones, instead of writing a map OpenPI itself would never send; the
// msgpack-numpy writer still carries it.
func TestOpenPIRefusesVoid(t *testing.T) {
	a, err := ndarray.New(ndarray.MustParseDType("|V4"), []int{2}, make([]byte, 8))
	require.NoError(t, err)
	_, err = OpenPI.Marshal(a)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.ErrorContains(t, err, "OpenPI cannot carry void (V) arrays (|V4)")
	_, err = MsgpackNumpy.Marshal(a)
	assert.NoError(t, err)
}
