package npybridge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// ReadFileInto reads into the caller's buffer when it has the room, so a
// loop over files allocates nothing for their data; a short buffer is
// replaced by a new one the caller can keep; Fortran order and truncation
// behave as in ReadFile.
func TestReadFileInto(t *testing.T) {
	dir := t.TempDir()
	v := make([]float64, 1<<16)
	for i := range v {
		v[i] = float64(i)
	}
	a, _ := ndarray.FromSlice(v, 256, 256)
	p := filepath.Join(dir, "a.npy")
	if err := WriteFile(p, a); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	got, err := ReadOptions{}.ReadFileInto(p, buf)
	if err != nil {
		t.Fatal(err)
	}
	if &got.Data[0] != &buf[0] || !got.Equal(a) {
		t.Fatal("not read into the buffer given")
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := (ReadOptions{}).ReadFileInto(p, buf); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%v allocations per ReadFileInto", allocs)
	if allocs > 12 {
		t.Errorf("%v allocations per ReadFileInto of a 512 KiB file, want none of its size and few others", allocs)
	}
	small, err := ReadOptions{}.ReadFileInto(p, make([]byte, 10))
	if err != nil || !small.Equal(a) || cap(small.Data) < len(a.Data) {
		t.Fatalf("short buffer: %v", err)
	}

	col, _ := a.ColumnMajorData()
	var f bytes.Buffer
	f.Write(npyWith(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (256, 256), }"+string(bytes.Repeat([]byte{' '}, 59))+"\n", col))
	fr, err := ReadOptions{}.ReadInto(bytes.NewReader(f.Bytes()), buf)
	if err != nil || !fr.Equal(a) || &fr.Data[0] != &buf[0] {
		t.Fatalf("Fortran order into the buffer: %v", err)
	}
	b, _ := os.ReadFile(p)
	if _, err := (ReadOptions{}).ReadInto(bytes.NewReader(b[:len(b)-1]), buf); err == nil {
		t.Fatal("a truncated file read")
	}
}

// Reading many files into one buffer: after the first, nothing is
// allocated for their data.
func ExampleReadOptions_ReadFileInto() {
	dir, _ := os.MkdirTemp("", "frames")
	defer os.RemoveAll(dir)
	for i := range 3 {
		a, _ := ndarray.FromSlice([]uint16{uint16(i), 1, 2, 3})
		WriteFile(filepath.Join(dir, fmt.Sprintf("frame%d.npy", i)), a)
	}
	var buf []byte
	for i := range 3 {
		a, err := ReadOptions{}.ReadFileInto(filepath.Join(dir, fmt.Sprintf("frame%d.npy", i)), buf)
		if err != nil {
			panic(err)
		}
		buf = a.Data[:cap(a.Data)] // the next file reads into this memory
		v, _ := ndarray.Values[uint16](a)
		fmt.Println(v)
	}
	// Output:
	// [0 1 2 3]
	// [1 1 2 3]
	// [2 1 2 3]
}

// NativeOrder: a big-endian file comes back in the machine's order, the
// same values, converted in the memory it was read into.
func TestReadNativeOrder(t *testing.T) {
	a, _ := ndarray.FromSlice([]int32{1, -2, 300000})
	be, _ := a.ToOrder('>')
	var f bytes.Buffer
	if err := Write(&f, be); err != nil {
		t.Fatal(err)
	}
	got, err := ReadOptions{NativeOrder: true}.Read(bytes.NewReader(f.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := a.ToOrder(ndarray.NativeOrder())
	if !got.Equal(want) {
		t.Fatalf("got %v % x, want %v % x", got.DType, got.Data, want.DType, want.Data)
	}
	kept, _ := Read(bytes.NewReader(f.Bytes()))
	if kept.DType != be.DType {
		t.Fatalf("without the option the order changed: %v", kept.DType)
	}
}
