package npybridge

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ndarray"
)

// Reading an .npz as an NPY file fails with ErrNotNPY, whose Detail names
// the call that reads it: OpenNPZFile beside ReadFile, OpenNPZ beside
// Read (#43).
func TestReadNPZPointsAtOpenNPZ(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x.npz")
	a, err := ndarray.FromSlice([]int32{1, 2, 3}, 3)
	require.NoError(t, err)
	require.NoError(t, WriteNPZFile(name, []NamedArray{{Name: "a", Array: a}}, false))
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	const starts = `the file starts with "PK\x03\x04\x14\x00", not the magic \x93NUMPY: it is a zip archive, as an .npz is`

	detail := func(err error) string {
		t.Helper()
		var ne *ndarray.Error
		require.True(t, errors.As(err, &ne), "%v", err)
		assert.ErrorIs(t, err, ErrNotNPY)
		assert.Equal(t, int64(0), ne.Offset)
		return ne.Detail
	}
	_, err = ReadFile(name)
	assert.Equal(t, starts+"; OpenNPZFile reads one", detail(err))
	_, err = ReadOptions{}.ReadFileInto(name, nil)
	assert.Equal(t, starts+"; OpenNPZFile reads one", detail(err))
	_, err = ReadOptions{}.OpenMapped(name)
	assert.Equal(t, starts+"; OpenNPZFile reads one", detail(err))
	_, err = Read(bytes.NewReader(data))
	assert.Equal(t, starts+"; OpenNPZ reads one", detail(err))
	_, err = ReadOptions{}.ReadInto(bytes.NewReader(data), nil)
	assert.Equal(t, starts+"; OpenNPZ reads one", detail(err))
	_, err = ReadOptions{}.ReadHeader(bytes.NewReader(data))
	assert.Equal(t, starts, detail(err))
	assert.EqualError(t, err, `npybridge: not an NPY file at byte 0: `+starts)

	// Any other input is only said not to be NPY.
	_, err = Read(bytes.NewReader([]byte("hello world\n")))
	assert.Equal(t, `the file starts with "hello ", not the magic \x93NUMPY`, detail(err))
}
