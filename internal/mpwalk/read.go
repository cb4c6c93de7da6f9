package mpwalk

import (
	"bufio"
	"bytes"
	"io"
)

// Read reads exactly one complete msgpack value from r and returns its
// bytes. A value longer than max bytes fails with *BudgetError as soon as a
// length claims more than what is left of max, before any of it is read or
// allocated: memory grows only with the bytes actually received. The walk
// keeps lim (see Value). A stream
// that ends before the value does gives io.ErrUnexpectedEOF; one that ends
// before it starts gives io.EOF.
func Read(r *bufio.Reader, max int64, lim Limits) ([]byte, error) {
	if _, err := r.Peek(1); err != nil {
		return nil, err
	}
	t := &tee{r: r}
	_, err := Value(t, max, lim)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return t.buf.Bytes(), err
}

// tee is a Source that keeps what it reads.
type tee struct {
	r   *bufio.Reader
	buf bytes.Buffer
}

func (t *tee) ReadByte() (byte, error) {
	c, err := t.r.ReadByte()
	if err == nil {
		t.buf.WriteByte(c)
	}
	return c, err
}

func (t *tee) Discard(n int) error {
	got, err := io.CopyN(&t.buf, t.r, int64(n))
	if err == io.EOF && got < int64(n) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Len returns the length of the msgpack value at the start of b, checking
// every claimed length and count against the bytes b really holds, and
// lim (see Value). An empty or cut-short b gives
// io.ErrUnexpectedEOF.
func Len(b []byte, lim Limits) (int, error) {
	n, err := Value(&byteSource{b: b}, int64(len(b)), lim)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return int(n), err
}

// byteSource is a Source over a byte slice.
type byteSource struct {
	b   []byte
	off int
}

func (s *byteSource) ReadByte() (byte, error) {
	if s.off >= len(s.b) {
		return 0, io.EOF
	}
	s.off++
	return s.b[s.off-1], nil
}

func (s *byteSource) Discard(n int) error {
	if n > len(s.b)-s.off {
		return io.ErrUnexpectedEOF
	}
	s.off += n
	return nil
}
