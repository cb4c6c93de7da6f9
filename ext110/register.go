package ext110

import (
	"io"
	"reflect"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// The msgpack library's registry is global and not safe to change while
// others decode, so it is written once, here.
func init() {
	msgpack.RegisterExtEncoder(ExtType, (*ndarray.Array)(nil), encodeExtPayload)
	msgpack.RegisterExtDecoder(ExtType, (*ndarray.Array)(nil), decodeExtPayload)
}

// encodeExtPayload returns the payload (the map) of a's ext object; the
// library writes the ext header, choosing the same form msgpack-python does.
// Non-standard dtypes are refused: to send one inside a msgpack message,
// encode it with Options.Marshal and embed the bytes as a msgpack.RawMessage.
func encodeExtPayload(_ *msgpack.Encoder, v reflect.Value) ([]byte, error) {
	a := v.Interface().(*ndarray.Array)
	l, err := Options{}.layoutOf(a)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, l.total)
	b = l.appendTo(b, a.Data)
	return b[extHeaderLen(l.payload):], nil
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
