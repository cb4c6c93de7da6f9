package avrorpc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"strconv"

	"github.com/ndpack/ndpack/ndarray"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/yaq/avro"
)

// ReaderOptions configure a FrameReader. The zero value is the default.
type ReaderOptions struct {
	// MaxSize bounds one frame, and one value however many frames it
	// spans, in bytes; 0 means ndarray.DefaultMaxSize (64 MiB). A frame
	// over it is refused, matching ndarray.ErrTooLarge, before anything is
	// allocated for it.
	MaxSize int64
	// Peer names the other end in errors ("daemon 127.0.0.1:39111");
	// "" says "the peer".
	Peer string
	// DropRest throws away what follows a value in its frame, as yaqc
	// does with answers; otherwise it starts the next value, as yaqd-core
	// reads requests.
	DropRest bool
}

// FrameReader reads Avro RPC values from a stream of frames, as yaq's
// daemons and clients frame them (Avro's framing: each frame a 4-byte
// big-endian length and that many bytes; a message's values in frames of
// their own, ended by an empty frame). It reads what real peers send and
// what the framing allows besides: a value split over frames, frames
// holding more than one value, empty frames before a value. Every length
// is checked against MaxSize before anything is allocated for it, and the
// work of reading a value is linear in its bytes however the peer cuts it
// into frames. A FrameReader is not safe for concurrent use.
type FrameReader struct {
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
	// peer names the other end in errors ("daemon 127.0.0.1:39111"); read
	// counts the bytes read from it, for the offsets errors give.
	peer string
	read int64
	// scan finds the end of a value that spans frames; made when first
	// needed and kept between values for the memory of its stack.
	scan *avro.Scanner
	// capped names the value read under a cap lower than max (see
	// CappedValue), for the error that refuses it.
	capped string
}

// NewFrameReader returns a FrameReader of the frames br reads.
func NewFrameReader(br *bufio.Reader, o ReaderOptions) *FrameReader {
	max := int(min(o.MaxSize, math.MaxInt32))
	if o.MaxSize <= 0 {
		max = ndarray.DefaultMaxSize
	}
	return &FrameReader{br: br, max: max, dropRest: o.DropRest, peer: o.Peer}
}

// Pending returns how many bytes of the frames read so far no value has
// taken yet: the start of the next value, when a frame held more than one.
func (f *FrameReader) Pending() int { return len(f.buf) }

// SkipEmptyFrame reads the next frame if it is empty (the terminator of
// a message, which a reader between messages has no use for), waiting for
// its header, and reports whether it did; a frame that is not empty is
// left unread. It is for use between values, when Pending is 0.
func (f *FrameReader) SkipEmptyFrame() (bool, error) {
	h, err := f.br.Peek(4)
	if err != nil {
		return false, err
	}
	if binary.BigEndian.Uint32(h) != 0 {
		return false, nil
	}
	f.br.Discard(4)
	f.read += 4 // for the stream offsets errors give
	return true, nil
}

// CappedValue reads a value of s as SmallValue does, but of at most limit
// bytes, for values a peer has no reason to make large (a handshake
// answer, a meta map): under the frame limit alone, one such value could
// make the reader build a map 20 times the size of a 64 MiB frame. A
// value over limit is refused with an error wrapping ndarray.ErrTooLarge that names
// what ("meta map") and the limit, before more than limit bytes of it are
// read or decoded.
func (f *FrameReader) CappedValue(s *avro.Schema, limit int, what string) (any, error) {
	if limit >= f.max {
		return f.SmallValue(s)
	}
	if len(f.buf) > limit {
		// The rest of an earlier frame: decode no more than limit bytes
		// of it.
		valueAt := f.read - int64(len(f.buf))
		v, n, err := s.Decode(f.buf[:limit])
		switch {
		case err == nil:
			return f.took(v, n), nil
		case errors.Is(err, ndarray.ErrTruncated):
			return nil, errAt(ndarray.ErrTooLarge, int(valueAt), "%s sent a %s of more than %d bytes, the most it may take", f.Peer(), what, limit)
		}
		return nil, f.fail(err, s, valueAt)
	}
	max := f.max
	f.max, f.capped = limit, what
	defer func() { f.max, f.capped = max, "" }()
	return f.SmallValue(s)
}

