package ext110

import (
	"bufio"
	"fmt"
	"io"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/ndarray"
)

// MessageOptions are the limits a whole message is checked against before
// the msgpack library decodes it. The zero value is the default.
type MessageOptions struct {
	// MaxDepth bounds how deeply arrays and maps nest: a top-level map is
	// at depth 1, an array inside it at depth 2. Zero means 512: real
	// messages nest a handful of levels; the msgpack library recurses once
	// per level, and a few million levels overflow the Go stack, which
	// kills the process.
	MaxDepth int
	// MaxSize bounds one message in bytes. Zero means no limit for
	// UnmarshalMessage, whose input is already in memory, and
	// DefaultMaxSize for a MessageDecoder, which would otherwise
	// read without end.
	MaxSize int64
	// MaxExpansion bounds the memory that decoding may allocate, as
	// estimated for decoding into interface values, as a multiple of the
	// message's size plus 4 MiB. Zero means 48. Ordinary
	// data stays well under it (a list of small integers costs 16 bytes an
	// item, the most of any real data); a message of one-entry maps would
	// cost 117 times its size, and is refused with ndarray.ErrTooLarge.
	MaxExpansion int
	// MapDecoder, when set, is offered every map that decoding into an
	// interface value meets, as the bytes from the map's first byte to the
	// end of the message. It returns the value the map stands for and the
	// bytes that value took, or n == 0 to leave the map to the msgpack
	// library. ext110 itself knows only ext 110; a package above the codecs
	// uses this to find other array encodings in the same message
	// (package ndpack's MessageOptions.Dialects).
	MapDecoder func(msg []byte) (v any, n int, err error)
	// ArrayEncoder, when set, writes each array (*ndarray.Array or
	// ndarray.Array) that MarshalMessage meets by appending its encoding to
	// dst, instead of as ext 110. It must append exactly one msgpack value.
	ArrayEncoder func(dst []byte, a *ndarray.Array) ([]byte, error)
	// ArraySize, with ArrayEncoder, returns the exact length ArrayEncoder
	// appends for a, so that MarshalMessage sizes the message without
	// encoding its arrays twice.
	ArraySize func(a *ndarray.Array) (int, error)
	// NoCopy makes the ext 110 arrays that UnmarshalMessage decodes alias
	// the message's bytes instead of copying them, which costs nothing
	// whatever their size; the caller must then not change or reuse the
	// bytes while the arrays are in use. An array whose data lies in the
	// message misaligned for its items (see ndarray.Array.Aligned) is
	// copied once, aligned, instead: typed access then never copies it.
	NoCopy bool
}

func (o MessageOptions) limits() mpwalk.Limits {
	l := mpwalk.Limits{MaxDepth: o.MaxDepth, MaxExpansion: o.MaxExpansion}
	if l.MaxDepth <= 0 {
		l.MaxDepth = mpwalk.DefaultMaxDepth
	}
	if l.MaxExpansion <= 0 {
		l.MaxExpansion = mpwalk.DefaultMaxExpansion
	}
	return l
}

// UnmarshalMessage decodes one whole msgpack message that fills data into v,
// as msgpack.Unmarshal(data, v) would, with ext 110 values becoming
// *ndarray.Array (owning their data).
//
// Before the msgpack library sees the bytes, the message is walked without
// recursion: every claimed length and count is checked against the bytes
// that remain (ndarray.ErrTruncated), nesting against MaxDepth (ErrTooDeep), the
// size against MaxSize and the memory decoding would take against
// MaxExpansion (ndarray.ErrTooLarge), and bytes after the message are
// refused (ErrMalformed). msgpack/v5 alone sizes slices and maps from
// claimed counts and recurses once per level, so five hostile bytes can ask
// it for gigabytes and a deep message overflows the stack; after the walk,
// what it allocates is bounded by the bytes the message really holds.
//
// An ext 110 object that does not decode fails as Unmarshal does (its
// Offset counts from the payload's first byte, not the message's), a value
// that does not fit v fails with ErrMalformed wrapping the msgpack
// library's error, and MapDecoder's errors are returned as they are.
// errors.As finds the *ndarray.Error of all others.
func (o MessageOptions) UnmarshalMessage(data []byte, v any) error {
	if o.MaxSize > 0 && int64(len(data)) > o.MaxSize {
		return newError(ndarray.ErrTooLarge, -1, fmt.Sprintf("message of %d bytes exceeds the limit of %d", len(data), o.MaxSize), nil)
	}
	n, err := mpwalk.Len(data, o.limits())
	if err != nil {
		return walkError(err, 0)
	}
	if n != len(data) {
		return errAt(ErrMalformed, n, "%s after the message", codecerr.Count(len(data)-n, "byte"))
	}
	return o.decodeMessage(data, v)
}

