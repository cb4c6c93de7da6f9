package ext110

import (
	"fmt"
	"math"
	"slices"

	"github.com/ndpack/ndpack/internal/mpdescr"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// ExtType is the msgpack extension type code of YEP-110 arrays ('n').
const ExtType = 110

// maxPayload is the largest ext payload msgpack can frame (ext32).
const maxPayload = math.MaxUint32

// Options controls encoding. The zero value is the default.
type Options struct {
	// AllowNonstandard lets arrays of NumPy kinds outside YEP-110's
	// standard list (S, U, V, M8, m8) be encoded. The reference Python
	// peers read them, but the YEP discourages sending them. Records
	// (structured dtypes, kind V) are among them: they are written as the
	// reference pack_ndarray writes them, with a descr key, which the
	// reference's own ext_hook cannot read (see the package doc).
	AllowNonstandard bool
}

// Size returns the exact length of the ext 110 encoding of a. It fails,
// with an error matching ndarray.ErrMalformed or ndarray.ErrTooLarge, where Marshal with
// AllowNonstandard would.
func Size(a *ndarray.Array) (int, error) {
	l, err := Options{AllowNonstandard: true}.layoutOf(a)
	return l.total, err
}

// Marshal returns the ext 110 encoding of a. It fails with an error
// matching ndarray.ErrNonstandard for a dtype outside the standard kinds without
// AllowNonstandard, ndarray.ErrMalformed for an Array that is not valid (wrapping
// Validate's ndarray error), a subarray dtype or a record whose fields
// overlap, or ndarray.ErrTooLarge when the payload would pass 2^32-1 bytes, the most an ext32 header can frame.
func (o Options) Marshal(a *ndarray.Array) ([]byte, error) {
	l, err := o.layoutOf(a)
	if err != nil {
		return nil, err
	}
	return l.appendTo(make([]byte, 0, l.total), a.Data), nil
}

// Marshal returns the ext 110 encoding of a with the zero Options (the
// standard kinds alone): Options{}.Marshal, beside Unmarshal.
// It fails as Options.Marshal does.
func Marshal(a *ndarray.Array) ([]byte, error) { return Options{}.Marshal(a) }

// Append appends the ext 110 encoding of a to dst and returns the extended
// slice; dst is grown at most once, to the exact size. It fails as Marshal
// does, and then returns dst unchanged.
func (o Options) Append(dst []byte, a *ndarray.Array) ([]byte, error) {
	l, err := o.layoutOf(a)
	if err != nil {
		return dst, err
	}
	return l.appendTo(slices.Grow(dst, l.total), a.Data), nil
}

// layout is an encoded object split around its data bytes: the canonical
// key order puts data first, so the encoding is prefix, data, suffix. The
// split lets streams write the data without copying it.
type layout struct {
	ts      [32]byte // the typestr, held by value so a layout needs no allocation
	tsLen   int
	descr   []byte // a record's descr list, encoded; nil for a plain dtype
	shape   []int
	dataLen int
	payload int // ext payload length
	total   int // whole object, ext header included
}

// layoutOf validates a against the options and sizes its encoding.
func (o Options) layoutOf(a *ndarray.Array) (layout, error) {
	if err := a.Validate(); err != nil {
		return layout{}, newError(errMalformed, -1, "cannot encode", err)
	}
	return o.layoutFor(a.DType, a.Shape, len(a.Data))
}

// layoutFor sizes the encoding of an array of the given dtype and shape
// with dataLen data bytes, which the caller has checked.
func (o Options) layoutFor(dt ndarray.DType, shape []int, dataLen int) (layout, error) {
	if dt.IsSubarray() {
		return layout{}, newError(errMalformed, -1, fmt.Sprintf("cannot encode an array of the subarray dtype %s: fold its shape into the array's", dt), nil)
	}
	if dt.IsRecord() && !o.AllowNonstandard {
		return layout{}, nonstandard(fmt.Sprintf("the record dtype %s is outside YEP-110's standard kinds (b, i, u, f, c), and the YEP's reference ext_hook cannot read it; it is sent only when allowed", dt))
	}
	if !dt.IsStandard() && !o.AllowNonstandard {
		return layout{}, nonstandard(fmt.Sprintf("%s is outside YEP-110's standard kinds (b, i, u, f, c); it is sent only when allowed", dt))
	}
	l := layout{shape: shape, dataLen: dataLen}
	ts, _ := dt.AppendText(l.ts[:0])
	l.tsLen = len(ts)
	// The payload map: map header and the four keys with their values.
	n := 1 + len("\xa4data") + mpwire.BinHeaderSize(dataLen) + dataLen +
		len("\xa7typestr") + mpwire.StringHeaderSize(l.tsLen) + l.tsLen +
		len("\xa5shape") + mpwire.ArrayHeaderSize(len(shape)) +
		len("\xa7version") + 1
	for _, d := range shape {
		n += mpwire.UintSize(uint64(d))
	}
	if dt.IsRecord() {
		// A record's typestr is only |V<itemsize>: its fields travel in a
		// descr key, always, even where the reference drops a one-entry
		// descr (a record of one field would otherwise arrive as opaque
		// bytes).
		descr, err := mpdescr.Append(nil, dt)
		if err != nil {
			return layout{}, newError(errMalformed, -1, "cannot encode the record dtype "+dt.String(), err)
		}
		l.descr = descr
		n += len("\xa5descr") + len(descr)
	}
	if uint64(n) > maxPayload {
		return layout{}, newError(ndarray.ErrTooLarge, -1, fmt.Sprintf("payload of %d bytes exceeds the ext32 limit of %d", n, uint64(maxPayload)), nil)
	}
	l.payload = n
	l.total = mpwire.ExtHeaderSize(n) + n
	return l, nil
}

func (l layout) appendTo(b []byte, data []byte) []byte {
	b = l.appendPrefix(b)
	b = append(b, data...)
	return l.appendSuffix(b)
}

// appendPrefix appends everything before the data bytes.
func (l layout) appendPrefix(b []byte) []byte {
	b = mpwire.AppendExtHeader(b, ExtType, l.payload)
	if l.descr != nil {
		b = append(b, 0x85)
	} else {
		b = append(b, 0x84)
	}
	b = append(b, 0xa4, 'd', 'a', 't', 'a')
	return mpwire.AppendBinHeader(b, l.dataLen)
}

// appendSuffix appends everything after the data bytes. The reference
// writes numpy's __array_interface__ dict, whose descr comes after data and
// before typestr.
func (l layout) appendSuffix(b []byte) []byte {
	if l.descr != nil {
		b = append(append(b, "\xa5descr"...), l.descr...)
	}
	b = append(b, "\xa7typestr"...)
	b = mpwire.AppendStringFromBytes(b, l.ts[:l.tsLen])
	b = append(b, "\xa5shape"...)
	b = mpwire.AppendArrayHeader(b, len(l.shape))
	for _, d := range l.shape {
		b = mpwire.AppendUint(b, uint64(d))
	}
	return append(b, "\xa7version\x03"...)
}
