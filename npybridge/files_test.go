package npybridge

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func testArray(t *testing.T) *ndarray.Array {
	a, err := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	require.NoError(t, err)
	a, err = a.ToOrder('<')
	require.NoError(t, err)
	return a
}

func TestOpenMapped(t *testing.T) {
	a := testArray(t)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, a))
	path := writeTemp(t, "a.npy", buf.Bytes())
	m, err := ReadOptions{}.OpenMapped(path)
	require.NoError(t, err)
	assert.Equal(t, canMap, m.Aliased())
	assert.True(t, a.Equal(m.Array))
	v, err := ndarray.Values[float64](m.Array)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, v)
	require.NoError(t, m.Close())
	require.NoError(t, m.Close())

	// Truncated: refused before mapping.
	short := writeTemp(t, "short.npy", buf.Bytes()[:buf.Len()-1])
	_, err = ReadOptions{}.OpenMapped(short)
	assert.ErrorIs(t, err, ndarray.ErrTruncated)
	assert.Contains(t, err.Error(), "short.npy")

	// Fortran order: transposed into memory, not aliased.
	col, err := a.ColumnMajorData()
	require.NoError(t, err)
	f := npyWith(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n", col)
	m, err = ReadOptions{}.OpenMapped(writeTemp(t, "f.npy", f))
	require.NoError(t, err)
	assert.False(t, m.Aliased())
	assert.True(t, a.Equal(m.Array))
	require.NoError(t, m.Close())
}

func TestNPZBothWaysWithNumpy(t *testing.T) {
	a := testArray(t)
	b, _ := ndarray.FromSlice([]int16{7, -8})
	b, _ = b.ToOrder('>')
	dir := t.TempDir()
	for _, compress := range []bool{false, true} {
		path := filepath.Join(dir, map[bool]string{false: "stored.npz", true: "deflated.npz"}[compress])
		require.NoError(t, WriteNPZFile(path, []NamedArray{{"image", a}, {"counts", b}}, compress))
		back, err := ReadOptions{}.ReadNPZFile(path)
		require.NoError(t, err)
		require.Len(t, back, 2)
		assert.Equal(t, "image", back[0].Name)
		assert.True(t, a.Equal(back[0].Array))
		assert.True(t, b.Equal(back[1].Array))
	}
	out := pypeer.Run(t, `
import json, os
import numpy as np
d = sys.argv[1]
res = {}
for name in ("stored.npz", "deflated.npz"):
    with np.load(os.path.join(d, name)) as z:
        res[name] = {k: [z[k].dtype.str, list(z[k].shape), z[k].ravel().tolist()] for k in z.files}
np.savez(os.path.join(d, "np.npz"), np.arange(3, dtype="<u4"), x=np.eye(2, dtype=">f4"))
np.savez_compressed(os.path.join(d, "npc.npz"), y=np.asfortranarray(np.arange(6.).reshape(2, 3)))
print(json.dumps(res, sort_keys=True))
`, nil, dir)
	var res map[string]map[string][]any
	require.NoError(t, json.Unmarshal(out, &res))
	for _, name := range []string{"stored.npz", "deflated.npz"} {
		assert.Equal(t, []any{"<f8", []any{2.0, 3.0}, []any{1.0, 2.0, 3.0, 4.0, 5.0, 6.0}}, res[name]["image"], name)
		assert.Equal(t, []any{">i2", []any{2.0}, []any{7.0, -8.0}}, res[name]["counts"], name)
	}
	// np.savez puts keyword arrays before positional ones.
	got, err := ReadOptions{}.ReadNPZFile(filepath.Join(dir, "np.npz"))
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, []string{"x", "arr_0"}, []string{got[0].Name, got[1].Name})
	v, err := ndarray.Values[uint32](got[1].Array)
	require.NoError(t, err)
	assert.Equal(t, []uint32{0, 1, 2}, v)
	assert.Equal(t, ">f4", got[0].Array.DType.String())
	fv, err := ndarray.Values[float32](got[0].Array)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 0, 0, 1}, fv)

	got, err = ReadOptions{}.ReadNPZFile(filepath.Join(dir, "npc.npz"))
	require.NoError(t, err)
	require.Len(t, got, 1)
	yv, err := ndarray.Values[float64](got[0].Array)
	require.NoError(t, err)
	assert.Equal(t, []float64{0, 1, 2, 3, 4, 5}, yv, "a Fortran member comes back row-major")
}

