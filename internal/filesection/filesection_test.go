package filesection

import (
	"bytes"
	"io"
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
	}
	_, err := io.Copy(io.Discard, New(f, int64(len(data))-10, 11))
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	_, err = io.Copy(io.Discard, struct{ io.Reader }{New(f, int64(len(data))-10, 11)})
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}
