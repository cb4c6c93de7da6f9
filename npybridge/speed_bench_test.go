package npybridge

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// speedFile writes a 16 MiB .npy of <f8 (2048, 1024) in the layout asked
// for and returns its path.
func speedFile(b *testing.B, fortran bool, order byte) string {
	v := make([]float64, 2048*1024)
	for i := range v {
		v[i] = float64(i)
	}
	a, _ := ndarray.FromSlice(v, 2048, 1024)
	a, _ = a.ToOrder(order)
	data := a.Data
	if fortran {
		data, _ = a.ColumnMajorData()
	}
	text := "{'descr': '" + a.DType.String() + "', 'fortran_order': False, 'shape': (2048, 1024), }"
	if fortran {
		text = "{'descr': '" + a.DType.String() + "', 'fortran_order': True, 'shape': (2048, 1024), }"
	}
	for (10+len(text)+1)%64 != 0 {
		text += " "
	}
	p := filepath.Join(b.TempDir(), "a.npy")
	if err := os.WriteFile(p, npyWith(1, text+"\n", data), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// The read rows of the performance table, each against os.ReadFile of the
// same file in the same iteration (x-baseline, the median ratio).
func BenchmarkReadFortran16MiBVsReadFile(b *testing.B) {
	benchReadVsReadFile(b, speedFile(b, true, '<'), ReadOptions{}.ReadFile)
}

func BenchmarkReadBigEndian16MiBToNativeVsReadFile(b *testing.B) {
	benchReadVsReadFile(b, speedFile(b, false, '>'), func(name string) (*ndarray.Array, error) {
		return ReadOptions{NativeOrder: true}.ReadFile(name)
	})
}

func BenchmarkRead16MiBVsReadFile(b *testing.B) {
	benchReadVsReadFile(b, speedFile(b, false, '<'), ReadOptions{}.ReadFile)
}

func BenchmarkReadFileInto16MiBVsReadFile(b *testing.B) {
	var buf []byte
	benchReadVsReadFile(b, speedFile(b, false, '<'), func(name string) (*ndarray.Array, error) {
		a, err := ReadOptions{}.ReadFileInto(name, buf)
		if err == nil {
			buf = a.Data[:cap(a.Data)]
		}
		return a, err
	})
}

func benchReadVsReadFile(b *testing.B, p string, read func(string) (*ndarray.Array, error)) {
	b.SetBytes(16 << 20)
	b.ReportAllocs()
	benchbase.Versus(b, func() {
		a, err := read(p)
		if err != nil {
			b.Fatal(err)
		}
		benchbase.Sink = a.Data
	}, func() {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		benchbase.Sink = d
	})
}

// bigEndianWorker loads sys.argv[1] once and answers each "load" line
// with "done" once np.load(...).byteswap(inplace=True) has read it and put
// it in the machine's byte order: numpy's way to what NativeOrder does.
const bigEndianWorker = `
import sys, numpy as np
p = sys.argv[1]
a = np.load(p); a.byteswap(inplace=True)
print("ready", flush=True)
for line in sys.stdin:
    a = np.load(p)
    a.byteswap(inplace=True)
    del a
    print("done", flush=True)
`

// BenchmarkReadBigEndian16MiBToNativeVsNumpy reads a 16 MiB big-endian
// <f8 file into native order (ReadOptions.NativeOrder) against numpy's
// np.load of the same file and an in-place byteswap, timed in the same
// iteration in a Python worker (the pipe's round trip, microseconds, on
// numpy's side): x-baseline is ndpack's time over numpy's (the goal: at
// most 1.1).
func BenchmarkReadBigEndian16MiBToNativeVsNumpy(b *testing.B) {
	p := speedFile(b, false, '>')
	w, first := pypeer.StartWorker(b, bigEndianWorker, p)
	if first != "ready" {
		b.Fatalf("numpy's worker began with %q", first)
	}
	b.SetBytes(16 << 20)
	b.ReportAllocs()
	benchbase.Versus(b, func() {
		a, err := ReadOptions{NativeOrder: true}.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		benchbase.Sink = a.Data
	}, func() {
		if answer := w.Do("load"); answer != "done" {
			b.Fatalf("numpy's worker answered %q", answer)
		}
	})
}
