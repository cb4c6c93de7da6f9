package filesection

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testWindow sizes the test files: several MiB, over any buffer.
const testWindow = 4 << 20

func TestSection(t *testing.T) {
	_, f, data := sectionFile(t, 3*testWindow+12345)

	for _, c := range []struct{ off, n int64 }{{0, int64(len(data))}, {17, testWindow + 5}, {4096, 2 * testWindow}, {100, 0}} {
		var out bytes.Buffer
		s := New(f, c.off, c.n)
		assert.Equal(t, int(c.n), s.Len())
		n, err := io.Copy(&out, s)
		require.NoError(t, err)
		assert.Equal(t, c.n, n)
		assert.True(t, bytes.Equal(data[c.off:c.off+c.n], out.Bytes()), "WriteTo %+v", c)

		out.Reset()
		_, err = io.Copy(&out, struct{ io.Reader }{New(f, c.off, c.n)})
		require.NoError(t, err)
		assert.True(t, bytes.Equal(data[c.off:c.off+c.n], out.Bytes()), "Read %+v", c)

		// Into a file, after bytes already written there: the kernel
		// moves them (CopyRange) from the file's position on.
		dst, err := os.Create(filepath.Join(t.TempDir(), "dst"))
		require.NoError(t, err)
		_, err = dst.WriteString("head")
		require.NoError(t, err)
		n, err = New(f, c.off, c.n).WriteTo(dst)
		require.NoError(t, err)
		assert.Equal(t, c.n, n)
		_, err = dst.WriteString("tail")
		require.NoError(t, err)
		require.NoError(t, dst.Close())
		got, err := os.ReadFile(dst.Name())
		require.NoError(t, err)
		want := append(append([]byte("head"), data[c.off:c.off+c.n]...), "tail"...)
		assert.True(t, bytes.Equal(want, got), "into a file %+v", c)
	}
	_, err := io.Copy(io.Discard, New(f, int64(len(data))-10, 11))
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = io.Copy(io.Discard, struct{ io.Reader }{New(f, int64(len(data))-10, 11)})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

// CopyRange moves bytes file to file where the system can, stops short
// where the source ends, and says so, having written nothing, where the
// destination cannot take them (a file opened for appending refuses
// splice).
func TestCopyRange(t *testing.T) {
	_, src, data := sectionFile(t, testWindow+777)
	dir := t.TempDir()
	dst, err := os.Create(filepath.Join(dir, "dst"))
	require.NoError(t, err)
	defer dst.Close()
	n, err := CopyRange(dst, src, 5, len(data))
	if runtime.GOOS != "linux" {
		assert.ErrorIs(t, err, errors.ErrUnsupported)
		assert.Zero(t, n)
		return
	}
	require.NoError(t, err)
	assert.Equal(t, len(data)-5, n, "short: the source ended")
	got, err := os.ReadFile(dst.Name())
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data[5:], got))

	appending, err := os.OpenFile(filepath.Join(dir, "appending"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	require.NoError(t, err)
	defer appending.Close()
	n, err = CopyRange(appending, src, 0, 100)
	assert.ErrorIs(t, err, errors.ErrUnsupported)
	assert.Zero(t, n)
	// WriteTo then writes through its buffer instead.
	k, err := New(src, 3, 100000).WriteTo(appending)
	require.NoError(t, err)
	assert.Equal(t, int64(100000), k)
	got, err = os.ReadFile(appending.Name())
	require.NoError(t, err)
	assert.True(t, bytes.Equal(data[3:100003], got))
}