func TestNPZRefusesOversizedMembers(t *testing.T) {
	a := testArray(t)
	var npy bytes.Buffer
	require.NoError(t, Write(&npy, a))
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "a.npy", Method: zip.Deflate})
	w.Write(npy.Bytes())
	w.Write(make([]byte, 1<<20)) // a megabyte the header does not declare
	require.NoError(t, zw.Close())
	_, err := ReadOptions{}.ReadNPZ(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
	assert.ErrorIs(t, err, ndarray.ErrMalformed)
	assert.Contains(t, err.Error(), `member "a": npybridge: malformed header: the member decompresses to 1048752 bytes, its NPY header declares 176`)

	zbuf.Reset()
	zw = zip.NewWriter(&zbuf)
	w, _ = zw.Create("notes.txt")
	w.Write([]byte("hi"))
	require.NoError(t, zw.Close())
	_, err = ReadOptions{}.ReadNPZ(bytes.NewReader(zbuf.Bytes()), int64(zbuf.Len()))
	assert.ErrorIs(t, err, ndarray.ErrNotArray)
}

// An archive is read member by member: one structured member or a text
// file does not make the others unreadable, as with np.load.
func TestOpenNPZMemberByMember(t *testing.T) {
	out := pypeer.Run(t, `
import io, zipfile
import numpy as np
f = io.BytesIO()
np.savez(f, image=np.arange(6, dtype="<u2").reshape(2, 3), rec=np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]),
         objs=np.array([1, "x"], dtype=object), spectrum=np.linspace(0, 1, 5))
with zipfile.ZipFile(f, "a") as z:
    z.writestr("readme.txt", "hello")
sys.stdout.buffer.write(f.getvalue())
`, nil)
	z, err := OpenNPZ(bytes.NewReader(out), int64(len(out)))
	require.NoError(t, err)
	assert.Equal(t, []string{"image", "rec", "objs", "spectrum", "readme.txt"}, z.Names())

	h, err := z.Header("image")
	require.NoError(t, err)
	assert.Equal(t, "<u2", h.DType.String())
	assert.Equal(t, []int{2, 3}, h.Shape)
	a, err := z.Read("image")
	require.NoError(t, err)
	v, _ := ndarray.Values[uint16](a)
	assert.Equal(t, []uint16{0, 1, 2, 3, 4, 5}, v)
	s, err := z.Read("spectrum")
	require.NoError(t, err)
	assert.Equal(t, "<f8 (5,)", s.String())

	rec, err := z.Read("rec")
	require.NoError(t, err, "a record member reads")
	assert.Equal(t, "[('a', '<i4'), ('b', '<f4')] (2,)", rec.String())
	_, err = z.Read("objs")
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "pickle")
	_, err = z.Read("readme.txt")
	assert.ErrorIs(t, err, ndarray.ErrNotArray)
	assert.EqualError(t, err, `npybridge: not an array: member "readme.txt" is not a NAME.npy file`)
	_, err = z.Read("nope")
	assert.ErrorIs(t, err, ErrNoMember)
	assert.EqualError(t, err, `npybridge: no such member: no member "nope" (the archive holds image, rec, objs, spectrum, readme.txt)`)

	_, err = ReadOptions{}.ReadNPZ(bytes.NewReader(out), int64(len(out)))
	assert.ErrorIs(t, err, ErrUnsupported, "reading every member fails on the first that cannot be read")

	_, err = OpenNPZ(bytes.NewReader(out[:100]), 100)
	assert.ErrorIs(t, err, ErrNotNPZ)
	assert.EqualError(t, err, `npybridge: not an npz archive: no zip end of central directory record (PK\x05\x06) in the last 100 bytes`)
}

// Writing a nil or inconsistent array is a write error, not a parse error.
func TestWriteRefusesInvalidArrays(t *testing.T) {
	err := WriteFile(filepath.Join(t.TempDir(), "x.npy"), nil)
	assert.ErrorIs(t, err, ErrInvalidArray)
	assert.NotErrorIs(t, err, ndarray.ErrMalformed)
	assert.EqualError(t, err, "npybridge: invalid array: cannot write a nil *ndarray.Array")
	err = Write(io.Discard, &ndarray.Array{DType: ndarray.DTypeOf[float64](), Shape: []int{2}, Data: make([]byte, 15)})
	assert.ErrorIs(t, err, ErrInvalidArray)
	assert.ErrorIs(t, err, ndarray.ErrDataLength)
	err = WriteNPZ(io.Discard, []NamedArray{{Name: "a", Array: nil}}, false)
	assert.ErrorIs(t, err, ErrInvalidArray)
}

// The codecs' one error type shows its fields in the documentation (an
// alias of an internal type would hide them).
func TestErrorTypeIsDocumented(t *testing.T) {
	out, err := exec.Command("go", "doc", "../ndarray", "Error").CombinedOutput()
	require.NoError(t, err, "%s", out)
	for _, field := range []string{"Pkg    string", "Err    error", "Offset int64", "Detail string", "Cause  error"} {
		assert.Contains(t, string(out), field)
	}
}
