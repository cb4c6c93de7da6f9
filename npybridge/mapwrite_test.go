//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package npybridge

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// openMemmapCases are dtypes and shapes for which CreateMapped must write
// the file numpy's open_memmap(mode="w+") writes.
var openMemmapCases = []struct {
	dtype string
	shape []int
}{
	{"<f8", []int{4096, 1024}},
	{"<f8", []int{}},
	{"<f8", []int{0}},
	{"<i4", []int{0, 5}},
	{">i4", []int{3}},
	{">c16", []int{2, 2}},
	{"|u1", []int{2, 3, 4}},
	{"|b1", []int{7}},
	{"<f2", []int{5, 1}},
	{"|S3", []int{4}},
	{"<U5", []int{2}},
	{"<M8[ns]", []int{3}},
	{"<f4", []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
	{"<u8", []int{123456789, 0, 99999}},
}

// CreateMapped writes, byte for byte, the header open_memmap(mode="w+")
// writes, and a file of the same size whose data reads as zeros.
func TestCreateMappedAsOpenMemmap(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	type pyCase struct {
		Path  string `json:"path"`
		DType string `json:"dtype"`
		Shape []int  `json:"shape"`
	}
	var cases []pyCase
	for i, c := range openMemmapCases {
		m, err := MapOptions{RawByteOrder: true}.CreateMapped(filepath.Join(dir, fmt.Sprintf("go%d.npy", i)), ndarray.MustParseDType(c.dtype), c.shape...)
		require.NoError(t, err, c.dtype)
		require.NoError(t, m.Close())
		cases = append(cases, pyCase{filepath.Join(dir, fmt.Sprintf("np%d.npy", i)), c.dtype, c.shape})
	}
	js, err := json.Marshal(cases)
	require.NoError(t, err)
	pypeer.Run(t, pypeer.Helpers+`
import json, sys
for c in json.loads(sys.argv[1]):
    m = np.lib.format.open_memmap(c["path"], mode="w+", dtype=np.dtype(c["dtype"]), shape=tuple(c["shape"]))
    del m
`, nil, string(js))
	for i, c := range openMemmapCases {
		// Compared a block at a time: reading the 32 MiB files whole would
		// raise this process's peak RSS, which the memory tests' children
		// inherit across exec.
		goFile, err := os.Open(filepath.Join(dir, fmt.Sprintf("go%d.npy", i)))
		require.NoError(t, err)
		npFile, err := os.Open(cases[i].Path)
		require.NoError(t, err)
		gb, nb := make([]byte, 64<<10), make([]byte, 64<<10)
		gn, _ := io.ReadFull(goFile, gb)
		nn, _ := io.ReadFull(npFile, nb)
		h := AppendHeader(nil, ndarray.MustParseDType(c.dtype), c.shape)
		assert.Equal(t, string(nb[:min(len(h), nn)]), string(gb[:min(len(h), gn)]), "header of %s %v", c.dtype, c.shape)
		for gn > 0 && gn == nn && bytes.Equal(gb[:gn], nb[:nn]) {
			gn, _ = io.ReadFull(goFile, gb)
			nn, _ = io.ReadFull(npFile, nb)
		}
		assert.True(t, gn == 0 && nn == 0, "files of %s %v differ", c.dtype, c.shape)
		gi, _ := goFile.Stat()
		ni, _ := npFile.Stat()
		assert.Equal(t, ni.Size(), gi.Size(), "file size of %s %v", c.dtype, c.shape)
		goFile.Close()
		npFile.Close()
	}
}

// The zeros are a hole: creating a large array writes no data blocks.
func TestCreateMappedSparse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.npy")
	m, err := MapOptions{}.CreateMapped(p, ndarray.MustParseDType("<f8"), 1<<17, 1<<10) // 1 GiB
	require.NoError(t, err)
	require.NoError(t, m.Close())
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.EqualValues(t, 128+1<<30, fi.Size())
	blocks := fi.Sys().(*syscall.Stat_t).Blocks
	assert.LessOrEqual(t, blocks*512, int64(64<<10), "disk bytes used by a new 1 GiB array")
}

