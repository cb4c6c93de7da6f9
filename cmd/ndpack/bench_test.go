package main

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// benchFile writes a 256 MiB <f4 .npy of random values once per run.
func benchFile(b *testing.B) string {
	b.Helper()
	p := filepath.Join(b.TempDir(), "bench.npy")
	v := make([]float32, 64<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range v {
		v[i] = rng.Float32()
	}
	a, _ := ndarray.FromSlice(v)
	if err := npybridge.WriteFile(p, a); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkInspect is inspect's statistics over a 256 MiB file; compare it
// with BenchmarkInspectBaselineRead, reading the same file into a buffer
// (the page cache warm in both).
func BenchmarkInspect(b *testing.B) {
	p := benchFile(b)
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := inspectFile(env{stdin: nil, stderr: io.Discard}, p, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInspectBaselineRead(b *testing.B) {
	p := benchFile(b)
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	buf := make([]byte, chunkSize)
	for b.Loop() {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := f.Read(buf); err != nil {
				break
			}
		}
		f.Close()
	}
}

// fortranFile writes a 64 MiB Fortran-order <f8 .npy (1024 x 8192) once per
// run, as numpy saves np.asfortranarray.
func fortranFile(b *testing.B) string {
	b.Helper()
	v := make([]float64, 8<<20)
	for i := range v {
		v[i] = float64(i)
	}
	p := filepath.Join(b.TempDir(), "fortran.npy")
	// np.save's header for C order, told Fortran order in as many bytes.
	h := bytes.Replace(npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1024, 8192}),
		[]byte("'fortran_order': False,"), []byte("'fortran_order': True, "), 1)
	data := make([]byte, 0, len(h)+8*len(v))
	data = append(data, h...)
	for _, x := range v {
		data = binary.LittleEndian.AppendUint64(data, math.Float64bits(x))
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkFortranToExt110 converts a Fortran-order .npy to ext 110 as
// convert does (read whole, transposed as it arrives, then encoded);
// compare it with BenchmarkFortranBaselineReadFile, os.ReadFile of the same
// file.
func BenchmarkFortranToExt110(b *testing.B) {
	p := fortranFile(b)
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		fa, err := openArrays(p, nil, "")
		if err != nil {
			b.Fatal(err)
		}
		if err := withData(fa.at(0), ext110.NewEncoder(io.Discard).EncodeFrom); err != nil {
			b.Fatal(err)
		}
		fa.close()
	}
}

func BenchmarkFortranBaselineReadFile(b *testing.B) {
	p := fortranFile(b)
	fi, _ := os.Stat(p)
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	}
}
