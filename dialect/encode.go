package dialect

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/ndpack/ndpack/internal/mpdescr"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// Marshal returns a encoded as a map of dialect d. It fails with an error
// matching ndarray.ErrMalformed for an Array that is nil or not valid (wrapping
// Validate's ndarray error) or of a subarray dtype, ErrStructured for a
// record in OpenPI, or ErrUnsupported for what the dialect's packer refuses
// (OpenPI: complex and void arrays; msgpack-numpy: datetimes, timedeltas
// and records whose fields overlap) or a d that is neither dialect.
func (d Dialect) Marshal(a *ndarray.Array) ([]byte, error) { return d.Append(nil, a) }

// Append appends a encoded as a map of dialect d to dst, growing it at most
// once, to the exact size. It fails as Marshal does, and then returns dst
// unchanged.
func (d Dialect) Append(dst []byte, a *ndarray.Array) ([]byte, error) {
	l, err := d.layoutOfArray(a)
	if err != nil {
		return dst, err
	}
	dst = slices.Grow(dst, len(l.prefix)+len(a.Data)+len(l.suffix))
	return append(append(append(dst, l.prefix...), a.Data...), l.suffix...), nil
}

// Size returns the length of a encoded as a map of dialect d, as Append
// would write it, without writing it: a message holding the array can be
// sized before any of it is copied. It fails as Marshal does.
func (d Dialect) Size(a *ndarray.Array) (int, error) {
	l, err := d.layoutOfArray(a)
	if err != nil {
		return 0, err
	}
	return len(l.prefix) + len(a.Data) + len(l.suffix), nil
}

// layoutOfArray checks a and lays out its map.
func (d Dialect) layoutOfArray(a *ndarray.Array) (layout, error) {
	if a == nil {
		return layout{}, errAt(errMalformed, -1, "cannot encode a nil *ndarray.Array")
	}
	if err := a.Validate(); err != nil {
		return layout{}, wrapAt(errMalformed, -1, err)
	}
	return d.layout(a.DType, a.Shape, len(a.Data))
}

// layout is an encoded map split around its data bytes, so that the data
// can be written without a copy.
type layout struct{ prefix, suffix []byte }

// Keys as msgpack-python packs Python bytes with use_bin_type=True.
var (
	keyND      = []byte("\xc4\x02nd")
	keyType    = []byte("\xc4\x04type")
	keyKind    = []byte("\xc4\x04kind")
	keyShape   = []byte("\xc4\x05shape")
	keyData    = []byte("\xc4\x04data")
	keyNDArray = []byte("\xc4\x0b__ndarray__")
	keyDType   = []byte("\xc4\x05dtype")
)

func (d Dialect) layout(dt ndarray.DType, shape []int, dataLen int) (layout, error) {
	if err := d.check(dt); err != nil {
		return layout{}, err
	}
	if uint64(dataLen) > math.MaxUint32 {
		// msgpack's bin32 holds 2^32-1 bytes; a longer length would be cut
		// to 32 bits and the map would lie about its data.
		return layout{}, errAt(ndarray.ErrTooLarge, -1, "%d bytes of data, more than the 4294967295 a msgpack bin holds", dataLen)
	}
	typestr, _ := dt.AppendText(nil)
	var l layout
	switch d {
	case MsgpackNumpy:
		p := append([]byte{0x85}, keyND...)
		p = append(p, 0xc3)
		if dt.Kind == 'V' {
			// msgpack-numpy sends every void array, record or not, as
			// kind b'V' and numpy's dtype.descr for its type.
			var err error
			if p, err = mpdescr.Append(append(p, keyType...), dt); err != nil {
				return layout{}, &ndarray.Error{Pkg: "dialect", Err: ErrUnsupported, Offset: -1, Detail: "msgpack-numpy cannot send the record dtype " + dt.String(), Cause: err}
			}
			p = append(append(p, keyKind...), 0xc4, 0x01, 'V')
		} else {
			p = mpwire.AppendStringFromBytes(append(p, keyType...), typestr)
			p = append(append(p, keyKind...), 0xc4, 0x00)
		}
		p = appendShape(append(p, keyShape...), shape)
		l.prefix = mpwire.AppendBinHeader(append(p, keyData...), dataLen)
	case OpenPI:
		p := append([]byte{0x84}, keyNDArray...)
		p = append(p, 0xc3)
		l.prefix = mpwire.AppendBinHeader(append(p, keyData...), dataLen)
		s := mpwire.AppendStringFromBytes(append([]byte{}, keyDType...), typestr)
		l.suffix = appendShape(append(s, keyShape...), shape)
	default:
		return layout{}, errAt(ErrUnsupported, -1, "unknown dialect %d", int(d))
	}
	return l, nil
}

