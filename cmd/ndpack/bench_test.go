package main

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

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
