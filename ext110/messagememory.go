package ext110

import (
	"errors"
	"io"
	"sync"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// MarshalMessage encodes v as msgpack, as msgpack.Marshal would, with
// arrays (*ndarray.Array and ndarray.Array values) written as ext 110, or by
// o.ArrayEncoder when it is set.
//
// The message is drafted first with its large array data counted, not
// copied. A message with none is then done: the draft is it. Otherwise it
// is written again into one buffer of exactly the size counted, so that an
// 8 MiB array costs one allocation and one copy, not a growing buffer's
// several.
//
// It fails as Options.Marshal does for an array it cannot encode
// (ErrMalformed, ErrNonstandard, ndarray.ErrTooLarge), returns ArrayEncoder's and
// ArraySize's errors as they are, and the msgpack library's error, which
// matches no sentinel, for a value msgpack cannot encode (a chan, a func).
func (o MessageOptions) MarshalMessage(v any) ([]byte, error) {
	w := &arrayWriter{enc: o.ArrayEncoder, size: o.ArraySize, drafting: true}
	enc := msgpack.GetEncoder()
	defer msgpack.PutEncoder(enc)
	enc.Reset(w)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	if !w.skipped {
		return w.buf, nil
	}
	w.buf, w.drafting, w.skipped = make([]byte, 0, w.n), false, false
	enc.Reset(w)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return w.buf, nil
}

// bigWrite is the size from which a draft counts bytes instead of copying
// them: array data, which the final buffer then takes in one copy.
const bigWrite = 64 << 10

// arrayWriter is the writer of a message being drafted (n counts every
// byte; buf holds them but for the big writes skipped) or written into buf;
// the registered array encoder recognises it through the encoder's Writer,
// to hand arrays to a caller's ArrayEncoder.
type arrayWriter struct {
	buf      []byte
	n        int
	drafting bool
	skipped  bool // a big write was counted, not copied: the draft is not the message
	enc      func(dst []byte, a *ndarray.Array) ([]byte, error)
	size     func(a *ndarray.Array) (int, error)
}

func (w *arrayWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	if w.drafting && len(p) >= bigWrite {
		w.skipped = true
	} else if !w.skipped {
		w.buf = append(w.buf, p...)
	}
	return len(p), nil
}

func (w *arrayWriter) WriteByte(c byte) error {
	w.n++
	if !w.skipped {
		w.buf = append(w.buf, c)
	}
	return nil
}

// encodeByCaller writes a with the ArrayEncoder of e's writer, and reports
// false if e writes ext 110.
func encodeByCaller(e *msgpack.Encoder, a *ndarray.Array) (bool, error) {
	w, ok := e.Writer().(*arrayWriter)
	if !ok || w.enc == nil {
		return false, nil
	}
	if w.drafting && w.size != nil && len(a.Data) >= bigWrite {
		n, err := w.size(a)
		w.n += n
		w.skipped = true
		return true, err
	}
	before := len(w.buf)
	var err error
	w.buf, err = w.enc(w.buf, a)
	w.n += len(w.buf) - before
	if w.skipped {
		w.buf = w.buf[:before] // nothing after a skipped write is kept
	}
	return true, err
}

// sliceReaders recycles the readers of small messages decoded back to back
// (an RPC peer's requests).
var sliceReaders = sync.Pool{New: func() any { return new(sliceReader) }}

// sliceReader is the msgpack library's reader while a message is decoded
// from memory with a MapDecoder or NoCopy: it lets the map decoder see the
// bytes ahead, and ext 110 payloads alias the message.
type sliceReader struct {
	b     []byte
	off   int
	alias bool // ext 110 arrays alias b
}

// next returns the next n bytes without a copy.
func (r *sliceReader) next(n int) ([]byte, bool) {
	if n < 0 || n > len(r.b)-r.off {
		return nil, false
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s, true
}

func (r *sliceReader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *sliceReader) ReadByte() (byte, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	r.off++
	return r.b[r.off-1], nil
}

func (r *sliceReader) UnreadByte() error {
	if r.off == 0 {
		return errors.New("ext110: nothing to unread")
	}
	r.off--
	return nil
}

// Len reports the bytes left, which the ext 110 decoder uses to size a
// payload at once.
func (r *sliceReader) Len() int { return len(r.b) - r.off }

// decodeFromSlice decodes a checked message into v through a reader that
// lets ext 110 arrays alias data (alias) and offers the maps that meet
// interface values to mapDecoder.
func decodeFromSlice(data []byte, v any, mapDecoder func([]byte) (any, int, error), alias bool) error {
	r := sliceReaders.Get().(*sliceReader)
	*r = sliceReader{b: data, alias: alias}
	dec := msgpack.GetDecoder()
	defer func() {
		// The pool hands decoders to msgpack.Unmarshal too: leave none of
		// this call's settings behind.
		dec.SetMapDecoder(nil)
		dec.Reset(nil)
		msgpack.PutDecoder(dec)
		*r = sliceReader{}
		sliceReaders.Put(r)
	}()
	dec.Reset(r)
	dec.SetMapDecoder(nil)
	if mapDecoder != nil {
		dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) {
			v, n, err := mapDecoder(r.b[r.off:])
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
	if err := dec.Decode(v); err != nil {
		var byCaller *callerError
		if errors.As(err, &byCaller) {
			return byCaller.err // already described by the codec that decoded the map
		}
		var e *ndarray.Error
		if errors.As(err, &e) {
			return err
		}
		return newError(ErrMalformed, -1, "", err)
	}
	return nil
}

// callerError carries a MapDecoder's error through the msgpack library
// unchanged.
type callerError struct{ err error }

func (e *callerError) Error() string { return e.err.Error() }
func (e *callerError) Unwrap() error { return e.err }
