package npybridge

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// sparseWriter writes to a file, seeking over blocks of zeros instead of
// writing them, so that a test can make a file of many GiB in little disk
// and time. Close sets the file's final size.
type sparseWriter struct {
	f   *os.File
	off int64
}

var zeros = make([]byte, 1<<20)

func (s *sparseWriter) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		n := min(len(rest), len(zeros))
		if !bytes.Equal(rest[:n], zeros[:n]) {
			if _, err := s.f.WriteAt(rest[:n], s.off); err != nil {
				return len(p) - len(rest), err
			}
		}
		s.off += int64(n)
		rest = rest[n:]
	}
	return len(p), nil
}

func (s *sparseWriter) Close() error {
	if err := s.f.Truncate(s.off); err != nil {
		return err
	}
	return s.f.Close()
}

// zerosThen reads n zero bytes and then tail.
func zerosThen(n int64, tail []byte) io.Reader {
	return io.MultiReader(io.LimitReader(zeroReader{}, n), bytes.NewReader(tail))
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// sparseArchive writes, as a sparse file, an archive holding "big", a <u1
// array of bigLen bytes that are zero but for its last 16 (1..16), and
// after it "after", 8 MiB of <f8.
func sparseArchive(t testing.TB, bigLen int64) (string, *ndarray.Array) {
	p := filepath.Join(t.TempDir(), "big.npz")
	f, err := os.Create(p)
	require.NoError(t, err)
	sw := &sparseWriter{f: f}
	z := NewNPZWriter(sw, false)
	tail := []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	require.NoError(t, z.WriteFrom("big", ndarray.DTypeOf[uint8](), []int{int(bigLen)}, zerosThen(bigLen-16, tail)))
	v := make([]float64, 1<<20)
	for i := range v {
		v[i] = float64(i) / 3
	}
	after, _ := ndarray.FromSlice(v)
	require.NoError(t, z.WriteArray("after", after))
	require.NoError(t, z.Close())
	require.NoError(t, sw.Close())
	return p, after
}

// An archive and a member over 4 GiB are written as zip64, read back by
// ndpack and by numpy. The file is sparse: the test needs neither 4 GiB of
// memory nor of disk.
func TestZip64(t *testing.T) {
	const bigLen = 4<<30 + 64
	p, after := sparseArchive(t, bigLen)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Greater(t, fi.Size(), int64(4<<30+8<<20), "the archive is over 4 GiB")

	z, err := OpenNPZFile(p)
	require.NoError(t, err)
	defer z.Close()
	assert.Equal(t, []string{"big", "after"}, z.Names())
	h, rc, err := z.Open("big")
	require.NoError(t, err)
	assert.Equal(t, []int{bigLen}, h.Shape)
	n, err := io.Copy(io.Discard, io.LimitReader(rc, bigLen-16))
	require.NoError(t, err)
	assert.Equal(t, int64(bigLen-16), n)
	last, err := io.ReadAll(rc)
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, last)
	rc.Close()
	got, err := z.Read("after")
	require.NoError(t, err)
	assert.True(t, after.Equal(got))
	m, err := z.OpenMapped("after")
	require.NoError(t, err)
	assert.True(t, m.Aliased())
	assert.True(t, after.Equal(m.Array))
	m.Close()

	out := pypeer.Run(t, `
import json
import numpy as np
from numpy.lib import format as npf
z = np.load(sys.argv[1])
res = {"files": z.files}
info = z.zip.getinfo("big.npy")
res["big_size"] = info.file_size
with z.zip.open("big.npy") as f:
    version = npf.read_magic(f)
    shape, fortran, dtype = npf._read_array_header(f, version)
    res["big_header"] = [list(shape), dtype.str, fortran]
    start = f.tell()
    f.seek(start + shape[0] - 16)
    res["big_tail"] = np.frombuffer(f.read(16), dtype="u1").tolist()
a = z["after"]
res["after"] = [a.dtype.str, list(a.shape), float(a[3]), float(a[-1])]
print(json.dumps(res))
`, nil, p)
	var res map[string]any
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	assert.Equal(t, []any{"big", "after"}, res["files"])
	assert.Equal(t, float64(bigLen+128), res["big_size"])
	assert.Equal(t, []any{[]any{float64(bigLen)}, "|u1", false}, res["big_header"])
	assert.Equal(t, []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0}, res["big_tail"])
	assert.Equal(t, []any{"<f8", []any{float64(1 << 20)}, 1.0, float64(1<<20-1) / 3}, res["after"])
}

// Stored members that ndpack writes map without a copy; numpy's own
// archives usually put data at an unaligned offset, and compressed members
// cannot be mapped: each says why.
func TestNPZOpenMapped(t *testing.T) {
	dir := t.TempDir()
	a, _ := ndarray.FromSlice([]float64{1.5, 2.5, 3.5})
	b, _ := ndarray.FromSlice([]int16{1, 2})
	ours := filepath.Join(dir, "ours.npz")
	require.NoError(t, WriteNPZFile(ours, []NamedArray{{"b", b}, {"a", a}}, false))
	z, err := OpenNPZFile(ours)
	require.NoError(t, err)
	for _, na := range []NamedArray{{"a", a}, {"b", b}} {
		m, err := z.OpenMapped(na.Name)
		require.NoError(t, err, na.Name)
		assert.True(t, m.Aliased())
		assert.True(t, na.Array.Equal(m.Array))
		require.NoError(t, m.Close())
	}
	z.Close()

	pypeer.Run(t, `
import numpy as np, os
d = sys.argv[1]
np.savez(os.path.join(d, "numpy.npz"), a=np.array([1.5, 2.5, 3.5]))
np.savez_compressed(os.path.join(d, "packed.npz"), a=np.array([1.5, 2.5, 3.5]))
z = np.load(os.path.join(d, "ours.npz"))
assert np.array_equal(z["a"], [1.5, 2.5, 3.5]) and list(z["b"]) == [1, 2], "numpy reads the aligned archive"
`, nil, dir)
	z, err = OpenNPZFile(filepath.Join(dir, "numpy.npz"))
	require.NoError(t, err)
	_, err = z.OpenMapped("a")
	if err != nil { // at numpy's usual offsets, f8 data is misaligned
		assert.ErrorIs(t, err, ErrNotMappable)
		assert.Regexp(t, `its data starts at file offset \d+, not a multiple of 8 as <f8 items need`, err.Error())
	}
	z.Close()
	z, err = OpenNPZFile(filepath.Join(dir, "packed.npz"))
	require.NoError(t, err)
	_, err = z.OpenMapped("a")
	assert.ErrorIs(t, err, ErrNotMappable)
	assert.Contains(t, err.Error(), "compressed")
	z.Close()
	_, err = (&NPZ{}).OpenMapped("x")
	assert.ErrorIs(t, err, ErrNoMember)
}
