package inflate

import (
	"bytes"
	"compress/flate"
	"io"
	"testing"
)

// FuzzInflate holds the reader to compress/flate on any bytes: the same
// output where compress/flate reads the stream, an error where it fails,
// and never a panic. The corpus starts from streams of every block kind.
func FuzzInflate(f *testing.F) {
	for _, data := range samples() {
		for _, level := range []int{flate.NoCompression, flate.HuffmanOnly, 1, 9} {
			if z := deflate(f, data[:min(len(data), 4<<10)], level); len(z) < 8<<10 {
				f.Add(z)
			}
		}
	}
	f.Add(bitStream(1, 1, 1, 2, 0b1000000, 7, 0, 5))
	f.Add(bitStream(1, 1, 2, 2, 30, 5, 0, 5, 0, 4, 0, 32, 0, 32))
	f.Fuzz(func(t *testing.T, z []byte) {
		want, werr := io.ReadAll(io.LimitReader(flate.NewReader(bytes.NewReader(z)), 256<<10))
		got, gerr := io.ReadAll(io.LimitReader(NewReader(bytes.NewReader(z)), 256<<10))
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("compress/flate says %v, inflate %v", werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%d bytes, compress/flate %d, and they differ", len(got), len(want))
		}
	})
}
