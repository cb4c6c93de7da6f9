// Package benchbase holds the baselines every codec benchmark is compared
// with in the same run: copy() into an existing buffer, make+copy, and the
// same bytes echoed raw over loopback TCP for the RPC benchmarks. The
// machine is shared and noisy, so only ratios measured side by side mean
// anything.
package benchbase

import "testing"

// Sink keeps results alive so the compiler cannot drop the work.
var Sink []byte

// Data returns n bytes of a repeating, non-zero pattern.
func Data(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}

// Copy measures copy() of src into a buffer allocated once.
func Copy(b *testing.B, src []byte) {
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		copy(dst, src)
	}
}

// MakeCopy measures allocating a buffer and copying src into it.
func MakeCopy(b *testing.B, src []byte) {
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		dst := make([]byte, len(src))
		copy(dst, src)
		Sink = dst
	}
}
