package ndpack_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

func testArray(t *testing.T) *ndarray.Array {
	a, err := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	a, err = a.ToOrder('<')
	require.NoError(t, err)
	return a
}

// npyWith is a version 1.0 .npy file of the given header text and data.
func npyWith(text string, data []byte) []byte {
	b := append([]byte(npybridge.Magic), 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(text)))
	return append(append(b, text...), data...)
}

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func TestConvertBothWaysInMemoryAndFiles(t *testing.T) {
	a := testArray(t)
	var npy bytes.Buffer
	require.NoError(t, npybridge.Write(&npy, a))
	blob, err := ext110.Marshal(a)
	require.NoError(t, err)

	var out bytes.Buffer
	require.NoError(t, ndpack.ConvertOptions{}.NPYToExt110(&out, bytes.NewReader(npy.Bytes())))
	assert.Equal(t, blob, out.Bytes())
	out.Reset()
	require.NoError(t, ndpack.ConvertOptions{}.Ext110ToNPY(&out, bytes.NewReader(blob)))
	assert.Equal(t, npy.Bytes(), out.Bytes())

	// File to file: the mmap + kernel-copy path.
	dir := t.TempDir()
	npyPath, extPath := filepath.Join(dir, "a.npy"), filepath.Join(dir, "a.ext")
	require.NoError(t, os.WriteFile(npyPath, npy.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(extPath, blob, 0o644))
	convertFile(t, ndpack.ConvertOptions{}.NPYToExt110, npyPath, filepath.Join(dir, "b.ext"))
	got, _ := os.ReadFile(filepath.Join(dir, "b.ext"))
	assert.Equal(t, blob, got)
	convertFile(t, ndpack.ConvertOptions{}.Ext110ToNPY, extPath, filepath.Join(dir, "b.npy"))
	got, _ = os.ReadFile(filepath.Join(dir, "b.npy"))
	assert.Equal(t, npy.Bytes(), got)

	// Fortran order converts to the row-major object.
	col, _ := a.ColumnMajorData()
	out.Reset()
	require.NoError(t, ndpack.ConvertOptions{}.NPYToExt110(&out, bytes.NewReader(npyWith("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n", col))))
	assert.Equal(t, blob, out.Bytes())
}

func convertFile(t *testing.T, conv func(w io.Writer, r io.Reader) error, in, out string) {
	t.Helper()
	r, err := os.Open(in)
	require.NoError(t, err)
	defer r.Close()
	w, err := os.Create(out)
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, conv(w, r))
}

func TestConvertRefuses(t *testing.T) {
	a := testArray(t)
	var npy bytes.Buffer
	require.NoError(t, npybridge.Write(&npy, a))
	blob, _ := ext110.Marshal(a)

	var out bytes.Buffer
	err := ndpack.ConvertOptions{}.NPYToExt110(&out, bytes.NewReader(npy.Bytes()[:npy.Len()-1]))
	assert.ErrorIs(t, err, ndarray.ErrTruncated)
	assert.Zero(t, out.Len(), "nothing is written for a short file")

	s, _ := ndarray.New(ndarray.MustParseDType("|S2"), []int{1}, []byte("ab"))
	npy.Reset()
	require.NoError(t, npybridge.Write(&npy, s))
	assert.ErrorIs(t, ndpack.ConvertOptions{}.NPYToExt110(&out, bytes.NewReader(npy.Bytes())), ndarray.ErrNonstandard)
	out.Reset()
	require.NoError(t, ndpack.ConvertOptions{Ext110: ext110.Options{AllowNonstandard: true}}.NPYToExt110(&out, bytes.NewReader(npy.Bytes())))
	back, err := ext110.Unmarshal(out.Bytes())
	require.NoError(t, err)
	assert.True(t, s.Equal(back))

	// Two objects, trailing bytes, an empty input.
	two := append(append([]byte{}, blob...), blob...)
	assert.ErrorContains(t, ndpack.ConvertOptions{}.Ext110ToNPY(&out, bytes.NewReader(two)), "more than one ext 110 object")
	path := writeTemp(t, "two.ext", two)
	f, _ := os.Open(path)
	defer f.Close()
	assert.ErrorContains(t, ndpack.ConvertOptions{}.Ext110ToNPY(&out, f), "89 bytes after the ext 110 object")
	assert.ErrorContains(t, ndpack.ConvertOptions{}.Ext110ToNPY(&out, bytes.NewReader(nil)), "the input is empty")
	assert.ErrorIs(t, ndpack.ConvertOptions{}.Ext110ToNPY(&out, bytes.NewReader(blob[:50])), ndarray.ErrTruncated)
}
