package npybridge

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

type mappedSample struct {
	ID  int32      `npy:"id"`
	X   float64    `npy:"x"`
	Pos [3]float32 `npy:"pos"`
}

// Record arrays map read-write too: a file created for records (with the
// header open_memmap writes for the same dtype), filled through Go structs
// that alias the mapped rows, reads in numpy as written; a record file
// numpy made with open_memmap is filled field by field through
// OpenMappedWritable.
func TestMappedRecords(t *testing.T) {
	dir := t.TempDir()
	dt, err := ndarray.RecordDTypeOf[mappedSample]()
	require.NoError(t, err)
	goPath := filepath.Join(dir, "go.npy")
	m, err := MapOptions{}.CreateMapped(goPath, dt, 10)
	require.NoError(t, err)
	rows, err := m.Rows(2, 5)
	require.NoError(t, err)
	recs, err := ndarray.RecordsOf[mappedSample](rows)
	require.NoError(t, err)
	for i := range recs {
		recs[i] = mappedSample{ID: int32(100 + i), X: float64(i) / 4, Pos: [3]float32{1, 2, float32(i)}}
	}
	require.NoError(t, m.Close())

	descr, err := dt.Descr()
	require.NoError(t, err)
	var fields [][]any
	for _, it := range descr {
		f := []any{it.Name, it.DType.String()}
		if it.Shape != nil {
			f = append(f, it.Shape)
		}
		fields = append(fields, f)
	}
	js, _ := json.Marshal(fields)
	npPath := filepath.Join(dir, "np.npy")
	out := pypeer.Run(t, pypeer.Helpers+`
import json, sys
fields = [tuple(f[:2]) + ((tuple(f[2]),) if len(f) > 2 else ()) for f in json.loads(sys.argv[1])]
dt = np.lib.format.descr_to_dtype(fields)
a = np.load(sys.argv[2])
assert a.dtype == dt, (a.dtype, dt)
print(a["id"].tolist(), a["x"].tolist(), a["pos"][4].tolist())
ref = sys.argv[3]
m = np.lib.format.open_memmap(ref + ".ref.npy", mode="w+", dtype=dt, shape=(10,))
del m
assert open(ref + ".ref.npy", "rb").read(128) == open(sys.argv[2], "rb").read(128), "header differs from open_memmap's"
m = np.lib.format.open_memmap(ref, mode="w+", dtype=dt, shape=(4,))
del m
`, nil, string(js), goPath, npPath)
	assert.Equal(t, "[0, 0, 100, 101, 102, 0, 0, 0, 0, 0] [0.0, 0.0, 0.0, 0.25, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0] [1.0, 2.0, 2.0]\n", string(out))

	w, err := MapOptions{}.OpenMappedWritable(npPath)
	require.NoError(t, err)
	require.NoError(t, ndarray.SetFieldValues(w.Array, "x", []float64{1.5, -2, 3, 4}))
	require.NoError(t, w.Close())
	out = pypeer.Run(t, pypeer.Helpers+`
print(np.load(sys.argv[1])["x"].tolist())
`, nil, npPath)
	assert.Equal(t, "[1.5, -2.0, 3.0, 4.0]\n", string(out))
}

// NEP 1's use: a map created from a record dtype read with ReadHeader of
// a template file numpy wrote (nested, padded, big-endian fields) gets
// open_memmap's header for it, and what is written field by field reads
// back in numpy under the template's dtype.
func TestMappedRecordFromTemplate(t *testing.T) {
	dir := t.TempDir()
	tmpl, ref, out := filepath.Join(dir, "template.npy"), filepath.Join(dir, "ref.npy"), filepath.Join(dir, "out.npy")
	pypeer.Run(t, pypeer.Helpers+`
dt = np.dtype([("t", "<f8"), ("adc", [("ch", ">i2", (4,)), ("ok", "?")]), ("tag", "S3")], align=True)
np.save(sys.argv[1], np.zeros(1, dt))
m = np.lib.format.open_memmap(sys.argv[2], mode="w+", dtype=dt, shape=(6,))
del m
`, nil, tmpl, ref)
	f, err := os.Open(tmpl)
	require.NoError(t, err)
	h, err := ReadOptions{}.ReadHeader(f)
	f.Close()
	require.NoError(t, err)
	require.True(t, h.DType.IsRecord())
	// A big-endian field: SetFieldValues writes each value in its
	// field's byte order, so the raw bytes may be mapped.
	m, err := MapOptions{RawByteOrder: true}.CreateMapped(out, h.DType, 6)
	require.NoError(t, err)
	require.NoError(t, ndarray.SetFieldValues(m.Array, "t", []float64{0, 0.5, 1, 1.5, 2, 2.5}))
	require.NoError(t, ndarray.SetFieldValues(m.Array, "adc.ch", []int16{1, 2, 3, 4, -1, -2, -3, -4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9}))
	require.NoError(t, m.Close())
	want, err := os.ReadFile(ref)
	require.NoError(t, err)
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Equal(t, len(want), len(got), "file size")
	assert.Equal(t, string(want[:h.DataOffset]), string(got[:h.DataOffset]), "header")
	res := pypeer.Run(t, pypeer.Helpers+`
a = np.load(sys.argv[1])
assert a.dtype == np.load(sys.argv[2]).dtype
print(a["t"].tolist(), a["adc"]["ch"][1].tolist(), a["adc"]["ch"][5].tolist())
`, nil, out, tmpl)
	assert.Equal(t, "[0.0, 0.5, 1.0, 1.5, 2.0, 2.5] [-1, -2, -3, -4] [0, 0, 0, 9]\n", string(res))
}
