package yaq

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"

	"github.com/ndpack/ndpack/internal/boundedio"
)

// frames reads a peer's values with yaq's framing rules (see value); what
// is left of a frame after a value starts the next, unless dropRest.
type frames struct {
	br     *bufio.Reader
	max    int
	buf    []byte
	chunks boundedio.Chunks
	// dropRest throws away what follows a value in its frames, as yaqc
	// does; otherwise it starts the next value.
	dropRest bool
	// lending says the next frame is to be read into loan's memory (when
	// it has the room); taken is the memory that frame went into.
	lending     bool
	loan, taken []byte
}

// lend offers mem for the next frame that is read, which takes it over.
func (f *frames) lend(mem []byte) { f.lending, f.loan, f.taken = true, mem, nil }

// lent ends a loan and returns the memory the frame read under it lies
// in (nil if no frame was read).
func (f *frames) lent() []byte {
	mem := f.taken
	f.lending, f.loan, f.taken = false, nil, nil
	return mem
}

// value reads one value of schema s, as yaq peers frame them: a value that
// encodes to nothing (null) is read from nothing; empty frames before a
// value are skipped (the terminators and nulls of earlier messages); a
// value continues into the next frame when its frame ends early. A frame
// over the limit is refused before anything is read of it.
func (f *frames) value(s *Schema) (any, error) {
	if s.Type == "null" {
		return nil, nil
	}
	for {
		if len(f.buf) > 0 {
			v, n, err := s.Decode(f.buf)
			if err == nil {
				f.buf = f.buf[n:]
				if f.dropRest {
					f.buf = nil
				}
				return v, nil
			}
			if !errors.Is(err, ErrTruncated) {
				return nil, err
			}
		}
		var h [4]byte
		if _, err := io.ReadFull(f.br, h[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(h[:])
		if int64(n)+int64(len(f.buf)) > int64(f.max) {
			return nil, errAt(ErrMalformed, -1, "a frame of %d bytes, over the limit of %d", n, f.max)
		}
		// Memory grows as the frame arrives, not from its claimed length.
		var frame []byte
		var err error
		if f.lending {
			frame, err = f.chunks.ReadAppend(f.loan[:0], f.br, int(n), 0)
			f.lending, f.loan, f.taken = false, nil, frame
		} else {
			frame, err = f.chunks.ReadFull(f.br, int(n))
		}
		if err != nil {
			return nil, err
		}
		if len(f.buf) == 0 {
			f.buf = frame // the common case: a value in a frame of its own
		} else {
			f.buf = append(f.buf, frame...)
		}
	}
}

// valueInPlace decodes a value of s from the next frame while it lies in
// br's buffer, without copying it out: for small values that are not kept
// past the next read. ok is false, and nothing consumed, when it cannot:
// the frame is empty, over max, not all buffered, or holds more or less
// than a value.
func valueInPlace(br *bufio.Reader, s *Schema, max int) (v any, ok bool) {
	h, err := br.Peek(4)
	if err != nil {
		return nil, false
	}
	n := int(binary.BigEndian.Uint32(h))
	if n == 0 || n > max || 4+n > br.Buffered() {
		return nil, false
	}
	b, _ := br.Peek(4 + n)
	v, used, err := s.Decode(b[4:])
	if err != nil || used != n {
		return nil, false
	}
	br.Discard(4 + n)
	return v, true
}

// smallValue reads a value of s as value does, in place when it can; the
// value must not be kept past the next read.
func (f *frames) smallValue(s *Schema) (any, error) {
	if len(f.buf) == 0 {
		if v, ok := valueInPlace(f.br, s, f.max); ok {
			return v, nil
		}
	}
	return f.value(s)
}
