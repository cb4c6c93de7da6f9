package ndpack

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/ndarray"
)

// MessageDecoder reads whole msgpack messages back to back from an
// io.Reader, as a stream with no other framing carries them, checking each
// as UnmarshalMessage does before it is decoded. It reads through its own
// buffer, so it may consume bytes of the reader beyond the last message it
// returns. Make one with NewMessageDecoder: the zero MessageDecoder reads
// from nothing, and its Decode fails.
type MessageDecoder struct {
	// Options limit each message and say how its arrays are read; set
	// them before the first Decode.
	Options MessageOptions
	r       *bufio.Reader
	off     int64            // bytes consumed, for error offsets
	chunks  boundedio.Chunks // large payloads arrive here first, reused
}

// NewMessageDecoder returns a MessageDecoder that reads from r with the
// zero MessageOptions: ext 110 and every dialect recognised, the default
// limits.
func NewMessageDecoder(r io.Reader) *MessageDecoder {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	return &MessageDecoder{r: br}
}

// errNoReader is what Decode on a MessageDecoder not made by
// NewMessageDecoder returns.
var errNoReader = errors.New("ndpack: the MessageDecoder reads from nothing: make one with NewMessageDecoder")

// Decode reads the next message into v. At the end of the stream it
// returns io.EOF. A message over Options.MaxSize fails with
// ndarray.ErrTooLarge as soon as a length claims more than the limit
// leaves, before it is read: memory grows only with the bytes received.
// After any error other than a decoding error of a well-formed message,
// the stream cannot be resynchronised. Otherwise it fails as
// UnmarshalMessage does, with ndarray.ErrTruncated when the stream ends
// inside a message (offsets counted from the first byte the MessageDecoder
// read), or with the reader's error as it is.
func (d *MessageDecoder) Decode(v any) error {
	if d.r == nil {
		return errNoReader
	}
	max := d.Options.maxSize()
	start := d.off
	raw, err := mpwalk.ReadInto(nil, d.r, &d.chunks, max, d.Options.limits())
	d.off += int64(len(raw))
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		if f := walkClasses.Classify(err); f.Kind == mpwalk.OverBudget {
			return &ndarray.Error{Pkg: "ndpack", Err: ndarray.ErrTooLarge, Offset: start, Option: "MessageOptions.MaxSize",
				Detail: fmt.Sprintf("message exceeds the limit of %d bytes: %s", max, f.Detail)}
		}
		return walkError(err, start)
	}
	return d.Options.decode(raw, v, nil)
}