// Lend offers mem for the next frame that is read, which takes it over if
// it has the room: a value read from that frame then lies in mem, so that
// a caller done with the last value can have the next read into its memory
// instead of new memory.
func (f *FrameReader) Lend(mem []byte) { f.lending, f.loan, f.taken = true, mem, nil }

// Lent ends a loan and returns the memory the frame read under it lies
// in (nil if no frame was read), for the caller to lend again.
func (f *FrameReader) Lent() []byte {
	mem := f.taken
	f.lending, f.loan, f.taken = false, nil, nil
	return mem
}

// Value reads one value of schema s, decoded as avro.Schema.Decode decodes it,
// as yaq peers frame values: a value that encodes to nothing (null) is
// read from nothing; empty frames before a
// value are skipped (the terminators and nulls of earlier messages); a
// value continues into the next frame when its frame ends early. A frame
// over the limit is refused before anything is read of it.
//
// Real writers put each value in a frame of its own, which is decoded
// directly. A value that spans frames is decoded once it is complete:
// until then a scanner that resumes where it stopped finds where it ends,
// so that the work is linear in the bytes received however the peer cuts
// them, where decoding again from the start after each frame would take
// time quadratic in the number of frames.
func (f *FrameReader) Value(s *avro.Schema) (any, error) {
	if s.TakesNoBytes() {
		v, _, err := s.Decode(nil)
		return v, err
	}
	valueAt := f.read - int64(len(f.buf)) // the buffer is the end of the last frame
	scanning, grew := false, len(f.buf) > 0
	var first error // what decoding the first bytes found
	firstLen := 0
	for {
		if grew {
			if !scanning {
				v, n, err := s.Decode(f.buf)
				if err == nil {
					return f.took(v, n), nil
				}
				// Over a limit may be for want of the rest of the value's
				// bytes, which raise the memory budget.
				if !errors.Is(err, ndarray.ErrTruncated) && !errors.Is(err, ndarray.ErrTooLarge) {
					return nil, f.fail(err, s, valueAt)
				}
				scanning, first, firstLen = true, err, len(f.buf)
				f.startScan(s)
			}
			end, err := f.scan.Resume(f.buf)
			if err == nil {
				if end <= firstLen && errors.Is(first, ndarray.ErrTooLarge) {
					// Those bytes held the whole value: it is over the
					// limit, as decoding it again would find.
					return nil, f.fail(first, s, valueAt)
				}
				v, n, err := s.Decode(f.buf[:end])
				if err != nil {
					return nil, f.fail(err, s, valueAt)
				}
				return f.took(v, n), nil
			}
			if !errors.Is(err, ndarray.ErrTruncated) {
				return nil, f.fail(err, s, valueAt)
			}
		}
		var err error
		if grew, err = f.readFrame(s, &valueAt); err != nil {
			return nil, err
		}
	}
}

