package ext110

import (
	"fmt"
	"io"
	"reflect"

	"github.com/ndpack/ndpack/internal/boundedio"
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
	if done, err := encodeInDialect(e, a); done {
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
	prefix := l.appendPrefix(make([]byte, 0, 64))
	if _, err := w.Write(prefix[extHeaderLen(l.payload):]); err != nil {
		return err
	}
	if _, err := w.Write(a.Data); err != nil {
		return err
	}
	_, err = w.Write(l.appendSuffix(prefix[:0]))
	return err
}

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
		return newError(ErrNotExt110, -1, fmt.Sprintf("ext type %d, want %d", id, ExtType), nil)
	}
	var a ndarray.Array
	if err := decodeExtPayload(d, reflect.ValueOf(&a), n); err != nil {
		return err
	}
	v.Set(reflect.ValueOf(a))
	return nil
}

// decodeExtPayload reads extLen payload bytes from the library's decoder,
// growing its buffer as bytes arrive, and decodes them into v, a
// *ndarray.Array. The decoded Array aliases that buffer, which it owns.
func decodeExtPayload(d *msgpack.Decoder, v reflect.Value, extLen int) error {
	var src io.Reader = readFullFunc(d.ReadFull)
	// Decoding from memory (msgpack.Unmarshal) the decoder's reader knows
	// how much is left: with that, a true length is allocated once and a
	// false one refused at once, instead of growing a buffer.
	if l, ok := d.Buffered().(interface{ Len() int }); ok {
		src = knownLen{src, l}
	}
	payload, err := boundedio.ReadFull(src, extLen)
	if err != nil {
		return newError(ErrTruncated, -1, "msgpack input ended inside an ext 110 payload", err)
	}
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

// knownLen is a reader that reports how many bytes its source has left.
type knownLen struct {
	io.Reader
	l interface{ Len() int }
}

func (k knownLen) Len() int { return k.l.Len() }

// readFullFunc adapts a fill-this-buffer function to io.Reader.
type readFullFunc func([]byte) error

func (f readFullFunc) Read(p []byte) (int, error) {
	if err := f(p); err != nil {
		return 0, err
	}
	return len(p), nil
}
