//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package npybridge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
)

// A mapped file truncated by another process: WriteTo and Guard return an
// error naming the file and the first byte gone, where reading the data
// died of SIGBUS.
func TestMappedTruncated(t *testing.T) {
	p, a := hostile.ThreeMiBNPY(t)
	m, err := ReadOptions{}.OpenMapped(p)
	require.NoError(t, err)
	defer m.Close()
	require.True(t, m.Aliased())
	hostile.TruncateFile(t, p, 8192)
	want := fmt.Sprintf("read %s: npybridge: truncated input at byte 8192: another process truncated the file while it was being read: "+
		"it now holds 8192 bytes, and bytes 0 to %d were being read", p, 128+len(a.Data))

	var out bytes.Buffer
	n, err := m.WriteTo(&out)
	assert.ErrorIs(t, err, ndarray.ErrTruncated)
	assert.EqualError(t, err, want)
	assert.Zero(t, n)

	var sum uint64
	err = m.Guard(func() error {
		values, err := ndarray.Values[uint16](m.Array)
		for _, v := range values {
			sum += uint64(v)
		}
		return err
	})
	assert.EqualError(t, err, want)
	// What is left can still be read.
	require.NoError(t, m.Guard(func() error { sum = uint64(m.Array.Data[8191-128]); return nil }))
	assert.Equal(t, a.Data[8191-128], byte(sum))
}

// A stored npz member mapped, the archive truncated by another process:
// the error names the archive and the first byte gone, counted in the file.
func TestMappedNPZMemberTruncated(t *testing.T) {
	_, a := hostile.ThreeMiBNPY(t)
	p := filepath.Join(t.TempDir(), "run.npz")
	require.NoError(t, WriteNPZFile(p, []NamedArray{{Name: "image", Array: a}}, false))
	z, err := OpenNPZFile(p)
	require.NoError(t, err)
	defer z.Close()
	m, err := z.OpenMapped("image")
	require.NoError(t, err)
	defer m.Close()
	require.True(t, m.Aliased())
	hostile.TruncateFile(t, p, 8192)
	var out bytes.Buffer
	_, err = m.WriteTo(&out)
	assert.ErrorIs(t, err, ndarray.ErrTruncated)
	assert.Regexp(t, "^read "+regexp.QuoteMeta(p)+`: npybridge: truncated input at byte 8192: another process truncated the file while it was being read: `+
		`it now holds 8192 bytes, and bytes \d+ to \d+ were being read$`, err.Error())
}

// The truncation tests' file is np.save's bytes, as Write writes them.
func TestThreeMiBNPYIsWritesBytes(t *testing.T) {
	p, a := hostile.ThreeMiBNPY(t)
	var want bytes.Buffer
	require.NoError(t, Write(&want, a))
	got, err := os.ReadFile(p)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want.Bytes(), got))
}