// readFrame reads the next frame onto what is left of the value so far,
// for a value of s that starts at *valueAt in the stream (reset when the
// frame starts it). grew says the frame was not empty.
func (f *FrameReader) readFrame(s *avro.Schema, valueAt *int64) (grew bool, err error) {
	var h [4]byte
	got, err := io.ReadFull(f.br, h[:])
	f.read += int64(got)
	if err != nil {
		return false, f.ended(err, s, *valueAt, got, -1)
	}
	n := binary.BigEndian.Uint32(h[:])
	frameAt := f.read - 4
	if int64(n)+int64(len(f.buf)) > int64(f.max) && frameAt == 0 && isYaqRPC(h[:]) {
		// A msgpack map whose first key is "ver": the answer a yaq-RPC
		// (YEP-100, msgpack) daemon gives to bytes it cannot read.
		more, _ := f.br.Peek(min(f.br.Buffered(), 60))
		return false, errAt(ndarray.ErrMalformed, 0, "%s speaks yaq-RPC (msgpack, YEP-100), not yaq's Avro RPC: it answered with a msgpack map %s; talk to it with a yaq-RPC client (package yaqrpc)",
			f.Peer(), printable(append(h[:got:got], more...)))
	}
	if int64(n)+int64(len(f.buf)) > int64(f.max) && frameAt == 0 && isText(h[:]) {
		// The very first bytes of the peer already make no sense as a
		// frame: it is not a yaq peer at all (an HTTP server, a serial
		// console). Say so, with what it sent, not "a frame of 2 GB".
		more, _ := f.br.Peek(min(f.br.Buffered(), 60))
		return false, errAt(ndarray.ErrMalformed, 0, "%s does not speak yaq (Avro RPC frames): it sent %s first",
			f.Peer(), printable(append(h[:got:got], more...)))
	}
	if int64(n)+int64(len(f.buf)) > int64(f.max) && frameAt == 0 && f.capped == handshakeAnswer {
		// No handshake answer comes in such a frame, and what follows the
		// length is not how one starts: a peer of some other binary
		// protocol (yaq's own answer to a huge protocol still says how
		// large it was).
		more, _ := f.br.Peek(min(f.br.Buffered(), 60))
		if len(more) >= 2 && !startsHandshakeResponse(more) {
			return false, errAt(ndarray.ErrMalformed, 0, "%s does not speak yaq (Avro RPC frames): it sent %s first, which is no handshake answer (as a frame it would be %d bytes)",
				f.Peer(), printable(append(h[:got:got], more...)), n)
		}
	}
	if int64(n)+int64(len(f.buf)) > int64(f.max) {
		if f.capped != "" {
			return false, errAt(ndarray.ErrTooLarge, int(frameAt), "%s sent a frame of %d bytes, which with the %d bytes before it is over the limit of %d bytes on a %s",
				f.Peer(), n, len(f.buf), f.max, f.capped)
		}
		return false, errAt(ndarray.ErrTooLarge, int(frameAt), "%s sent a frame of %d bytes, which with the %d bytes of the value before it is over the limit of %d",
			f.Peer(), n, len(f.buf), f.max)
	}
	if len(f.buf) == 0 {
		*valueAt = f.read
		// Memory grows as the frame arrives, not from its claimed length.
		var frame []byte
		if f.lending {
			frame, err = f.chunks.ReadAppend(f.loan[:0], f.br, int(n), 0)
			f.lending, f.loan, f.taken = false, nil, frame
		} else {
			frame, err = f.chunks.ReadFull(f.br, int(n))
		}
		f.buf = frame // the common case: a value in a frame of its own
	} else {
		// Room for as much again, so that a value in many small frames
		// is copied a few times in all, not once per frame.
		f.buf, err = f.chunks.ReadAppend(f.buf, f.br, int(n), len(f.buf))
	}
	if err != nil {
		return false, f.ended(err, s, *valueAt, 0, frameAt)
	}
	f.read += int64(n)
	return n > 0, nil
}

// skip reads past a value of s without decoding it, finding its end as
// Value does when it spans frames: for a value the reader has no use for
// (a handshake's meta map), which would otherwise be built into Go values
// some 20 times its bytes. The work is linear in its bytes, and the
// memory is that of the bytes.
func (f *FrameReader) skip(s *avro.Schema) error {
	if s.TakesNoBytes() {
		return nil
	}
	valueAt := f.read - int64(len(f.buf))
	f.startScan(s)
	grew := len(f.buf) > 0
	for {
		if grew {
			end, err := f.scan.Resume(f.buf)
			if err == nil {
				f.took(nil, end)
				return nil
			}
			if !errors.Is(err, ndarray.ErrTruncated) {
				return f.fail(err, s, valueAt)
			}
		}
		var err error
		if grew, err = f.readFrame(s, &valueAt); err != nil {
			return err
		}
	}
}

