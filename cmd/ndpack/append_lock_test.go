package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// heldFrames makes, in a new directory, row.npy (one row of two <f8) and
// frames.npy, which holder, an Appender of this process, holds with one row
// appended.
func heldFrames(t *testing.T) (dir, in, frames string, row *ndarray.Array, holder *npybridge.Appender) {
	dir = t.TempDir()
	frames = filepath.Join(dir, "frames.npy")
	row, _ = ndarray.FromSlice([]float64{1, 2})
	in = filepath.Join(dir, "row.npy")
	require.NoError(t, npybridge.WriteFile(in, row))
	holder, err := npybridge.AppendOptions{}.OpenAppend(context.Background(), frames, row.DType, 2)
	require.NoError(t, err)
	require.NoError(t, holder.Append(row))
	return dir, in, frames, row, holder
}

// While another appender holds the .npy, --append refuses at once with one
// line that names the file and --wait; with --wait it appends once the
// other closes, and no row of either is lost.
func TestConvertAppendLocked(t *testing.T) {
	dir, in, frames, row, holder := heldFrames(t)

	start := time.Now()
	r := cli(t, nil, "convert", "--append", in, frames)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: "+frames+": npybridge: locked by another appender: another Appender, in this process or another, "+
		"is adding rows to the file, and rows from two writers would overwrite each other (--wait waits for it to finish)\n", r.stderr)
	assert.Less(t, time.Since(start), 5*time.Second, "refused at once")

	cmd := exec.Command(ndpackBin, "convert", "--wait", "--append", in, frames)
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Fatalf("--wait returned while the file was held: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, holder.Append(row))
	require.NoError(t, holder.Close())
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("--wait did not append after the other appender closed")
	}
	got, err := npybridge.ReadFile(frames)
	require.NoError(t, err)
	rows, _ := ndarray.Rows[float64](got)
	assert.Equal(t, [][]float64{{1, 2}, {1, 2}, {1, 2}}, rows)

	r = cli(t, nil, "convert", "--wait", in, filepath.Join(dir, "x.npy"))
	assert.Equal(t, result{2, "", "ndpack convert: --wait waits for another appender; it goes with --append\nRun 'ndpack help convert' for usage.\n"}, r)
}

// A conversion whose output is a file an appender holds is refused before
// anything is written: renaming over it would send the appender's later
// rows to a file no name leads to. Once the appender closes, it goes ahead.
func TestConvertOverAppendedFileRefused(t *testing.T) {
	dir, in, frames, row, holder := heldFrames(t)

	r := cli(t, nil, "convert", in, frames)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: "+frames+": is locked by a process writing it in place (an appender); replacing it would lose what that process writes\n", r.stderr)
	assert.ErrorIs(t, npybridge.WriteFile(frames, row), atomicfile.ErrInUse)

	require.NoError(t, holder.Append(row))
	require.NoError(t, holder.Close())
	got, err := npybridge.ReadFile(frames)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 2}, got.Shape, "the appender's rows are all in the file")
	assert.Empty(t, tempFiles(t, dir))

	r = cli(t, nil, "convert", in, frames)
	assert.Equal(t, 0, r.code, r.stderr)
}
