package npybridge

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
)

// Compare the MB/s of each benchmark with the baselines of the same run:
// BenchmarkCopy64MiB for writes, BenchmarkMakeCopy64MiB for reads that
// allocate, BenchmarkCopyFile64MiB (what cp does) for conversions between
// files.

const bigLen = 64 << 20

func bigNPY(b *testing.B) (*ndarray.Array, []byte) {
	a, err := ndarray.New(ndarray.DTypeOf[float64](), []int{bigLen / 8}, benchbase.Data(bigLen))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, a); err != nil {
		b.Fatal(err)
	}
	return a, buf.Bytes()
}

func bigFile(b *testing.B, name string, content []byte) string {
	p := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

func BenchmarkCopy64MiB(b *testing.B)     { benchbase.Copy(b, benchbase.Data(bigLen)) }
func BenchmarkMakeCopy64MiB(b *testing.B) { benchbase.MakeCopy(b, benchbase.Data(bigLen)) }

func BenchmarkReadMemory64MiB(b *testing.B) {
	_, file := bigNPY(b)
	b.SetBytes(bigLen)
	b.ReportAllocs()
	for b.Loop() {
		a, err := Read(bytes.NewReader(file))
		if err != nil {
			b.Fatal(err)
		}
		benchbase.Sink = a.Data
	}
}

func BenchmarkWriteMemory64MiB(b *testing.B) {
	a, file := bigNPY(b)
	buf := bytes.NewBuffer(make([]byte, 0, len(file)))
	b.SetBytes(bigLen)
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset()
		if err := Write(buf, a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadFile64MiB(b *testing.B) {
	_, file := bigNPY(b)
	p := bigFile(b, "a.npy", file)
	b.SetBytes(bigLen)
	b.ReportAllocs()
	for b.Loop() {
		a, err := ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		benchbase.Sink = a.Data
	}
}

// BenchmarkWriteFile64MiB writes into an open file (page cache), without
// the fsync and rename of WriteFile, which measure the disk.
func BenchmarkWriteFile64MiB(b *testing.B) {
	a, _ := bigNPY(b)
	f, err := os.Create(filepath.Join(b.TempDir(), "a.npy"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(bigLen)
	for b.Loop() {
		f.Seek(0, io.SeekStart)
		if err := Write(f, a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenMapped64MiB(b *testing.B) {
	_, file := bigNPY(b)
	p := bigFile(b, "a.npy", file)
	b.ReportAllocs()
	for b.Loop() {
		m, err := ReadOptions{}.OpenMapped(p)
		if err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// BenchmarkAppend4KiBRow appends 4 KiB rows; compare with
// BenchmarkAppendBaselineWrite, one os.File.Write per row of the same bytes.
func BenchmarkAppend4KiBRow(b *testing.B) {
	rowArr, _ := ndarray.FromSlice(make([]float64, 512))
	w, err := AppendOptions{}.OpenAppend(context.Background(), filepath.Join(b.TempDir(), "frames.npy"), rowArr.DType, 512)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Append(rowArr); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendBaselineWrite(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "frames.bin"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data := make([]byte, 4096)
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Write(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNPZReadOneMember reads one 8 MiB member of a 2 GiB archive
// (opening the archive included); it costs what the member costs: compare
// with BenchmarkNPZReadOneMemberBaseline, make+copy of the same 8 MiB.
func BenchmarkNPZReadOneMember(b *testing.B) {
	p, after := sparseArchive(b, 2<<30)
	b.SetBytes(int64(len(after.Data)))
	b.ReportAllocs()
	for b.Loop() {
		z, err := OpenNPZFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := z.Read("after"); err != nil {
			b.Fatal(err)
		}
		z.Close()
	}
}

func BenchmarkNPZReadOneMemberBaseline(b *testing.B) {
	benchbase.MakeCopy(b, make([]byte, 8<<20))
}
