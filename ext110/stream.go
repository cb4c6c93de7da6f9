package ext110

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// Encoder writes ext 110 objects back to back to an io.Writer, as a
// msgpack stream carries them. Make one with NewEncoder: the zero Encoder
// writes to nothing, and its methods fail.
type Encoder struct {
	// Options apply to every Encode.
	Options Options
	w       io.Writer
	buf     []byte // the framing around the data, reused
}

// NewEncoder returns an Encoder that writes to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes the ext 110 encoding of a. The array's data is handed to the
// writer as it is, without a copy. It fails as Options.Marshal does, before
// writing anything, or with the writer's error as it is.
func (e *Encoder) Encode(a *ndarray.Array) error {
	if e.w == nil {
		return errNoWriter
	}
	l, err := e.Options.layoutOf(a)
	if err != nil {
		return err
	}
	return e.write(l, func() error { _, err := e.w.Write(a.Data); return err })
}

// EncodeFrom writes an ext 110 object for an array of dtype dt and the
// given shape whose row-major data is read from r: exactly the shape's byte
// count is copied with io.Copy, through r's own WriteTo when r is an
// io.WriterTo whose Len is exactly that count. It fails with an error
// matching ndarray.ErrMalformed when dt is not valid or shape has no byte count,
// as Options.Marshal does for the dtype otherwise (before writing
// anything), or with the writer's or r's error as it is; when r ends early
// the error matches io.ErrUnexpectedEOF (not ndarray.ErrTruncated, which is for
// input being decoded). After a read or write error the stream holds part
// of an object.
func (e *Encoder) EncodeFrom(dt ndarray.DType, shape []int, r io.Reader) error {
	if e.w == nil {
		return errNoWriter
	}
	if err := dt.Validate(); err != nil {
		return newError(errMalformed, -1, "cannot encode", err)
	}
	n, err := ndarray.ByteSize(dt, shape)
	if err != nil {
		return newError(errMalformed, -1, "cannot encode", err)
	}
	l, err := e.Options.layoutFor(dt, shape, n)
	if err != nil {
		return err
	}
	// A source that is already exactly the data (it reports Len) is
	// handed to io.Copy as it is, so that its own WriteTo can move the
	// bytes; anything else is limited to the data's length.
	src := io.LimitReader(r, int64(n))
	if sized, ok := r.(interface {
		io.Reader
		io.WriterTo
		Len() int
	}); ok && sized.Len() == n {
		src = sized
	}
	return e.write(l, func() error {
		copied, err := io.Copy(e.w, src)
		if err == nil && copied < int64(n) {
			err = fmt.Errorf("ext110: data source ended after %d of %d bytes: %w", copied, n, io.ErrUnexpectedEOF)
		}
		return err
	})
}

func (e *Encoder) write(l layout, writeData func() error) error {
	e.buf = l.appendPrefix(e.buf[:0])
	if _, err := e.w.Write(e.buf); err != nil {
		return err
	}
	if err := writeData(); err != nil {
		return err
	}
	e.buf = l.appendSuffix(e.buf[:0])
	_, err := e.w.Write(e.buf)
	return err
}

// Decoder reads ext 110 objects back to back from an io.Reader.
//
// It reads through its own buffer, so it may consume bytes of r beyond the
// last object it returns. Make one with NewDecoder: the zero Decoder reads
// from nothing, and its Decode fails.
type Decoder struct {
	// MaxSize bounds the payload of one object, which Decode reads into
	// memory; a larger one fails with ndarray.ErrTooLarge before it is
	// read. 0 means ndarray.DefaultMaxSize (64 MiB); no payload is longer
	// than 2^32-1 bytes, the most an ext32 header can frame.
	MaxSize int64
	r       *bufio.Reader
	off     int64 // bytes consumed, for error offsets
}

// NewDecoder returns a Decoder that reads from r.
func NewDecoder(r io.Reader) *Decoder { return &Decoder{r: buffered(r)} }

// What the methods of an Encoder or Decoder not made by NewEncoder or
// NewDecoder return.
var (
	errNoWriter = errors.New("ext110: the Encoder writes to nothing: make one with NewEncoder")
	errNoReader = errors.New("ext110: the Decoder reads from nothing: make one with NewDecoder")
)

// buffered returns r as a *bufio.Reader, wrapping it unless it is one.
func buffered(r io.Reader) *bufio.Reader {
	if br, ok := r.(*bufio.Reader); ok {
		return br
	}
	return bufio.NewReader(r)
}

// Decode reads the next ext 110 object. At the end of the stream it returns
// io.EOF; a stream that ends inside an object gives ndarray.ErrTruncated. The
// returned Array owns its data. Otherwise it fails as Unmarshal does
// (Offset counting from the first byte the Decoder read), with ndarray.ErrTooLarge
// for a payload over MaxSize, or with the reader's error as it is.
func (d *Decoder) Decode() (*ndarray.Array, error) {
	if d.r == nil {
		return nil, errNoReader
	}
	start := d.off
	c, err := d.r.ReadByte()
	if err != nil {
		return nil, err // io.EOF between objects is the clean end
	}
	head := mpwire.HeadOf(c)
	if head.Type != mpwire.ExtType {
		return nil, notExtError(c, int(start))
	}
	size := head.Size()
	var buf [6]byte
	h := buf[:size]
	h[0] = c
	got, err := io.ReadFull(d.r, h[1:])
	d.off += int64(1 + got)
	if err != nil {
		return nil, d.readError(err, d.off, "ext header")
	}
	typ, n, _, err := mpwire.ReadExtHeaderUnchecked(h)
	if err != nil {
		return nil, extHeaderError(err, int(start))
	}
	if typ != ExtType {
		return nil, extTypeError(typ, int(start)+size-1)
	}
	if limit := d.maxSize(); uint64(n) > uint64(limit) {
		return nil, &ndarray.Error{Pkg: "ext110", Err: ndarray.ErrTooLarge, Offset: start, Option: "Decoder.MaxSize",
			Detail: fmt.Sprintf("payload of %d bytes exceeds the limit of %d", n, limit)}
	}
	payload, err := boundedio.ReadFull(d.r, int(n))
	d.off += int64(len(payload))
	if err != nil {
		return nil, d.readError(err, d.off, "ext payload")
	}
	return decodePayload(payload, int(start)+size, true)
}

func (d *Decoder) readError(err error, at int64, what string) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return newError(ndarray.ErrTruncated, at, "stream ended inside the "+what, nil)
	}
	return err
}

func (d *Decoder) maxSize() int64 {
	if d.MaxSize > 0 {
		return min(d.MaxSize, maxPayload)
	}
	return ndarray.DefaultMaxSize
}
