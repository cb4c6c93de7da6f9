//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package ndpack_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// Converting a file that another process truncates meanwhile: an error, no
// crash, in both directions.
func TestConvertTruncatedInput(t *testing.T) {
	p, a := hostile.ThreeMiBNPY(t)
	t.Run("npy to ext 110", func(t *testing.T) {
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		w := &truncatingWriter{t: t, path: p, size: 8192, after: 1 << 20}
		err = ndpack.ConvertOptions{}.NPYToExt110(w, f)
		assert.ErrorIs(t, err, ndarray.ErrTruncated)
		assert.EqualError(t, err, fmt.Sprintf("read %s: npybridge: truncated input at byte 8192: another process truncated the file while it was being read: "+
			"it now holds 8192 bytes, and bytes 128 to %d were being read", p, 128+len(a.Data)))
	})
	t.Run("ext 110 to npy", func(t *testing.T) {
		var msg bytes.Buffer
		require.NoError(t, ndpack.ConvertOptions{}.NPYToExt110(&msg, bytes.NewReader(mustNPY(t, a))))
		q := filepath.Join(t.TempDir(), "in.msgpack")
		require.NoError(t, os.WriteFile(q, msg.Bytes(), 0o644))
		f, err := os.Open(q)
		require.NoError(t, err)
		defer f.Close()
		w := &truncatingWriter{t: t, path: q, size: 8192, after: 1 << 20}
		err = ndpack.ConvertOptions{}.Ext110ToNPY(w, f)
		assert.ErrorIs(t, err, ndarray.ErrTruncated)
		assert.Contains(t, err.Error(), "read "+q+": npybridge: truncated input at byte 8192: another process truncated the file while it was being read: it now holds 8192 bytes")
	})
}

func mustNPY(t *testing.T, a *ndarray.Array) []byte {
	var b bytes.Buffer
	require.NoError(t, npybridge.Write(&b, a))
	return b.Bytes()
}

// truncatingWriter reads every byte it is given and keeps none, and once
// it has been given more than after bytes has the file at path truncated
// to size, as another process would while the copy goes on.
type truncatingWriter struct {
	t           *testing.T
	path        string
	size, after int64
	written     int64
	done        bool
	sum         byte
}

func (w *truncatingWriter) Write(p []byte) (int, error) {
	w.written += int64(len(p))
	if !w.done && w.written > w.after {
		w.done = true
		hostile.TruncateFile(w.t, w.path, w.size)
	}
	var x byte
	for _, b := range p {
		x ^= b
	}
	w.sum ^= x
	return len(p), nil
}