// An existing file is left alone unless Replace is set; with it, the new
// file takes its name.
func TestCreateMappedExisting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.npy")
	require.NoError(t, os.WriteFile(p, []byte("precious"), 0o644))
	_, err := MapOptions{}.CreateMapped(p, ndarray.MustParseDType("<f8"), 3)
	assert.ErrorIs(t, err, fs.ErrExist)
	assert.EqualError(t, err, "create "+p+": npybridge: file already exists: CreateMapped replaces a file only with MapOptions.Replace")
	b, _ := os.ReadFile(p)
	assert.Equal(t, "precious", string(b))
	assert.Empty(t, leftovers(t, filepath.Dir(p), "a.npy"))

	m, err := MapOptions{Replace: true}.CreateMapped(p, ndarray.MustParseDType("<f8"), 3)
	require.NoError(t, err)
	require.NoError(t, m.Close())
	b, _ = os.ReadFile(p)
	assert.Equal(t, append(AppendHeader(nil, ndarray.MustParseDType("<f8"), []int{3}), make([]byte, 24)...), b)
	assert.Empty(t, leftovers(t, filepath.Dir(p), "a.npy"))
}

// leftovers lists the files of dir other than keep.
func leftovers(t *testing.T, dir, keep string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if e.Name() != keep {
			out = append(out, e.Name())
		}
	}
	return out
}

// Typed views of a read-write map alias the file: values written through
// ndarray.Values and through Rows are in the file, for every reader.
func TestMappedWritesThrough(t *testing.T) {
	p := filepath.Join(t.TempDir(), "w.npy")
	m, err := MapOptions{}.CreateMapped(p, ndarray.DTypeOf[float64](), 4, 3)
	require.NoError(t, err)
	v, err := ndarray.Values[float64](m.Array)
	require.NoError(t, err)
	assert.Equal(t, unsafe.Pointer(&m.Array.Data[0]), unsafe.Pointer(&v[0]), "Values aliases the map")
	v[0] = 1.5
	rows, err := m.Rows(2, 4)
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3}, rows.Shape)
	assert.Equal(t, 48, cap(rows.Data))
	rv, err := ndarray.Values[float64](rows)
	require.NoError(t, err)
	for i := range rv {
		rv[i] = float64(100 + i)
	}
	// Another reader sees the writes before any Flush.
	a, err := ReadFile(p)
	require.NoError(t, err)
	got, _ := ndarray.Values[float64](a)
	assert.Equal(t, []float64{1.5, 0, 0, 0, 0, 0, 100, 101, 102, 103, 104, 105}, got)
	require.NoError(t, m.Flush())
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "Close twice")
	assert.Nil(t, m.Array)
	_, err = m.Rows(0, 1)
	assert.ErrorIs(t, err, os.ErrClosed)

	// Reopened by name, the data is there, and writable again.
	m, err = MapOptions{}.OpenMappedWritable(p)
	require.NoError(t, err)
	defer m.Close()
	v, _ = ndarray.Values[float64](m.Array)
	assert.Equal(t, got, v)
	v[1] = -2
	require.NoError(t, m.Close())
	a, err = ReadFile(p)
	require.NoError(t, err)
	got, _ = ndarray.Values[float64](a)
	assert.Equal(t, -2.0, got[1])
}

