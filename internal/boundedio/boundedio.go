// Package boundedio reads a length that the input itself claimed, without
// trusting the claim: memory grows only as the bytes arrive.
package boundedio

import (
	"io"
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
	if l, ok := r.(interface{ Len() int }); ok && l.Len() >= n || n <= FirstChunk {
		buf := make([]byte, n) // the reader holds it all, or it is small: size it once
		got, err := io.ReadFull(r, buf)
		return buf[:got], err
	}
	return Append(nil, r, n)
}

// Append reads exactly n bytes from r onto the end of dst and returns the
// longer slice. Room dst already has is read into directly; room it lacks
// is added only as the bytes arrive, doubling from FirstChunk, so that a
// length the input claimed and does not back costs at most about twice what
// it sent. On error the returned slice holds dst and whatever did arrive.
func Append(dst []byte, r io.Reader, n int) ([]byte, error) {
	end := len(dst) + n
	if cap(dst) >= end {
		got, err := io.ReadFull(r, dst[len(dst):end])
		return dst[:len(dst)+got], err
	}
	for len(dst) < end {
		if len(dst) == cap(dst) {
			dst = grow(dst, min(max(cap(dst), FirstChunk), end-len(dst)))
		}
		// Grow may round the capacity past the end: never read beyond it.
		got, err := io.ReadFull(r, dst[len(dst):min(cap(dst), end)])
		dst = dst[:len(dst)+got]
		if err != nil {
			return dst, err
		}
	}
	return dst, nil
}

// ChunkSize is the largest chunk a Chunks reads into.
const ChunkSize = 256 << 10

// Chunks reads claimed lengths, like ReadFull, for a connection that reads
// one large frame after another. A claim no larger than what the input has
// delivered through this Chunks before is allocated at once and read in
// place: the peer has already sent at least as much, so the allocation is
// still within a small multiple of its input, and a connection that
// carries one large array after another copies none of them twice. A
// larger claim is read into chunks until a quarter has arrived; then the
// whole length is allocated once, the chunks copied in and the rest read
// in place, so that a claim the input does not back costs at most about
// four times what it sent. The chunks are not kept: memory a connection
// holds between frames would raise the live heap, and with it the heap the
// garbage collector lets grow, of every connection. The zero value is
// ready to use; a Chunks is not safe for concurrent use.
type Chunks struct {
	delivered int64 // bytes read through this Chunks so far
}

// ReadFull reads exactly n bytes from r into a buffer of its own, which
// the caller keeps. On error it returns nil.
func (c *Chunks) ReadFull(r io.Reader, n int) ([]byte, error) {
	var buf []byte
	if n <= FirstChunk {
		buf = make([]byte, 0, n) // exactly n, and not nil
	}
	buf, err := c.ReadAppend(buf, r, n, 0)
	if err != nil {
		return nil, err
	}
	return buf, nil
}

// ReadAppend reads exactly n bytes from r onto the end of dst and returns
// the longer slice, with room for extra more bytes if it had to grow (the
// rest of a message after a large payload). Room dst already has is read
// into directly. Otherwise memory grows as ReadFull's does: a claim the
// input does not back costs at most about four times what it sent. On
// error the returned slice holds dst and whatever did arrive of the n
// bytes, or just dst.
func (c *Chunks) ReadAppend(dst []byte, r io.Reader, n, extra int) ([]byte, error) {
	if n <= cap(dst)-len(dst) || n <= FirstChunk || int64(n) <= c.delivered {
		if n > cap(dst)-len(dst) {
			dst = grow(dst, n+extra)
		}
		got, err := io.ReadFull(r, dst[len(dst):len(dst)+n])
		c.delivered += int64(got)
		return dst[:len(dst)+got], err
	}
	var chunks [][]byte
	got := 0
	for got < n/4 {
		// Chunks grow with what has arrived (FirstChunk, then doubling to
		// ChunkSize): a connection that claims much and sends little costs
		// FirstChunk, not ChunkSize.
		chunk := make([]byte, min(max(FirstChunk, got), ChunkSize, n/4-got))
		if _, err := io.ReadFull(r, chunk); err != nil {
			return dst, err
		}
		chunks = append(chunks, chunk)
		got += len(chunk)
	}
	buf := make([]byte, len(dst)+n, len(dst)+n+extra)
	at := copy(buf, dst)
	for _, chunk := range chunks {
		at += copy(buf[at:], chunk)
	}
	rest, err := io.ReadFull(r, buf[at:])
	c.delivered += int64(got + rest)
	if err != nil {
		return dst, err
	}
	return buf, nil
}

// grow returns b with room for n more bytes, in new memory. It is
// slices.Grow written out: under the race detector slices.Grow allocates
// the room twice, and the allocation bounds here are tested there too.
func grow(b []byte, n int) []byte {
	nb := make([]byte, len(b), len(b)+n)
	copy(nb, b)
	return nb
}
