//go:build unix

package main

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// --append to a FIFO is refused at once instead of waiting for a writer.
func TestConvertAppendToFIFO(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "row.npy")
	row, _ := ndarray.FromSlice([]float64{1, 2})
	require.NoError(t, npybridge.WriteFile(in, row))
	fifo := filepath.Join(dir, "frames.npy")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	start := time.Now()
	r := cli(t, nil, "convert", "--append", in, fifo)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: "+fifo+": not a regular file: --append adds rows to an .npy file\n", r.stderr)
	assert.Less(t, time.Since(start), 5*time.Second)
}