func TestMappedRowsBounds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "r.npy")
	m, err := MapOptions{}.CreateMapped(p, ndarray.DTypeOf[int32](), 4, 2)
	require.NoError(t, err)
	defer m.Close()
	for _, c := range [][2]int{{-1, 2}, {3, 2}, {0, 5}} {
		_, err := m.Rows(c[0], c[1])
		assert.ErrorIs(t, err, ndarray.ErrIndex)
		assert.EqualError(t, err, fmt.Sprintf("ndarray: index out of range: rows %d to %d of an array of 4 rows", c[0], c[1]))
	}
	r, err := m.Rows(4, 4)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 2}, r.Shape)

	s, err := MapOptions{}.CreateMapped(filepath.Join(t.TempDir(), "s.npy"), ndarray.DTypeOf[int32]())
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Rows(0, 0)
	assert.EqualError(t, err, "ndarray: index out of range: a 0-d array has no rows")
}

// rawNPY writes an .npy file of header text and data with the data starting
// at byte dataOff, as a writer other than numpy might.
func rawNPY(t *testing.T, name, descr string, fortran bool, shape string, dataOff int, data []byte) string {
	text := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, map[bool]string{true: "True", false: "False"}[fortran], shape)
	pad := dataOff - 10 - len(text) - 1
	require.GreaterOrEqual(t, pad, 0)
	b := append([]byte(Magic), 1, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(dataOff-10))
	b = append(b, text...)
	b = append(b, strings.Repeat(" ", pad)+"\n"...)
	b = append(b, data...)
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// Files a writer could not use safely are refused, each saying why.
func TestOpenMappedWritableRefuses(t *testing.T) {
	short := rawNPY(t, "short.npy", "<f8", false, "(4, 3)", 128, make([]byte, 90))
	_, err := MapOptions{}.OpenMappedWritable(short)
	assert.ErrorIs(t, err, ndarray.ErrTruncated)
	assert.EqualError(t, err, "open "+short+": npybridge: truncated input at byte 218: the header announces 96 data bytes from byte 128, the file holds 218 bytes in all (90 of data)")

	long := rawNPY(t, "long.npy", "<f8", false, "(4, 3)", 128, make([]byte, 100))
	_, err = MapOptions{}.OpenMappedWritable(long)
	assert.ErrorIs(t, err, ErrNotMappable)
	assert.EqualError(t, err, "open "+long+": npybridge: cannot be mapped at byte 224: the file holds 4 bytes after the 96 data bytes its header announces, which no reader of the array would see")

	fortran := rawNPY(t, "f.npy", "<f8", true, "(4, 3)", 128, make([]byte, 96))
	_, err = MapOptions{}.OpenMappedWritable(fortran)
	assert.ErrorIs(t, err, ErrNotMappable)
	assert.EqualError(t, err, "open "+fortran+": npybridge: cannot be mapped: the file is in Fortran order, so its rows are not contiguous; only C-order files are mapped read-write")
	// One dimension is the same in either order.
	m, err := MapOptions{}.OpenMappedWritable(rawNPY(t, "f1.npy", "<f8", true, "(12,)", 128, make([]byte, 96)))
	require.NoError(t, err)
	require.NoError(t, m.Close())

	odd := rawNPY(t, "odd.npy", "<f8", false, "(4, 3)", 132, make([]byte, 96))
	_, err = MapOptions{}.OpenMappedWritable(odd)
	assert.ErrorIs(t, err, ErrNotMappable)
	assert.EqualError(t, err, "open "+odd+": npybridge: cannot be mapped at byte 132: the data starts at byte 132, not a multiple of 8, so typed views of it would be copies; numpy's files start it on a multiple of 64")
	// Bytes need no alignment.
	m, err = MapOptions{}.OpenMappedWritable(rawNPY(t, "oddu1.npy", "|u1", false, "(4, 3)", 133, make([]byte, 12)))
	require.NoError(t, err)
	require.NoError(t, m.Close())

	other := ">f8"
	if ndarray.NativeOrder() == '>' {
		other = "<f8"
	}
	swapped := rawNPY(t, "be.npy", other, false, "(4, 3)", 128, make([]byte, 96))
	_, err = MapOptions{}.OpenMappedWritable(swapped)
	assert.ErrorIs(t, err, ErrNotMappable)
	assert.EqualError(t, err, "open "+swapped+": npybridge: cannot be mapped: "+other+" is not in the machine's byte order ("+string(rune(ndarray.NativeOrder()))+
		"), so values written through ndarray.Values would go to a copy; MapOptions.RawByteOrder maps it for writing the bytes directly")
	m, err = MapOptions{RawByteOrder: true}.OpenMappedWritable(swapped)
	require.NoError(t, err)
	m.Array.Data[7] = 0x40
	require.NoError(t, m.Close())
	b, _ := os.ReadFile(swapped)
	assert.Equal(t, byte(0x40), b[128+7])
	_, err = MapOptions{}.CreateMapped(filepath.Join(t.TempDir(), "be.npy"), ndarray.MustParseDType(other), 2)
	assert.ErrorIs(t, err, ErrNotMappable)

	_, err = MapOptions{}.OpenMappedWritable(filepath.Join(t.TempDir(), "missing.npy"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	// A FIFO that no one writes to would block the header's read forever.
	fifo := filepath.Join(t.TempDir(), "fifo.npy")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	done := make(chan error, 1)
	go func() {
		_, err := MapOptions{}.OpenMappedWritable(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrNotMappable)
		assert.EqualError(t, err, "open "+fifo+": npybridge: cannot be mapped: not a regular file (p---------)")
	case <-time.After(5 * time.Second):
		t.Fatal("OpenMappedWritable of a FIFO still blocked after 5 s")
	}
}

// fillValue is what the parallel fill test writes at row i, column j; numpy
// checks the same formula.
func fillValue(i, j int) float64 { return float64(i)*1024 + float64(j) + 0.25 }

// TestMappedFillChild is one worker of TestMappedParallelFill: it opens the
// file named by NDPACK_FILL_FILE and fills rows NDPACK_FILL_ROWS ("lo,hi").
func TestMappedFillChild(t *testing.T) {
	name := os.Getenv("NDPACK_FILL_FILE")
	if name == "" {
		t.Skip("run by TestMappedParallelFill")
	}
	lo, hi, _ := strings.Cut(os.Getenv("NDPACK_FILL_ROWS"), ",")
	l, _ := strconv.Atoi(lo)
	h, _ := strconv.Atoi(hi)
	m, err := MapOptions{}.OpenMappedWritable(name)
	require.NoError(t, err)
	fillRows(t, m, l, h)
	require.NoError(t, m.Close())
}

// fillRows writes fillValue into rows lo to hi-1 of m.
func fillRows(t testing.TB, m *Mapped, l, h int) {
	rows, err := m.Rows(l, h)
	require.NoError(t, err)
	v, err := ndarray.Values[float64](rows)
	require.NoError(t, err)
	cols := rows.Shape[1]
	for k := range v {
		v[k] = fillValue(l+k/cols, k%cols)
	}
}

// NEP 1's Polly Parallel: four processes, each with its own
// OpenMappedWritable, fill a quarter of the rows of one 4096x1024 <f8 file
// that CreateMapped made; numpy loads exactly the expected values.
func TestMappedParallelFill(t *testing.T) {
	pypeer.Require(t)
	const rows, cols, workers = 4096, 1024, 4
	p := filepath.Join(t.TempDir(), "fill.npy")
	m, err := MapOptions{}.CreateMapped(p, ndarray.MustParseDType("<f8"), rows, cols)
	require.NoError(t, err)
	require.NoError(t, m.Close())

	cmds := make([]*exec.Cmd, workers)
	outs := make([]bytes.Buffer, workers)
	for w := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMappedFillChild$", "-test.timeout=60s")
		cmd.Env = append(os.Environ(), "NDPACK_FILL_FILE="+p,
			fmt.Sprintf("NDPACK_FILL_ROWS=%d,%d", w*rows/workers, (w+1)*rows/workers))
		cmd.Stdout, cmd.Stderr = &outs[w], &outs[w]
		require.NoError(t, cmd.Start())
		cmds[w] = cmd
	}
	for w, cmd := range cmds {
		assert.NoError(t, cmd.Wait(), "worker %d: %s", w, outs[w].String())
	}
	out := pypeer.Run(t, pypeer.Helpers+`
import sys
a = np.load(sys.argv[1])
want = np.arange(4096, dtype='<f8')[:, None] * 1024 + np.arange(1024, dtype='<f8')[None, :] + 0.25
print(a.dtype.str, a.shape, np.array_equal(a, want), int((a != want).sum()))
`, nil, p)
	assert.Equal(t, "<f8 (4096, 1024) True 0\n", string(out))
}

// A read-write map truncated by another process: a write under Guard is an
// error naming the file and the first byte gone, not a SIGBUS.
func TestMappedWritableTruncated(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.npy")
	m, err := MapOptions{}.CreateMapped(p, ndarray.DTypeOf[uint16](), 3<<19)
	require.NoError(t, err)
	defer m.Close()
	hostile.TruncateFile(t, p, 8192)
	err = m.Guard(func() error {
		v, err := ndarray.Values[uint16](m.Array)
		if err != nil {
			return err
		}
		for i := range v {
			v[i] = 7
		}
		return nil
	})
	assert.ErrorIs(t, err, ndarray.ErrTruncated)
	assert.EqualError(t, err, fmt.Sprintf("access %s: npybridge: truncated input at byte 8192: another process truncated the file while it was being read or written: "+
		"it now holds 8192 bytes, and bytes 0 to %d were being read or written", p, 128+3<<20))
}

// Filling 1 GiB through a shared map: BenchmarkMapFill1GiB2Procs (two
// worker processes, each opening the file and filling half the rows, their
// start included) and BenchmarkMapFill1GiB1Proc (this process alone) against
// BenchmarkFileWrite1GiB, one process computing the same values into an
// 8 MiB buffer and writing it with os.File.Write. None waits for the disk.
const fillRows1GiB, fillCols = 1 << 17, 1 << 10

func BenchmarkMapFill1GiB2Procs(b *testing.B) {
	p := filepath.Join(b.TempDir(), "fill.npy")
	b.SetBytes(fillRows1GiB * fillCols * 8)
	var maxRSS int64
	for b.Loop() {
		maxRSS = max(maxRSS, fillBy2Procs(b, p))
	}
	b.ReportMetric(float64(maxRSS)/(1<<20), "worker-peak-RSS-MiB")
}

// BenchmarkMapFill1GiB2ProcsVsWrite runs the two fills in turn, each
// iteration, and reports the median ratio (x-baseline): separate runs of
// the two drift on a shared machine.
func BenchmarkMapFill1GiB2ProcsVsWrite(b *testing.B) {
	dir := b.TempDir()
	mapped, written := filepath.Join(dir, "mapped.npy"), filepath.Join(dir, "written.npy")
	b.SetBytes(fillRows1GiB * fillCols * 8)
	benchbase.Versus(b, func() { fillBy2Procs(b, mapped) }, func() { fillByWrite(b, written) })
}

// fillBy2Procs creates p and has two worker processes fill half of its
// rows each; it returns the larger worker's peak RSS.
func fillBy2Procs(b *testing.B, p string) int64 {
	m, err := MapOptions{Replace: true}.CreateMapped(p, ndarray.DTypeOf[float64](), fillRows1GiB, fillCols)
	if err != nil {
		b.Fatal(err)
	}
	cmds := make([]*exec.Cmd, 2)
	for w := range cmds {
		cmds[w] = exec.Command(os.Args[0], "-test.run=^TestMappedFillChild$", "-test.bench=^$")
		cmds[w].Env = append(os.Environ(), "NDPACK_FILL_FILE="+p,
			fmt.Sprintf("NDPACK_FILL_ROWS=%d,%d", w*fillRows1GiB/2, (w+1)*fillRows1GiB/2))
		if err := cmds[w].Start(); err != nil {
			b.Fatal(err)
		}
	}
	var maxRSS int64
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			b.Fatal("worker: ", err)
		}
		maxRSS = max(maxRSS, c.ProcessState.SysUsage().(*syscall.Rusage).Maxrss<<10)
	}
	if err := m.Close(); err != nil {
		b.Fatal(err)
	}
	return maxRSS
}

