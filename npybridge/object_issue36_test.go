package npybridge

import (
	"archive/zip"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// zeroTail is an endless stream of zero bytes that fails once more than limit
// bytes were read from it: a reader that does not stop at the pickle's
// STOP would read /dev/zero forever.
type zeroTail struct{ read, limit int64 }

func (z *zeroTail) Read(p []byte) (int, error) {
	if z.read > z.limit {
		return 0, errors.New("test: read 64 MiB past the pickle")
	}
	clear(p)
	z.read += int64(len(p))
	return len(p), nil
}

func smallObjectNPY() []byte {
	return hostile.ObjectNPY(2, hostile.ObjectPickle(2, "", func(i int) string { return "X\x01\x00\x00\x00" + string(rune('a'+i)) }))
}

// The pickle is read up to its STOP and no further, as np.load reads it:
// before, a sparse 2 GiB tail was read whole (2 GiB allocated), and a
// stream of zeros after the file was read until memory ran out.
func TestReadObjectsStopsAtSTOP(t *testing.T) {
	npy := smallObjectNPY()
	p := filepath.Join(t.TempDir(), "tail.npy")
	require.NoError(t, os.WriteFile(p, npy, 0o666))
	require.NoError(t, os.Truncate(p, int64(len(npy))+2<<30))
	var a *ObjectArray
	var err error
	alloc, _ := hostile.HeapCost(func() { a, err = ReadOptions{AllowObjects: true}.readObjectsFile(p) })
	require.NoError(t, err)
	assert.Equal(t, []any{"a", "b"}, a.Values)
	assert.Less(t, alloc, uint64(8<<20), "bytes allocated reading a sparse 2 GiB tail")

	z := &zeroTail{limit: 64 << 20}
	a, err = ReadOptions{AllowObjects: true}.ReadObjects(io.MultiReader(bytes.NewReader(npy), z))
	require.NoError(t, err)
	assert.Equal(t, []any{"a", "b"}, a.Values)
	assert.Less(t, z.read, int64(1<<20), "bytes read past the pickle")
}

// An .npz member's pickle is bounded by its compressed size, not by what it
// decompresses to: 40 MB of MEMOIZE opcodes deflate to 40 KB, and were
// allowed 24 bytes each (about 1 GB allocated); the default is now 24 times
// the 40 KB plus 64 MiB, and the read stops there.
func TestNPZObjectAllowanceIsCompressed(t *testing.T) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "a.npy", Method: zip.Deflate})
	require.NoError(t, err)
	w.Write(hostile.ObjectNPY(1, []byte("\x80\x04N")))
	chunk := bytes.Repeat([]byte{0x94}, 1<<20)
	for range 40 {
		w.Write(chunk)
	}
	require.NoError(t, zw.Close())
	t.Logf("npz of %d bytes", buf.Len())
	z, err := ReadOptions{AllowObjects: true}.OpenNPZ(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	require.NoError(t, err)
	alloc, _ := hostile.HeapCost(func() { _, err = z.ReadObjects("a") })
	assert.ErrorIs(t, err, ErrPickle)
	assert.ErrorIs(t, err, codecerr.ErrTooLarge)
	assert.ErrorContains(t, err, "ReadOptions.MaxObjectsSize")
	assert.Less(t, alloc, uint64(400<<20), "bytes allocated")
}

// ReadOptions.MaxObjectsSize bounds what the values would be written out,
// shared ones counted at every place, and can be raised.
func TestMaxObjectsSize(t *testing.T) {
	var list30 []byte
	for _, c := range hostile.ObjectCases(false) {
		if c.Name == "30-item list shared 2000000 times" {
			list30 = hostile.ObjectNPY(c.N, c.Data)
		}
	}
	_, err := ReadOptions{AllowObjects: true, MaxObjectsSize: 32 << 20}.ReadObjects(bytes.NewReader(list30))
	assert.ErrorIs(t, err, codecerr.ErrTooLarge)
	assert.ErrorContains(t, err, "more than 33554432 bytes written out, shared ones repeated where they appear (ReadOptions.MaxObjectsSize)")
	a, err := ReadOptions{AllowObjects: true}.ReadObjects(bytes.NewReader(list30))
	require.NoError(t, err)
	assert.Len(t, a.Values, 2000000)
	// The pickle itself is bounded too: one str of 2 MiB is not read
	// within 1 MiB.
	long := hostile.ObjectNPY(1, hostile.ObjectPickle(1, "", func(int) string {
		return "X\x00\x00\x20\x00" + strings.Repeat("a", 2<<20)
	}))
	_, err = ReadOptions{AllowObjects: true, MaxObjectsSize: 1 << 20}.ReadObjects(bytes.NewReader(long))
	assert.ErrorContains(t, err, "the pickle is longer than 1048576 bytes (ReadOptions.MaxObjectsSize)")
	assert.True(t, strings.HasPrefix(err.Error(), "npybridge: "))
}

// Writing refers to a list shared among the values once written, as
// Python's pickler does: the 2,000,000 references to one list are a 4 MB
// file again, not 130 MB, and numpy reads it back the same.
func TestWriteObjectsKeepsSharing(t *testing.T) {
	var list30 []byte
	for _, c := range hostile.ObjectCases(false) {
		if c.Name == "30-item list shared 2000000 times" {
			list30 = hostile.ObjectNPY(c.N, c.Data)
		}
	}
	a, err := ReadOptions{AllowObjects: true}.ReadObjects(bytes.NewReader(list30))
	require.NoError(t, err)
	b, err := AppendObjects(nil, a)
	require.NoError(t, err)
	assert.Less(t, len(b), 2*len(list30))
	back, err := ReadOptions{AllowObjects: true}.ReadObjects(bytes.NewReader(b))
	require.NoError(t, err)
	assert.Equal(t, a.Values[1999999], back.Values[1999999])
}