// startScan starts finding the end of a value of s that spans frames.
func (f *FrameReader) startScan(s *avro.Schema) {
	if f.scan == nil {
		f.scan = new(avro.Scanner)
	}
	f.scan.Start(s, f.max)
}

// took consumes the n bytes of a value read.
func (f *FrameReader) took(v any, n int) any {
	f.buf = f.buf[n:]
	if f.dropRest || len(f.buf) == 0 {
		f.buf = nil
	}
	return v
}

// Peer returns the other end's name, as errors give it.
func (f *FrameReader) Peer() string {
	if f.peer == "" {
		return "the peer"
	}
	return f.peer
}

// fail says, of an error found in a value, which value from which peer:
// its offsets count from the start of the value.
func (f *FrameReader) fail(err error, s *avro.Schema, valueAt int64) error {
	var e *ndarray.Error
	if !errors.As(err, &e) {
		return err
	}
	c := *e
	c.Detail += fmt.Sprintf(" (in the %s value from %s, which starts at byte %d of the stream)", s, f.Peer(), valueAt)
	return &c
}

// ended explains a read that failed: a connection that ended says where
// and what was awaited, and still wraps io.EOF (at a value's start) or
// io.ErrUnexpectedEOF (within one), for callers that take a peer hanging
// up between values as the normal end. Other errors (a deadline, a closed
// connection) are returned as they are. got is how much of a frame header
// was read; frameAt, if not -1, where the frame whose payload ended
// starts.
func (f *FrameReader) ended(err error, s *avro.Schema, valueAt int64, got int, frameAt int64) error {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return err
	}
	at := f.read
	var detail string
	cause := io.ErrUnexpectedEOF
	switch {
	case frameAt >= 0:
		at = frameAt
		detail = fmt.Sprintf("the connection from %s ended inside the frame that starts here, waiting for the %s value", f.Peer(), s)
	case got > 0:
		at -= int64(got)
		detail = fmt.Sprintf("the connection from %s ended inside a frame header (%d of 4 bytes), waiting for the %s value", f.Peer(), got, s)
	case len(f.buf) > 0:
		detail = fmt.Sprintf("the connection from %s ended after %d bytes of the %s value that starts at byte %d, before its end", f.Peer(), len(f.buf), s, valueAt)
	default:
		detail = fmt.Sprintf("%s closed the connection, where the %s value was to come", f.Peer(), s)
		cause = io.EOF
	}
	return &ndarray.Error{Pkg: "avro", Err: ndarray.ErrTruncated, Offset: at, Detail: detail, Cause: cause}
}

// valueInPlace decodes a value of s from the next frame while it lies in
// br's buffer, without copying it out: for small values that are not kept
// past the next read. ok is false, and nothing consumed, when it cannot:
// the frame is empty, over max, not all buffered, or holds more or less
// than a value.
func valueInPlace(br *bufio.Reader, s *avro.Schema, max int) (v any, n int, ok bool) {
	h, err := br.Peek(4)
	if err != nil {
		return nil, 0, false
	}
	n = int(binary.BigEndian.Uint32(h))
	if n == 0 || n > max || 4+n > br.Buffered() {
		return nil, 0, false
	}
	b, _ := br.Peek(4 + n)
	v, used, err := s.Decode(b[4:])
	if err != nil || used != n {
		return nil, 0, false
	}
	br.Discard(4 + n)
	return v, 4 + n, true
}

// SmallValue reads a value of s as Value does, decoding it where it lies in
// the reader's buffer when it can, without copying it out: for small
// values (a flag, a method's name) that are not kept past the next read,
// whose bytes and arrays may alias that buffer.
func (f *FrameReader) SmallValue(s *avro.Schema) (any, error) {
	if len(f.buf) == 0 {
		if v, n, ok := valueInPlace(f.br, s, f.max); ok {
			f.read += int64(n)
			return v, nil
		}
	}
	return f.Value(s)
}

// errAt is an ndarray.Error of class at byte off of the stream: the framing's
// errors are the codec's, "avro: CLASS at byte N: DETAIL".
func errAt(class error, off int, format string, args ...any) error {
	return &ndarray.Error{Pkg: "avro", Err: class, Offset: int64(off), Detail: fmt.Sprintf(format, args...)}
}

