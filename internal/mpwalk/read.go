package mpwalk

import (
	"bufio"
	"io"

	"github.com/ndpack/ndpack/internal/boundedio"
)

// Read reads exactly one complete msgpack value from r and returns its
// bytes. A value longer than max bytes fails with *BudgetError as soon as a
// length claims more than what is left of max, before any of it is read or
// allocated: memory grows only with the bytes actually received. The walk
// keeps lim (see Value). A stream that ends before the value does gives
// io.ErrUnexpectedEOF; one that ends before it starts gives io.EOF.
//
// A long str, bin or ext payload is read into the returned buffer, which is
// about the size of the message, not the next power of two. The buffer is
// not sized from the claimed length alone: until a quarter of a payload
// has arrived it goes into chunks (see boundedio.Chunks), so a peer that
// claims 60 MiB and sends 60 bytes costs kilobytes, not 60 MiB.
func Read(r *bufio.Reader, max int64, lim Limits) ([]byte, error) {
	return ReadInto(nil, r, nil, max, lim)
}

// ReadInto is Read into buf's memory, grown only if the message needs more:
// a reader of many messages whose bytes are no longer needed once handled
// reuses one buffer. chunks, if not nil, holds the chunks of payloads
// between calls, so that a connection reading one large message after
// another allocates them once.
func ReadInto(buf []byte, r *bufio.Reader, chunks *boundedio.Chunks, max int64, lim Limits) ([]byte, error) {
	if _, err := r.Peek(1); err != nil {
		return nil, err
	}
	if buf == nil {
		// Most messages are small and arrive whole: size for what is
		// buffered.
		size := int64(r.Buffered())
		if size < 64 {
			size = 64
		}
		buf = make([]byte, 0, min(max, size))
	}
	if chunks == nil {
		chunks = new(boundedio.Chunks)
	}
	c := &collector{r: r, buf: buf[:0], chunks: chunks}
	_, err := Value(c, max, lim)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return c.buf, err
}

// collector is a Source that keeps what it reads.
type collector struct {
	r      *bufio.Reader
	buf    []byte
	chunks *boundedio.Chunks
}

func (c *collector) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.buf = append(c.buf, b)
	}
	return b, err
}

// payloadSlack is room left after a large payload for the rest of its
// message (an ext 110 map's typestr and shape, a request's other keys), so
// that those bytes do not make the buffer grow again.
const payloadSlack = 16 << 10

func (c *collector) Discard(n int) error {
	extra := 0
	if n >= payloadSlack {
		extra = payloadSlack
	}
	var err error
	c.buf, err = c.chunks.ReadAppend(c.buf, c.r, n, extra)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// Len returns the length of the msgpack value at the start of b, checking
// every claimed length and count against the bytes b really holds, and
// lim (see Value). An empty or cut-short b gives io.ErrUnexpectedEOF. It
// allocates nothing.
func Len(b []byte, lim Limits) (int, error) {
	in := input{b: b}
	n, _, err := walk(&in, int64(len(b)), lim)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return int(n), err
}