func (o MessageOptions) decodeMessage(data []byte, v any) error {
	// Through a reader of the message's own bytes, so that each array is
	// copied once, aligned, from where it lies (or not at all, NoCopy).
	return decodeFromSlice(data, v, o.MapDecoder, o.NoCopy)
}

// walkClasses is how a message's walk fails in this package's terms.
var walkClasses = mpwalk.Classes{
	Invalid:     ErrMalformed,
	OverBudget:  ndarray.ErrTruncated,
	TooDeep:     ErrTooDeep,
	TooCostly:   ndarray.ErrTooLarge,
	Ended:       ndarray.ErrTruncated,
	EndedDetail: "input ended inside the message",
}

// walkError turns a walker's error into the package's, offsets counted from
// base; an error not the walker's (a reader's) is returned as it is.
func walkError(err error, base int64) error {
	f := walkClasses.Classify(err)
	switch f.Kind {
	case mpwalk.NotWalk:
		return err
	case mpwalk.TooDeep: // the offset is the error's, not repeated in its words
		return newError(f.Class, base+f.Offset, fmt.Sprintf("arrays and maps nest more than %d deep", f.Limit), nil)
	}
	return newError(f.Class, -1, f.Detail, nil)
}

// MessageDecoder reads whole msgpack messages back to back from an
// io.Reader, as a stream with no other framing carries them, checking each
// as UnmarshalMessage does before it is decoded. It reads through its own
// buffer, so it may consume bytes of r beyond the last message it returns.
type MessageDecoder struct {
	// Options limit each message; set them before the first Decode.
	Options MessageOptions
	r       *bufio.Reader
	off     int64            // bytes consumed, for error offsets
	chunks  boundedio.Chunks // large payloads arrive here first, reused
}

// NewMessageDecoder returns a MessageDecoder that reads from r.
func NewMessageDecoder(r io.Reader) *MessageDecoder { return &MessageDecoder{r: buffered(r)} }

// Decode reads the next message into v. At the end of the stream it returns
// io.EOF. A message over the size limit fails with ndarray.ErrTooLarge as soon as a
// length claims more than the limit leaves, before it is read: memory grows
// only with the bytes received. After any error other than a decoding error
// of a well-formed message, the stream cannot be resynchronised. Otherwise
// it fails as UnmarshalMessage does, with ndarray.ErrTruncated when the stream ends
// inside a message, or with the reader's error as it is.
func (d *MessageDecoder) Decode(v any) error {
	max := d.Options.MaxSize
	if max <= 0 {
		max = ndarray.DefaultMaxSize
	}
	start := d.off
	raw, err := mpwalk.ReadInto(nil, d.r, &d.chunks, max, d.Options.limits())
	d.off += int64(len(raw))
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		if f := walkClasses.Classify(err); f.Kind == mpwalk.OverBudget {
			return newError(ndarray.ErrTooLarge, start, fmt.Sprintf("message exceeds the limit of %d bytes: %s", max, f.Detail), nil)
		}
		return walkError(err, start)
	}
	return d.Options.decodeMessage(raw, v)
}