// isText reports whether b is printable ASCII: as the length of a first
// frame, over the limit, it is a text protocol's greeting ("HTTP", "SSH-").
// isYaqRPC says whether b starts a msgpack map (of up to 15 entries) whose
// first key is "ver", as every yaq-RPC message does.
func isYaqRPC(b []byte) bool {
	return len(b) >= 4 && b[0]&0xf0 == 0x80 && b[1] == 0xa3 && b[2] == 'v' && b[3] == 'e'
}

// startsHandshakeResponse says whether b can start a HandshakeResponse:
// the match (BOTH, CLIENT or NONE: 0, 2 or 4 as a zig-zag varint), then
// the serverProtocol union's branch (null or string: 0 or 2).
func startsHandshakeResponse(b []byte) bool {
	return len(b) >= 2 && (b[0] == 0 || b[0] == 2 || b[0] == 4) && (b[1] == 0 || b[1] == 2)
}

func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// printable quotes the first bytes a peer sent, shortened, for an error:
// text as text (an HTTP status line), anything else as Go escapes.
func printable(b []byte) string {
	const most = 48
	if len(b) > most {
		return strconv.Quote(string(b[:most])) + "..."
	}
	return strconv.Quote(string(b))
}

// FrameWriter holds the frames of one message for one vectored write
// (writev on a connection): the Python peers cannot read a frame whose
// header arrives apart from it, and large array data goes out from the
// array itself (see avro.Schema.AppendPieces). One FrameWriter serves a
// connection's messages one after another; its zero value is ready to use.
type FrameWriter struct {
	bufs      net.Buffers
	arena     []byte     // frame headers and small payloads
	arenaRoom [256]byte  // the arena, until it outgrows it
	bufRoom   [16][]byte // bufs, likewise
}

// Reset empties w for the next message, letting go of what a message
// that was never sent referred to.
func (w *FrameWriter) Reset() {
	clear(w.bufRoom[:])
	w.arena, w.bufs = w.arenaRoom[:0], w.bufRoom[:0]
}

// Add adds a frame whose payload is the concatenation of pieces, which
// are referred to, not copied, until Send: they must not change before.
// Add with no pieces adds the empty frame that ends a message.
func (w *FrameWriter) Add(pieces ...[]byte) {
	if w.arena == nil {
		w.Reset()
	}
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	// What bufs holds of the arena stays where it is, should the arena move.
	at := len(w.arena)
	w.arena = binary.BigEndian.AppendUint32(w.arena, uint32(n))
	w.bufs = append(w.bufs, w.arena[at:at+4:at+4])
	for _, p := range pieces {
		if len(p) > 0 {
			w.bufs = append(w.bufs, p)
		}
	}
}

// AddString adds a frame holding s as an Avro string (a call's method
// name).
func (w *FrameWriter) AddString(s string) {
	if w.arena == nil {
		w.Reset()
	}
	at := len(w.arena)
	w.arena = binary.BigEndian.AppendUint32(w.arena, 0) // the length, once known
	w.arena = append(binary.AppendVarint(w.arena, int64(len(s))), s...)
	binary.BigEndian.PutUint32(w.arena[at:], uint32(len(w.arena)-at-4))
	w.bufs = append(w.bufs, w.arena[at:len(w.arena):len(w.arena)])
}

// Send writes the frames and lets go of what they referred to. A writer
// with a WriteBuffers(*net.Buffers) method (a yaq daemon's connection,
// which keeps its write timeout so) writes them itself; on any other,
// net.Buffers uses writev where it can.
func (w *FrameWriter) Send(out io.Writer) error {
	var err error
	if bw, ok := out.(interface {
		WriteBuffers(*net.Buffers) (int64, error)
	}); ok {
		_, err = bw.WriteBuffers(&w.bufs)
	} else {
		_, err = w.bufs.WriteTo(out)
	}
	clear(w.bufRoom[:])
	w.bufs = nil
	return err
}
