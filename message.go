package ndpack

import (
	"io"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
)

// MessageOptions are ext110.MessageOptions with the dialects added: the
// limits a message is checked against before the msgpack library decodes
// it, whether the maps of the msgpack-numpy and OpenPI dialects are
// recognised as arrays, and how arrays are written. The zero value decodes
// ext 110 objects and both dialects' maps, writes ext 110, and applies
// ext110's default limits.
type MessageOptions struct {
	// MaxDepth, MaxSize, MaxExpansion and NoCopy are those of
	// ext110.MessageOptions; zero means the same defaults.
	MaxDepth     int
	MaxSize      int64
	MaxExpansion int
	NoCopy       bool
	// Unless NoDialects is set, UnmarshalMessage and MessageDecoder also
	// turn the maps of the msgpack-numpy and OpenPI dialects (see package
	// dialect) met by interface values anywhere in the message into
	// *ndarray.Array, and their numpy scalars into 0-d arrays. A map is
	// taken for an array when one of its keys is a dialect's marker ("nd",
	// "__ndarray__", "__npgeneric__"); such a map that does not hold a
	// valid array is an error, not a map. NoDialects leaves those maps as
	// maps: only ext 110 objects become arrays.
	NoDialects bool
	// Encoding is how MarshalMessage writes arrays: ext 110 when zero, or
	// maps of the given dialect.
	Encoding dialect.Dialect
	// AllowNonstandard lets MarshalMessage write, as ext 110, arrays of the
	// kinds YEP-110 leaves out (S, U, V, M8, m8, and records): see
	// ext110.Options.AllowNonstandard. The dialects carry what they can
	// whatever it says.
	AllowNonstandard bool
}

// codec returns the ext110 options that carry out o.
func (o MessageOptions) codec() ext110.MessageOptions {
	c := ext110.MessageOptions{MaxDepth: o.MaxDepth, MaxSize: o.MaxSize, MaxExpansion: o.MaxExpansion, NoCopy: o.NoCopy}
	if !o.NoDialects {
		c.MapDecoder = dialectMap
	}
	switch {
	case o.Encoding != 0:
		c.ArrayEncoder, c.ArraySize = o.Encoding.Append, o.Encoding.Size
	case o.AllowNonstandard:
		c.ArrayEncoder = ext110.Options{AllowNonstandard: true}.Append
	}
	return c
}

// UnmarshalMessage decodes one whole msgpack message that fills data into
// v, as msgpack.Unmarshal would, with ext 110 values (and, unless
// NoDialects, the dialects' array maps) becoming *ndarray.Array, after the
// checks of ext110.MessageOptions.UnmarshalMessage.
//
// It fails as ext110.MessageOptions.UnmarshalMessage does, with an
// *ndarray.Error from package ext110 (ext110.ErrTooDeep, ErrMalformed, or
// the shared ndarray.ErrTruncated and ndarray.ErrTooLarge). A dialect's map
// that is not a valid array fails with package dialect's error instead
// (dialect.ErrMalformed, ErrPickle or ErrStructured, or
// ndarray.ErrTruncated), whose Offset is counted from the map's first
// byte.
func (o MessageOptions) UnmarshalMessage(data []byte, v any) error {
	return o.codec().UnmarshalMessage(data, v)
}

// MarshalMessage encodes v as msgpack, as msgpack.Marshal would, with arrays
// (*ndarray.Array and ndarray.Array values) written as o.Encoding says: ext
// 110 when it is zero, or maps of that dialect. It fails as
// ext110.MessageOptions.MarshalMessage does: an array o.Encoding's dialect
// cannot carry with the error of package dialect (ErrUnsupported,
// ErrStructured, ErrMalformed), one ext 110 cannot with ext110's
// (ErrNonstandard, ErrMalformed, ErrTooLarge), and a value msgpack cannot
// encode with the msgpack library's error, which matches no sentinel.
func (o MessageOptions) MarshalMessage(v any) ([]byte, error) {
	return o.codec().MarshalMessage(v)
}

// MessageDecoder reads whole msgpack messages back to back from an
// io.Reader, as ext110.MessageDecoder does, recognising the dialects' maps
// when its Options say so.
type MessageDecoder struct {
	// Options limit each message; set them before the first Decode.
	Options MessageOptions
	d       *ext110.MessageDecoder
}

// NewMessageDecoder returns a MessageDecoder that reads from r with the
// zero MessageOptions: ext 110 and both dialects recognised.
func NewMessageDecoder(r io.Reader) *MessageDecoder {
	return &MessageDecoder{d: ext110.NewMessageDecoder(r)}
}

// Decode reads the next message into v; at the end of the stream it
// returns io.EOF. See ext110.MessageDecoder.Decode. Otherwise it fails as
// that does, with the dialects' errors as UnmarshalMessage has them.
func (d *MessageDecoder) Decode(v any) error {
	d.d.Options = d.Options.codec()
	return d.d.Decode(v)
}

// dialectMap is the MapDecoder that finds the dialects' arrays: a map
// whose first key is a marker, or (a sender that puts the marker later) a
// map of 3 to 16 entries with a marker among its keys.
func dialectMap(msg []byte) (any, int, error) {
	if !dialect.IsArray(msg) && !dialect.HasMarker(msg) {
		return nil, 0, nil
	}
	h, err := dialect.DecodeHeader(msg)
	if err != nil {
		return nil, 0, err
	}
	if h.Scalar != nil {
		return h.Scalar, h.Len, nil
	}
	data := append([]byte{}, msg[h.DataOffset:h.DataOffset+h.DataLen]...) // no clearing before the copy
	return &ndarray.Array{DType: h.DType, Shape: h.Shape, Data: data}, h.Len, nil
}
