// Package mpmsg runs whole msgpack messages holding arrays through the
// msgpack library (github.com/vmihailenco/msgpack/v5), for the root
// package's message decoder and encoder: the library walks the Go values,
// reflection and all, while the arrays in them are written in the encoding
// the caller chose, into one buffer of the message's exact size, and read
// from the message's own bytes, aliasing them if the caller allows.
//
// The library's registry of types is global, and package ext110 registers
// the array types there, so that plain msgpack.Marshal and Unmarshal carry
// ext 110. What one call of Marshal or Unmarshal asks for is found by the
// registered functions through EncodeArray and Payload, keyed by the
// library's Encoder or Decoder that the call made and is running: nothing
// of the library's internals (the writer it wraps ours in, the reader it
// buffers) is looked at, and outside those calls the registered functions
// do what plain msgpack does.
//
// The package knows no array encoding: ext110 writes ext 110 itself, and
// the encodings a caller chooses (the dialects) come as a Format.
package mpmsg

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// Format is an encoding of arrays inside a message: how to append one and
// how long that is, exactly.
type Format interface {
	Append(dst []byte, a *ndarray.Array) ([]byte, error)
	Size(a *ndarray.Array) (int, error)
}

// encoding holds the writer of each Marshal call in progress, by the
// Encoder it runs; decoding the reader of each Unmarshal call, by Decoder.
var encoding, decoding sync.Map

// Marshal encodes v as msgpack.Marshal would, with the arrays in it
// (*ndarray.Array and ndarray.Array values) written by f, or as the
// registered encoder writes them (ext 110) when f is nil; but integers in
// their smallest form and Go maps' keys sorted, as msgpack-python's packb
// writes a dict built in that order.
//
// The message is drafted first with its large payloads (array data, long
// strings and byte strings) counted, not copied. A message with none is
// then done: the draft is it. Otherwise it is written again into one
// buffer of exactly the size counted, so that an 8 MiB array costs one
// allocation and one copy, not a growing buffer's several.
//
// It returns f's errors as they are, the registered encoder's for an array
// it cannot write, and the library's for a value msgpack cannot encode.
func Marshal(v any, f Format) ([]byte, error) { return Append(nil, v, f) }

// Append is Marshal appending the message to dst: where dst's capacity
// holds it, nothing is allocated for it (a caller that sends messages
// one after another reuses one buffer); otherwise dst grows once, to the
// exact size. On failure it returns dst unchanged.
func Append(dst []byte, v any, f Format) ([]byte, error) {
	w := &writer{buf: dst, format: f, drafting: true}
	enc := msgpack.GetEncoder()
	encoding.Store(enc, w)
	defer func() {
		encoding.Delete(enc)
		enc.Reset(nil)
		msgpack.PutEncoder(enc)
	}()
	enc.Reset(w)
	configure(enc)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	if !w.skipped {
		return w.buf, nil
	}
	out := dst
	if cap(dst)-len(dst) < w.n {
		out = make([]byte, len(dst), len(dst)+w.n)
		copy(out, dst)
	}
	w.buf, w.n, w.drafting, w.skipped = out, 0, false, false
	enc.Reset(w)
	configure(enc)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return w.buf, nil
}

// configure makes an Encoder write as msgpack-python's packb does for the
// same values, integers in their smallest form, and the same value always
// as the same bytes: a Go map's keys in sorted order.
func configure(enc *msgpack.Encoder) {
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
}

// bigWrite is the size from which a draft counts bytes instead of copying
// them: array data, which the final buffer then takes in one copy.
const bigWrite = 64 << 10

// writer is the writer of a message being drafted (n counts every byte;
// buf holds them but for the big writes skipped) or written into buf.
type writer struct {
	buf      []byte
	n        int
	drafting bool
	skipped  bool // a big write was counted, not copied: the draft is not the message
	format   Format
}

