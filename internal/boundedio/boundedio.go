// Package boundedio reads a length that the input itself claimed, without
// trusting the claim: memory grows only as the bytes arrive.
package boundedio

import (
	"io"
	"slices"
)

// FirstChunk is how much ReadFull allocates before any byte has arrived.
const FirstChunk = 64 << 10

// ReadFull reads exactly n bytes from r. It does not allocate n up front: the
// buffer starts at FirstChunk and doubles only as data arrives, so input that
// claims gigabytes and ends early costs at most about twice what it sent. If
// r reports how much it holds (Len, as bytes.Reader does) and that is less
// than n, it fails at once with io.ErrUnexpectedEOF. On error it returns
// what was read.
func ReadFull(r io.Reader, n int) ([]byte, error) {
	if l, ok := r.(interface{ Len() int }); ok && l.Len() < n {
		return nil, io.ErrUnexpectedEOF
	}
	if n <= FirstChunk {
		buf := make([]byte, n)
		got, err := io.ReadFull(r, buf)
		return buf[:got], err
	}
	if l, ok := r.(interface{ Len() int }); ok && l.Len() >= n {
		buf := make([]byte, n) // the reader holds it all: size it once
		got, err := io.ReadFull(r, buf)
		return buf[:got], err
	}
	buf := make([]byte, 0, FirstChunk)
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), n-len(buf)))
		}
		// Grow may round the capacity past n: never read beyond it.
		got, err := io.ReadFull(r, buf[len(buf):min(cap(buf), n)])
		buf = buf[:len(buf)+got]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}
