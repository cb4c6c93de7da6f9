package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// BenchmarkConvertAstypeField is convert --astype and --field of a 64 MiB
// .npy into an .npz, beside the same conversion without them (baseline):
// the cost of converting the values as they stream.
func BenchmarkConvertAstypeField(b *testing.B) {
	dir := b.TempDir()
	n := 8 << 20
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i) * 0.25
	}
	plain, _ := ndarray.FromSlice(v)
	if err := npybridge.WriteFile(filepath.Join(dir, "plain.npy"), plain); err != nil {
		b.Fatal(err)
	}
	rec, err := ndarray.NewRecord([]ndarray.Field{{Name: "x", DType: ndarray.MustParseDType("<f4")}, {Name: "y", DType: ndarray.MustParseDType("<f4"), Offset: 4}}, 8)
	if err != nil {
		b.Fatal(err)
	}
	records := &ndarray.Array{DType: rec, Shape: []int{n}, Data: plain.Data}
	if err := npybridge.WriteFile(filepath.Join(dir, "records.npy"), records); err != nil {
		b.Fatal(err)
	}
	out := filepath.Join(dir, "out.npz")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"baseline", []string{"plain.npy"}},
		{"astype-f4", []string{"--astype", "f4", "plain.npy"}},
		{"astype-i4-unsafe", []string{"--astype", "i4", "--casting", "unsafe", "plain.npy"}},
		{"records-baseline", []string{"records.npy"}},
		{"field-x", []string{"--field", "x", "records.npy"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			args := append([]string{"--quiet"}, c.args...)
			args[len(args)-1] = filepath.Join(dir, args[len(args)-1])
			fi, _ := os.Stat(args[len(args)-1])
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for b.Loop() {
				if err := runConvert(env{stdout: io.Discard, stderr: io.Discard}, append(args, out)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
