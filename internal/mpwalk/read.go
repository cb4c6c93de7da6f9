package mpwalk

import (
	"bufio"
	"io"
	"unsafe"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/internal/mpwire"
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
//
// The message's bulk lands at an address aligned to AlignTo bytes, so that
// a decoder can hand it out as typed values without copying it: the bytes
// of its first str or bin of alignAbove bytes or more or, if that payload
// is an ext, of the str or bin that makes up most of the ext (an ext 110
// array's data). To that end the message may start a few bytes into buf
// (fewer than AlignTo); the bytes before it are not part of it.
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
	return c.buf[c.start:], err
}

// collector is a Source that keeps what it reads.
type collector struct {
	r      *bufio.Reader
	buf    []byte // the message from buf[start:]
	start  int
	chunks *boundedio.Chunks
	placed bool // a payload has been aligned
}

// AlignTo is the alignment ReadInto gives a message's bulk: enough for
// every item size, and a cache line.
const AlignTo = 64

// alignAbove is the shortest payload ReadInto aligns: below it, a copy
// costs a decoder little.
const alignAbove = 4096

// bulkScan is how much of an ext's payload alignPayload looks at for the
// header of its bulk: an ext 110 map's keys and shape come first.
const bulkScan = 512

// payloadAligner is a Source that places long payloads in memory: walk
// tells it of each before discarding it.
type payloadAligner interface {
	alignPayload(t mpwire.Type, n int)
}

// alignPayload moves the message read so far a few bytes up the buffer,
// if needed, so that the bulk of the n-byte payload about to be read
// (see ReadInto) lands aligned: only the first long payload, since moving
// one costs a copy of it. The bytes moved are the message before the
// payload, headers and keys, short by the rule of the first long one.
func (c *collector) alignPayload(t mpwire.Type, n int) {
	if c.placed {
		return
	}
	c.placed = true
	off := 0
	if t == mpwire.ExtType {
		// An ext's payload starts with its type code. What arrives of
		// its first bytes says where its bulk begins; waiting for them
		// costs nothing the Discard would not wait for.
		head, _ := c.r.Peek(min(n, bulkScan))
		if len(head) < 2 {
			return
		}
		off = 1 + bulkOffset(head[1:], n-1)
	}
	at := len(c.buf) + off
	// Where the payload will land: in this buffer if it has room (the
	// check leaves room for the move), else at the start of the new one
	// ReadAppend makes, which, that large, the allocator aligns.
	base := uintptr(0)
	if cap(c.buf)-len(c.buf) >= n+AlignTo {
		base = uintptr(unsafe.Pointer(unsafe.SliceData(c.buf)))
	}
	shift := int((AlignTo - (base+uintptr(at))%AlignTo) % AlignTo)
	if shift == 0 {
		return
	}
	end := len(c.buf)
	c.buf = append(c.buf, make([]byte, shift)...)
	copy(c.buf[c.start+shift:], c.buf[c.start:end])
	c.start += shift
}

// bulkOffset returns where in b, the first bytes of an n-byte ext payload,
// the bytes of a str or bin that make up at least half of the payload
// begin, or 0 if b does not show one. It steps over headers and short
// payloads without descending into anything.
func bulkOffset(b []byte, n int) int {
	for i := 0; i < len(b); {
		h := mpwire.HeadOf(b[i])
		size := h.Size()
		if h.Type == mpwire.ExtType || i+size > len(b) {
			return 0 // an ext inside an ext is not an array's layout
		}
		l := h.Len
		if h.LenSize > 0 {
			l = 0
			for _, c := range b[i+1 : i+size] {
				l = l<<8 | int(c)
			}
		}
		switch h.Type {
		case mpwire.StrType, mpwire.BinType:
			if 2*l >= n {
				return i + size
			}
			i += size + l
		case mpwire.ArrayType, mpwire.MapType:
			i += size // the count: the items follow
		default:
			i += size + l // a number's bytes
		}
	}
	return 0
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
