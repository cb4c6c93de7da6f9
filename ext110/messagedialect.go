package ext110

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// MarshalMessage encodes v as msgpack, as msgpack.Marshal would, with
// arrays as ext 110.
func MarshalMessage(v any) ([]byte, error) { return MessageOptions{}.MarshalMessage(v) }

// MarshalMessage encodes v as msgpack, as msgpack.Marshal would, with
// arrays (*ndarray.Array and ndarray.Array values) written as o.Encoding
// says: ext 110 when it is zero, or maps of a dialect.
func (o MessageOptions) MarshalMessage(v any) ([]byte, error) {
	w := &dialectWriter{d: o.Encoding}
	enc := msgpack.NewEncoder(w)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return w.Bytes(), nil
}

// dialectWriter is the writer of a message whose arrays are written in a
// dialect: the registered array encoder recognises it through the
// encoder's Writer.
type dialectWriter struct {
	bytes.Buffer
	d dialect.Dialect
}

// encodeInDialect writes a as a map of the dialect of e's writer, and
// reports false if e writes ext 110.
func encodeInDialect(e *msgpack.Encoder, a *ndarray.Array) (bool, error) {
	w, ok := e.Writer().(*dialectWriter)
	if !ok || w.d == 0 {
		return false, nil
	}
	b, err := w.d.Append(nil, a)
	if err != nil {
		return true, err
	}
	_, err = w.Write(b)
	return true, err
}

// sliceReaders recycles the readers of small messages decoded back to back
// (an RPC peer's requests).
var sliceReaders = sync.Pool{New: func() any { return new(sliceReader) }}

// sliceReader is the msgpack library's reader while a message is decoded
// with dialects: it lets the map decoder see the bytes ahead.
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
// lets ext 110 arrays alias data (alias) and the maps of either dialect that
// meet interface values become *ndarray.Array (dialects).
func decodeFromSlice(data []byte, v any, dialects, alias bool) error {
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
	if !dialects {
		dec.SetMapDecoder(nil)
	} else {
		dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) {
			start := r.off
			if dialect.IsArray(r.b[start:]) {
				return dialectArray(r, start)
			}
			m, err := d.DecodeMap()
			if err != nil {
				return nil, err
			}
			if len(m) >= 3 && len(m) <= 16 && hasMarker(m) { // a sender that puts the marker later
				return dialectArray(r, start)
			}
			return m, nil
		})
	}
	if err := dec.Decode(v); err != nil {
		var e *Error
		var de *dialect.Error
		if errors.As(err, &e) || errors.As(err, &de) {
			return err
		}
		return newError(ErrMalformed, -1, "", err)
	}
	return nil
}

func hasMarker(m map[string]any) bool {
	_, nd := m["nd"]
	_, arr := m["__ndarray__"]
	_, scalar := m["__npgeneric__"]
	return nd || arr || scalar
}

// dialectArray decodes the dialect map that starts at r.b[start:], leaving
// r after it.
func dialectArray(r *sliceReader, start int) (any, error) {
	h, err := dialect.DecodeHeader(r.b[start:])
	if err != nil {
		return nil, err
	}
	r.off = start + h.Len
	if h.Scalar != nil {
		return h.Scalar, nil
	}
	data := append(make([]byte, 0, h.DataLen), r.b[start+h.DataOffset:start+h.DataOffset+h.DataLen]...)
	return &ndarray.Array{DType: h.DType, Shape: h.Shape, Data: data}, nil
}
