package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteReplacesOnSuccess(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.npy")
	require.NoError(t, os.WriteFile(name, []byte("old"), 0o644))
	require.NoError(t, Write(name, 0o644, func(f *os.File) error {
		_, err := f.WriteString("new")
		return err
	}))
	got, _ := os.ReadFile(name)
	assert.Equal(t, "new", string(got))
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file left")
}

func TestWriteKeepsOldOnFailure(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "out.npy")
	require.NoError(t, os.WriteFile(name, []byte("old"), 0o644))
	boom := errors.New("boom")
	err := Write(name, 0o644, func(f *os.File) error {
		f.WriteString("half")
		return boom
	})
	assert.ErrorIs(t, err, boom)
	got, _ := os.ReadFile(name)
	assert.Equal(t, "old", string(got))
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "the temporary file is removed")

	// No file before, none after.
	other := filepath.Join(dir, "new.npy")
	assert.ErrorIs(t, Write(other, 0o644, func(*os.File) error { return boom }), boom)
	_, err = os.Stat(other)
	assert.True(t, os.IsNotExist(err))
}