func BenchmarkMapFill1GiB1Proc(b *testing.B) {
	p := filepath.Join(b.TempDir(), "fill.npy")
	b.SetBytes(fillRows1GiB * fillCols * 8)
	for b.Loop() {
		m, err := MapOptions{Replace: true}.CreateMapped(p, ndarray.DTypeOf[float64](), fillRows1GiB, fillCols)
		if err != nil {
			b.Fatal(err)
		}
		fillRows(b, m, 0, fillRows1GiB)
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFileWrite1GiB(b *testing.B) {
	p := filepath.Join(b.TempDir(), "fill.npy")
	b.SetBytes(fillRows1GiB * fillCols * 8)
	for b.Loop() {
		fillByWrite(b, p)
	}
}

// fillByWrite is the baseline: one process computing the same values
// into an 8 MiB buffer and writing it to p with os.File.Write.
func fillByWrite(b *testing.B, p string) {
	const chunkRows = 1024 // 8 MiB
	buf := make([]float64, chunkRows*fillCols)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), len(buf)*8)
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(AppendHeader(nil, ndarray.DTypeOf[float64](), []int{fillRows1GiB, fillCols})); err != nil {
		b.Fatal(err)
	}
	for lo := 0; lo < fillRows1GiB; lo += chunkRows {
		for k := range buf {
			buf[k] = fillValue(lo+k/fillCols, k%fillCols)
		}
		if _, err := f.Write(raw); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// CreateMapped of a 64 GiB array: the time, and the disk it takes
// (disk-B, from the file's st_blocks), which a hole makes nothing.
func BenchmarkCreateMapped64GiB(b *testing.B) {
	p := filepath.Join(b.TempDir(), "big.npy")
	var blocks int64
	for b.Loop() {
		m, err := MapOptions{Replace: true}.CreateMapped(p, ndarray.DTypeOf[float64](), 1<<23, 1<<10)
		if err != nil {
			b.Fatal(err)
		}
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		blocks = fi.Sys().(*syscall.Stat_t).Blocks
	}
	b.ReportMetric(float64(blocks*512), "disk-B")
}

// Whatever a file holds, OpenMappedWritable either refuses it or maps
// exactly the data its header announces, writably, aligned for its items,
// and a write through the map is in the file.
func FuzzOpenMappedWritable(f *testing.F) {
	for _, s := range npySeeds() {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		p := filepath.Join(dir, "fuzz.npy")
		if err := os.WriteFile(p, in, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := MapOptions{RawByteOrder: true}.OpenMappedWritable(p)
		if err != nil {
			return
		}
		h := m.Header
		if int64(len(m.Array.Data)) != h.DataLen() || h.DataOffset+h.DataLen() != int64(len(in)) {
			t.Fatalf("mapped %d data bytes at %d of a %d-byte file; the header announces %d", len(m.Array.Data), h.DataOffset, len(in), h.DataLen())
		}
		if len(m.Array.Data) > 0 {
			if uintptr(unsafe.Pointer(&m.Array.Data[0]))%uintptr(itemAlignment(h.DType)) != 0 {
				t.Fatalf("data of %s at byte %d is misaligned", h.DType, h.DataOffset)
			}
			m.Array.Data[0] ^= 0xff
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		out, _ := os.ReadFile(p)
		if len(in) > 0 && h.DataLen() > 0 && out[h.DataOffset] != in[h.DataOffset]^0xff {
			t.Fatal("a write through the map is not in the file")
		}
	})
}