func (w *writer) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.drafting && len(p) >= bigWrite {
		w.skipped = true
	} else if !w.skipped {
		w.buf = append(w.buf, p...)
	}
	return len(p), nil
}

func (w *writer) WriteByte(c byte) error {
	w.n++
	if !w.skipped {
		w.buf = append(w.buf, c)
	}
	return nil
}

// EncodeArray is for the registered encoder of arrays: when e runs a
// Marshal call whose Format is set, it writes a as that Format says and
// reports true; otherwise it reports false, and the registered encoder
// writes a itself (through e, as for any Encoder).
func EncodeArray(e *msgpack.Encoder, a *ndarray.Array) (bool, error) {
	v, ok := encoding.Load(e)
	if !ok {
		return false, nil
	}
	w := v.(*writer)
	if w.format == nil {
		return false, nil
	}
	if w.drafting && len(a.Data) >= bigWrite {
		n, err := w.format.Size(a)
		w.n += n
		w.skipped = true
		return true, err
	}
	before := len(w.buf)
	out, err := w.format.Append(w.buf, a)
	if err != nil {
		return true, err
	}
	w.buf = out
	w.n += len(w.buf) - before
	if w.skipped {
		w.buf = w.buf[:before] // nothing after a skipped write is kept
	}
	return true, nil
}

// readers recycles the readers of small messages decoded back to back (an
// RPC peer's requests).
var readers = sync.Pool{New: func() any { return new(reader) }}

// reader is the library's reader of a message in memory. It is an
// io.ByteScanner, from which, as msgpack.NewDecoder documents, the library
// reads only the bytes it decodes: its offset is where the decoder is.
type reader struct {
	b     []byte
	off   int
	alias bool
	arena *Arena
}

// Arena is the memory the arrays of one Unmarshal call are copied into,
// kept for the next call (a caller's ResultBuffer): a call finds room
// there for what the last one copied, and copies without allocating.
// The zero Arena is empty; nil is new memory for every copy.
type Arena struct {
	buf        []byte
	used, need int
}

// begin starts a call: the arena grows, once, to what the last call
// needed, and is then reused from its start.
func (a *Arena) begin() {
	if a.need > len(a.buf) {
		a.buf = make([]byte, a.need)
	}
	a.used, a.need = 0, 0
}

// Copy returns a copy of p placed so that p[at] lies on a multiple of 64
// bytes (the data of an array whose header is before it), in a's memory
// where it has room, else in new memory, where p[at] lies on a multiple
// of 8 (appended, not made and filled: an append clears nothing it then
// overwrites). A nil a is new memory.
func (a *Arena) Copy(p []byte, at int) []byte {
	if a != nil {
		o := (a.used+at+63)&^63 - at
		end := o + len(p)
		a.used, a.need = end, end
		if end <= len(a.buf) {
			copy(a.buf[o:end], p)
			return a.buf[o:end:end]
		}
	}
	var zeros [8]byte
	pad := (8 - at%8) % 8
	return append(zeros[:pad:pad], p...)[pad:]
}

// Copy is Arena.Copy in the arena of the Unmarshal call d runs (new
// memory when it runs none, or none was given).
func Copy(d *msgpack.Decoder, p []byte, at int) []byte {
	if v, ok := decoding.Load(d); ok {
		return v.(*reader).arena.Copy(p, at)
	}
	return (*Arena)(nil).Copy(p, at)
}

func (r *reader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *reader) ReadByte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	r.off++
	return r.b[r.off-1], nil
}

func (r *reader) UnreadByte() error {
	if r.off == 0 {
		return errors.New("mpmsg: nothing to unread")
	}
	r.off--
	return nil
}

// Maps is offered, by Unmarshal, every map that decoding into an interface
// value meets, as the message and the map's offset in it. It returns the
// value the map stands for and the bytes that value took, or n == 0 to
// leave the map to the library.
type Maps func(msg []byte, at int) (v any, n int, err error)

