package ext110

import (
	"fmt"
	"io"
	"reflect"
	"sync"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/internal/mpmsg"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// The msgpack library's registry is global and not safe to change while
// others decode, so it is written once, here.
func init() {
	// The ext registration makes interface{} targets decode to
	// *ndarray.Array. Encoding both types, and decoding the value type, go
	// through functions of their own, so that an unset (zero) Array is
	// msgpack nil and an Array held by value need not be addressable (the
	// library's ext encoder refuses those).
	msgpack.RegisterExtDecoder(ExtType, (*ndarray.Array)(nil), decodeExtPayload)
	msgpack.Register((*ndarray.Array)(nil), encodeArrayPointer, nil)
	msgpack.Register(ndarray.Array{}, encodeArrayValue, decodeArrayValue)
}

func encodeArrayPointer(e *msgpack.Encoder, v reflect.Value) error {
	if v.IsNil() {
		return e.EncodeNil()
	}
	return encodeArray(e, v.Interface().(*ndarray.Array))
}

func encodeArrayValue(e *msgpack.Encoder, v reflect.Value) error {
	a := v.Interface().(ndarray.Array) // a copy of the header only
	return encodeArray(e, &a)
}

// encodeArray writes a as ext 110, or nil when a is the zero Array.
func encodeArray(e *msgpack.Encoder, a *ndarray.Array) error {
	if a.IsZero() {
		return e.EncodeNil()
	}
	if done, err := mpmsg.EncodeArray(e, a); done {
		return err
	}
	l, err := Options{}.layoutOf(a)
	if err != nil {
		return err
	}
	if err := e.EncodeExtHeader(ExtType, l.payload); err != nil {
		return err
	}
	w := e.Writer()
	buf := framingBuffers.Get().(*[]byte)
	defer framingBuffers.Put(buf)
	prefix := l.appendPrefix((*buf)[:0])
	if _, err := w.Write(prefix[mpwire.ExtHeaderSize(l.payload):]); err != nil {
		return err
	}
	if _, err := w.Write(a.Data); err != nil {
		return err
	}
	*buf = l.appendSuffix(prefix[:0])
	_, err = w.Write(*buf)
	return err
}

// framingBuffers hold the bytes around an array's data while it is
// encoded inside a message.
var framingBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// decodeArrayValue decodes into an ndarray.Array held by value: nil leaves
// it zero.
func decodeArrayValue(d *msgpack.Decoder, v reflect.Value) error {
	if c, err := d.PeekCode(); err == nil && c == 0xc0 {
		v.Set(reflect.Zero(v.Type()))
		return d.DecodeNil()
	}
	id, n, err := d.DecodeExtHeader()
	if err != nil {
		return err
	}
	if id != ExtType {
		return newError(errNotExt110, -1, fmt.Sprintf("ext type %d, want %d", id, ExtType), nil)
	}
	var a ndarray.Array
	if err := decodeExtPayload(d, reflect.ValueOf(&a), n); err != nil {
		return err
	}
	v.Set(reflect.ValueOf(a))
	return nil
}

// decodeExtPayload decodes the extLen-byte payload d is at into v, a
// *ndarray.Array. Inside a message the root package decodes (see
// internal/mpmsg), the payload is the message's own bytes: aliased where
// the caller allows it and the data lies aligned for its items, else
// copied once, aligned. From any other decoder (msgpack.Unmarshal, a
// caller's own), it is read as its bytes arrive, into memory that grows
// with them: nothing is sized from the claimed length alone.
func decodeExtPayload(d *msgpack.Decoder, v reflect.Value, extLen int) error {
	payload, alias, inMessage, err := mpmsg.Payload(d, extLen)
	if err != nil {
		return err
	}
	if !inMessage {
		payload, err = readAligned(readFullFunc(d.ReadFull), extLen)
		if err != nil {
			return newError(ndarray.ErrTruncated, -1, "msgpack input ended inside an ext 110 payload", err)
		}
		return setArray(v, payload)
	}
	if !alias {
		// One copy, the data placed aligned, in the call's memory for
		// arrays (a ResultBuffer's) or new memory.
		payload = mpmsg.Copy(d, payload, dataOffset(payload[:min(len(payload), 16)]))
	}
	// With alias the message's owner lets arrays alias it: no copy,
	// unless the data lies there misaligned for its items.
	if err := setArray(v, payload); err != nil || !alias {
		return err
	}
	if a := v.Interface().(*ndarray.Array); !a.Aligned() {
		a.Data = mpmsg.Copy(d, a.Data, 0) // once, aligned
	}
	return nil
}

// setArray decodes an ext 110 payload into v, a *ndarray.Array, aliasing
// the payload.
func setArray(v reflect.Value, payload []byte) error {
	a, err := decodePayload(payload, 0, true)
	if err != nil {
		return err
	}
	if v.Kind() == reflect.Pointer && v.IsNil() {
		v.Set(reflect.New(v.Type().Elem()))
	}
	*v.Interface().(*ndarray.Array) = *a
	return nil
}

// readFullFunc adapts a fill-this-buffer function to io.Reader.
type readFullFunc func([]byte) error

func (f readFullFunc) Read(p []byte) (int, error) {
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// readAligned reads an ext 110 payload of n bytes from r into one new
// buffer, placed so that the array data lands at an address that is a
// multiple of 8 when the payload starts with its data, as every writer of
// the canonical key order makes it ({"data": bin ...}): the decoded Array
// is then read in place by ndarray.Values instead of copied again to
// align it. Other payloads are read as they come. The buffer grows as the
// bytes arrive (see boundedio.Append), so a claimed length r does not back
// costs about twice what r sent.
func readAligned(r io.Reader, n int) ([]byte, error) {
	var head [16]byte
	k := min(n, len(head))
	if _, err := io.ReadFull(r, head[:k]); err != nil {
		return nil, err
	}
	pad := 0
	if d := dataOffset(head[:k]); d > 0 {
		pad = (8 - d%8) % 8 // heap blocks start 8-aligned
	}
	buf := make([]byte, pad+k, pad+min(n, boundedio.FirstChunk))
	copy(buf[pad:], head[:k])
	buf, err := boundedio.Append(buf, r, n-k)
	if err != nil {
		return nil, err
	}
	return buf[pad:], nil
}

// dataOffset returns where the data bytes start in a payload that begins
// {"data": <bin or str header>, or 0 when head does not begin so.
func dataOffset(head []byte) int {
	_, rest, err := mpwire.ReadMapHeaderBytes(head)
	if err != nil {
		return 0
	}
	key, rest, err := mpwire.ReadStringZC(rest)
	if err != nil || string(key) != "data" || len(rest) == 0 {
		return 0
	}
	h := mpwire.HeadOf(rest[0])
	if h.Type != mpwire.BinType && h.Type != mpwire.StrType {
		return 0
	}
	return len(head) - len(rest) + 1 + h.LenSize
}
