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

// Replacing a file keeps what cp keeps: the old file's mode, a symbolic
// link (the target is replaced), and a read-only file is refused.
func TestReplaceLikeCp(t *testing.T) {
	dir := t.TempDir()
	fill := func(s string) func(*os.File) error {
		return func(f *os.File) error { _, err := f.WriteString(s); return err }
	}
	private := filepath.Join(dir, "private.npy")
	require.NoError(t, os.WriteFile(private, []byte("old"), 0o600))
	require.NoError(t, Write(private, 0o666, fill("new")))
	fi, _ := os.Stat(private)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	exec := filepath.Join(dir, "group.npy")
	require.NoError(t, os.WriteFile(exec, []byte("old"), 0o664))
	require.NoError(t, os.Chmod(exec, 0o664)) // past the umask
	require.NoError(t, Write(exec, 0o666, fill("new")))
	fi, _ = os.Stat(exec)
	assert.Equal(t, os.FileMode(0o664), fi.Mode().Perm())

	target := filepath.Join(dir, "data", "real.npy")
	require.NoError(t, os.MkdirAll(filepath.Dir(target), 0o755))
	require.NoError(t, os.WriteFile(target, []byte("old"), 0o644))
	link := filepath.Join(dir, "link.npy")
	require.NoError(t, os.Symlink("data/real.npy", link))
	require.NoError(t, Write(link, 0o666, fill("through")))
	li, _ := os.Lstat(link)
	assert.True(t, li.Mode()&os.ModeSymlink != 0, "the link is still a link")
	got, _ := os.ReadFile(target)
	assert.Equal(t, "through", string(got))
	dangling := filepath.Join(dir, "dangling.npy")
	require.NoError(t, os.Symlink("data/new.npy", dangling))
	require.NoError(t, Write(dangling, 0o666, fill("created")))
	got, _ = os.ReadFile(filepath.Join(dir, "data", "new.npy"))
	assert.Equal(t, "created", string(got))

	ro := filepath.Join(dir, "ro.npy")
	require.NoError(t, os.WriteFile(ro, []byte("keep"), 0o444))
	err := Write(ro, 0o666, fill("new"))
	assert.ErrorIs(t, err, ErrReadOnly)
	assert.EqualError(t, err, "write "+ro+": is read-only; make it writable or remove it first")
	got, _ = os.ReadFile(ro)
	assert.Equal(t, "keep", string(got))

	err = Write(dir, 0o666, fill("x"))
	assert.ErrorIs(t, err, ErrIsDir)
	err = Write(filepath.Join(dir, "nodir", "x.npy"), 0o666, fill("x"))
	assert.ErrorIs(t, err, ErrNoDir)
	assert.EqualError(t, err, "write "+filepath.Join(dir, "nodir", "x.npy")+": its directory does not exist")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), tempMark, "no temporary file left")
	}
}

func TestAbortFromAnotherGoroutine(t *testing.T) {
	dir := t.TempDir()
	f, err := Create(filepath.Join(dir, "out.npy"), 0o666)
	require.NoError(t, err)
	f.WriteString("half")
	done := make(chan struct{})
	go func() { f.Abort(); close(done) }()
	<-done
	f.Abort()
	assert.Error(t, f.Commit())
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries)
}