// Unmarshal decodes data, one whole message already checked (every length
// within the bytes, nesting bounded), into v, as msgpack.Unmarshal would,
// with the maps that meet interface values offered to maps first (when it
// is not nil) and the registered ext decoder reading its payloads from
// data through Payload: aliasing data if alias is set, else copying them
// (Copy) into arena, which may be nil.
//
// A value that does not fit v fails with the library's error; maps' errors
// are returned as they are, and so are the registered decoder's errors
// that are *ndarray.Error.
func Unmarshal(data []byte, v any, maps Maps, alias bool, arena *Arena) error {
	if arena != nil {
		arena.begin()
	}
	r := readers.Get().(*reader)
	*r = reader{b: data, alias: alias, arena: arena}
	dec := msgpack.GetDecoder()
	decoding.Store(dec, r)
	defer func() {
		decoding.Delete(dec)
		// The pool hands decoders to msgpack.Unmarshal too: leave none of
		// this call's settings behind.
		dec.SetMapDecoder(nil)
		dec.Reset(nil)
		msgpack.PutDecoder(dec)
		*r = reader{}
		readers.Put(r)
	}()
	dec.Reset(r)
	if maps != nil {
		dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) {
			// The library has read the map's first byte and put it back.
			if r.off >= len(r.b) || !isMap(r.b[r.off]) {
				return nil, &readAhead{"a map"}
			}
			v, n, err := maps(r.b, r.off)
			if err != nil {
				return nil, &callerError{err}
			}
			if n > 0 {
				r.off += n
				return v, nil
			}
			return d.DecodeMap()
		})
	}
	err := dec.Decode(v)
	var byCaller *callerError
	if errors.As(err, &byCaller) {
		return byCaller.err // already described by the codec that decoded the map
	}
	return err
}

// Payload is for the registered decoder of ext objects: when d runs an
// Unmarshal call, it returns the n payload bytes d is at, as they lie in
// the message (the caller copies them unless alias), and consumes them;
// ok is false when d runs no Unmarshal call. It fails, with ok true, if
// the message does not hold an ext header of an n-byte payload just
// before them: the library would have read past what it decoded.
func Payload(d *msgpack.Decoder, n int) (p []byte, alias, ok bool, err error) {
	v, found := decoding.Load(d)
	if !found {
		return nil, false, false, nil
	}
	r := v.(*reader)
	if !extBefore(r.b[:r.off], n) {
		return nil, false, true, &readAhead{"an ext payload"}
	}
	if n < 0 || n > len(r.b)-r.off {
		return nil, false, true, fmt.Errorf("mpmsg: an ext payload of %d bytes, %d remain", n, len(r.b)-r.off)
	}
	p = r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return p, r.alias, true, nil
}

// callerError carries a Maps error through the msgpack library unchanged.
type callerError struct{ err error }

func (e *callerError) Error() string { return e.err.Error() }
func (e *callerError) Unwrap() error { return e.err }

// readAhead is the library found somewhere the message does not hold what
// it reported reading: it read ahead of what it decoded, which its
// documentation says it does not do from an io.ByteScanner.
type readAhead struct{ what string }

func (e *readAhead) Error() string {
	return "mpmsg: the msgpack library is not where the message holds " + e.what + " (it read ahead)"
}

func isMap(c byte) bool { return mpwire.HeadOf(c).Type == mpwire.MapType }

// extBefore reports whether b ends with the header of an ext value whose
// payload is n bytes long.
func extBefore(b []byte, n int) bool {
	for _, size := range [...]int{2, 3, 4, 6} { // fixext, ext 8, 16, 32
		if len(b) < size {
			return false
		}
		_, l, rest, err := mpwire.ReadExtHeaderUnchecked(b[len(b)-size:])
		if err == nil && len(rest) == 0 && int64(l) == int64(n) {
			return true
		}
	}
	return false
}
