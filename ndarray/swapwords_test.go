package ndarray

import (
	"bytes"
	"slices"
	"testing"
)

// TestSwapWordsEveryOffsetAndLength checks the word swaps against reversing
// each scalar byte by byte, at every start alignment and for lengths
// around the 32-byte blocks, with a trailing partial scalar left alone.
func TestSwapWordsEveryOffsetAndLength(t *testing.T) {
	swaps := map[int]func([]byte){2: swap16s, 4: swap32s, 8: swap64s}
	src := make([]byte, 200)
	for i := range src {
		src[i] = byte(i*37 + 11)
	}
	for size, swap := range swaps {
		for off := 0; off < 8; off++ {
			for n := 0; n <= 130; n++ {
				got := slices.Clone(src)
				swap(got[off : off+n])
				want := slices.Clone(src)
				for i := off; i+size <= off+n; i += size {
					slices.Reverse(want[i : i+size])
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("swap of %d-byte scalars, offset %d, %d bytes: got %x, want %x", size, off, n, got[off:off+n], want[off:off+n])
				}
			}
		}
	}
}