// check refuses what the dialect's own packer refuses.
func (d Dialect) check(dt ndarray.DType) error {
	if err := dt.Validate(); err != nil {
		return wrapAt(errMalformed, -1, err)
	}
	switch {
	case dt.IsSubarray():
		return errAt(errMalformed, -1, "cannot encode an array of the subarray dtype %s: fold its shape into the array's", dt)
	case d == OpenPI && dt.IsRecord():
		return errAt(ErrStructured, -1, "OpenPI cannot carry the record dtype %s: its map has a typestr only, and its packer refuses kind V", dt)
	case d == OpenPI && dt.Kind == 'V':
		return errAt(ErrUnsupported, -1, "OpenPI cannot carry void (V) arrays (%s): its packer refuses kind V", dt)
	case d == OpenPI && dt.Kind == 'c':
		return errAt(ErrUnsupported, -1, "OpenPI's packer refuses complex arrays (%s)", dt)
	case d == MsgpackNumpy && hasTime(dt):
		return errAt(ErrUnsupported, -1, "msgpack-numpy cannot send %s arrays (numpy refuses datetimes and timedeltas as a buffer)", dt)
	}
	return nil
}

// hasTime reports whether dt is, or has a field anywhere that is, a
// datetime or timedelta.
func hasTime(dt ndarray.DType) bool {
	if base, _, ok := dt.Subarray(); ok {
		return hasTime(base)
	}
	for _, f := range dt.Fields() {
		if hasTime(f.DType) {
			return true
		}
	}
	return dt.Kind == 'M' || dt.Kind == 'm'
}

// Encoder writes arrays as maps of one dialect, back to back, to an
// io.Writer, handing the data to the writer without a copy.
type Encoder struct {
	d Dialect
	w io.Writer
}

// NewEncoder returns an Encoder writing maps of dialect d to w.
func NewEncoder(w io.Writer, d Dialect) *Encoder { return &Encoder{d: d, w: w} }

// Encode writes a. It fails as Dialect.Marshal does, before writing
// anything, or with the writer's error as it is.
func (e *Encoder) Encode(a *ndarray.Array) error {
	if a == nil {
		return errAt(errMalformed, -1, "cannot encode a nil *ndarray.Array")
	}
	if err := a.Validate(); err != nil {
		return wrapAt(errMalformed, -1, err)
	}
	return e.EncodeFrom(a.DType, a.Shape, &sized{a.Data})
}

// EncodeFrom writes an array of dtype dt and the given shape whose
// row-major data is read from r: exactly the shape's byte count is copied,
// so memory does not grow with the array. It fails with an error matching
// ndarray.ErrMalformed when dt is not valid or shape has no byte count, as
// Dialect.Marshal does for the dtype otherwise (before writing anything),
// or with the writer's or r's error as it is; when r ends early the error
// matches io.ErrUnexpectedEOF (not ndarray.ErrTruncated, which is for input being
// decoded). After a read or write error the stream holds part of a map.
func (e *Encoder) EncodeFrom(dt ndarray.DType, shape []int, r io.Reader) error {
	n, err := ndarray.ByteSize(dt, shape)
	if err != nil {
		return wrapAt(errMalformed, -1, err)
	}
	l, err := e.d.layout(dt, shape, n)
	if err != nil {
		return err
	}
	if _, err := e.w.Write(l.prefix); err != nil {
		return err
	}
	copied, err := io.CopyN(e.w, r, int64(n))
	if err == io.EOF {
		return fmt.Errorf("dialect: the data source ended after %d of %d bytes: %w", copied, n, io.ErrUnexpectedEOF)
	}
	if err != nil {
		return err
	}
	_, err = e.w.Write(l.suffix)
	return err
}

// sized is an array's data as a reader.
type sized struct{ b []byte }

func (s *sized) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// WriteTo hands the data to w in one Write, without a copy.
func (s *sized) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(s.b)
	s.b = s.b[n:]
	return int64(n), err
}

// appendShape appends the shape as msgpack-python packs a tuple of ints.
func appendShape(b []byte, shape []int) []byte {
	b = mpwire.AppendArrayHeader(b, len(shape))
	for _, d := range shape {
		b = mpwire.AppendUint(b, uint64(d))
	}
	return b
}
