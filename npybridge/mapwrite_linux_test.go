package npybridge

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
)

// A new map's zeros take no disk space, so writing them fills the disk: on
// a 1 MiB tmpfs, writing a 4 MiB map faults past the first MiB. Under
// Guard that is an error saying so, not a SIGBUS, nor a truncation.
func TestMappedWriteFullTmpfs(t *testing.T) {
	p := filepath.Join(smallDisk(t), "big.npy")
	m, err := MapOptions{}.CreateMapped(p, ndarray.DTypeOf[uint8](), 4<<20)
	require.NoError(t, err)
	defer m.Close()
	err = m.Guard(func() error {
		for i := range m.Array.Data {
			m.Array.Data[i] = 1
		}
		return nil
	})
	assert.ErrorIs(t, err, ErrPageNotStored)
	assert.EqualError(t, err, "write "+p+": npybridge: mapped page not stored at byte 1048576: the page there could not be stored: "+
		"the disk is full or failing (the file still holds its 4194432 bytes: it was not truncated)")
}
