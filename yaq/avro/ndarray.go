package avro

import (
	"errors"
	"fmt"
	"math"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// ArraySchema is the Avro schema of the YEP-113 ndarray record, as yaq
// daemons declare it in their protocols.
const ArraySchema = `{"type": "record", "name": "ndarray", "logicalType": "ndarray", "fields": [` +
	`{"name": "shape", "type": {"type": "array", "items": "int"}}, {"name": "typestr", "type": "string"}, ` +
	`{"name": "data", "type": "bytes"}, {"name": "version", "type": "int"}]}`

// arrayVersion is the array interface version the record carries.
const arrayVersion = 3

// ArrayOptions controls encoding. The zero value is the default.
type ArrayOptions struct {
	// AllowNonstandard lets arrays of NumPy kinds outside YEP-110's
	// standard list (S, U, V, M8, m8) be encoded; yaq daemons read them
	// with numpy, but the standard leaves them out.
	AllowNonstandard bool
}

// AppendArray appends the ndarray record of a to dst, growing dst at most
// once, to the exact size. An array of a record (structured) dtype is
// refused whatever the options, with ErrDoesNotFit: the record has no
// place for its fields.
func (o ArrayOptions) AppendArray(dst []byte, a *ndarray.Array) ([]byte, error) {
	room := 1 // the version
	if a != nil {
		room += len(a.Data)
	}
	dst, err := o.appendArrayHead(dst, a, room)
	if err != nil {
		return dst, err
	}
	dst = append(dst, a.Data...)
	return appendVarint(dst, arrayVersion), nil
}

// appendArrayHead checks a and appends its record up to the data's length:
// what comes before the data, which the caller appends or sends from where
// it lies, followed by the version. room is how much more the caller will
// append, so that dst grows once.
func (o ArrayOptions) appendArrayHead(dst []byte, a *ndarray.Array, room int) ([]byte, error) {
	if a == nil {
		return dst, errAt(errMalformed, -1, "cannot encode a nil *ndarray.Array")
	}
	if err := a.Validate(); err != nil {
		return dst, &ndarray.Error{Pkg: "avro", Err: errMalformed, Offset: -1, Cause: err}
	}
	if !a.DType.IsPlain() {
		// Its typestr alone (|V<n>) would arrive as opaque bytes, every
		// field's name and type lost.
		return dst, errAt(ErrDoesNotFit, -1, "the record dtype %s cannot be carried by YEP-113's ndarray record, which has a typestr and no descr", a.DType)
	}
	if !a.DType.IsStandard() && !o.AllowNonstandard {
		return dst, &ndarray.Error{Pkg: "avro", Err: ndarray.ErrNonstandard, Offset: -1, Option: "ArrayOptions.AllowNonstandard",
			Detail: fmt.Sprintf("%s is outside YEP-110's standard kinds (b, i, u, f, c); it is sent only when allowed", a.DType)}
	}
	for i, d := range a.Shape {
		if d > math.MaxInt32 {
			return dst, errAt(errMalformed, -1, "dimension %d (%d) does not fit Avro's int", i, d)
		}
	}
	var ts [24]byte
	typestr, _ := a.DType.AppendText(ts[:0])
	size := 0
	if len(a.Shape) > 0 {
		size += varintLen(int64(len(a.Shape)))
		for _, d := range a.Shape {
			size += varintLen(int64(d))
		}
	}
	size += 1 + varintLen(int64(len(typestr))) + len(typestr) + varintLen(int64(len(a.Data))) + room
	if cap(dst)-len(dst) < size {
		// Room for what may follow the record in a message, so that a few
		// more bytes do not make a large buffer double.
		grown := make([]byte, len(dst), len(dst)+size+min(size/8, 4096))
		copy(grown, dst)
		dst = grown
	}
	if len(a.Shape) > 0 { // one block of items, then the end of the array
		dst = appendVarint(dst, int64(len(a.Shape)))
		for _, d := range a.Shape {
			dst = appendVarint(dst, int64(d))
		}
	}
	dst = append(dst, 0)
	dst = appendVarint(dst, int64(len(typestr)))
	dst = append(dst, typestr...)
	return appendVarint(dst, int64(len(a.Data))), nil
}

// DecodeArray decodes the ndarray record at the start of b and returns the
// array and the number of bytes it took. The array's Data aliases b, which
// must not change while the array is in use; Clone it to keep it apart.
// Every length is checked against the bytes that remain before it is used.
// Any version is accepted, as YEP-110 asks of readers; data whose length is
// not shape times item size, a negative dimension and a typestr ndarray
// does not know are refused.
// It fails with an *ndarray.Error wrapping ndarray.ErrTruncated when b ends inside the
// record, and ndarray.ErrMalformed for anything else it refuses.
func DecodeArray(b []byte) (*ndarray.Array, int, error) {
	r := reader{b: b}
	var shape []int
	for {
		blockAt := r.off
		n, err := r.blockCount("shape", -1)
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			break
		}
		if n > int64(ndarray.MaxDims-len(shape)) {
			return nil, 0, errAt(errMalformed, blockAt, "shape claims %d more dimensions after %d (NumPy allows %d)", n, len(shape), ndarray.MaxDims)
		}
		if n > int64(len(b)-r.off) {
			return nil, 0, errAt(ndarray.ErrTruncated, blockAt, "shape claims %d more dimensions, %d bytes remain", n, len(b)-r.off)
		}
		for i := int64(0); i < n; i++ {
			dimAt := r.off
			d, err := r.varint("dimension")
			if err != nil {
				return nil, 0, err
			}
			if d < 0 || d > math.MaxInt32 {
				return nil, 0, errAt(errMalformed, dimAt, "dimension %d is %d, outside 0 .. 2^31-1", len(shape), d)
			}
			shape = append(shape, int(d))
		}
	}
	if shape == nil {
		shape = []int{}
	}
	tsAt := r.off
	typestr, err := r.bytes("typestr")
	if err != nil {
		return nil, 0, err
	}
	dt, err := ndarray.ParseTypestr(string(typestr))
	if errors.Is(err, ndarray.ErrObject) {
		return nil, 0, errAt(errMalformed, tsAt, "typestr %q is an object array (pickle), which is never read", typestr)
	}
	if err != nil {
		return nil, 0, &ndarray.Error{Pkg: "avro", Err: errMalformed, Offset: int64(tsAt), Cause: err}
	}
	dataAt := r.off
	data, err := r.bytes("data")
	if err != nil {
		return nil, 0, err
	}
	if _, err := r.varint("version"); err != nil {
		return nil, 0, err
	}
	a := &ndarray.Array{DType: dt, Shape: shape, Data: data}
	if err := a.Validate(); err != nil {
		return nil, 0, &ndarray.Error{Pkg: "avro", Err: errMalformed, Offset: int64(dataAt), Cause: err}
	}
	return a, r.off, nil
}

// reader reads Avro's binary encoding from a byte slice.
type reader struct {
	b   []byte
	off int
}

// varint reads a zigzag-encoded long.
func (r *reader) varint(what string) (int64, error) { return r.varintOf(what, "") }

// varintOf reads a varint named what+suffix in errors, joined only when
// there is an error to say.
func (r *reader) varintOf(what, suffix string) (int64, error) {
	var u uint64
	for shift := uint(0); ; shift += 7 {
		if r.off >= len(r.b) {
			return 0, errAt(ndarray.ErrTruncated, r.off, "the input ends inside %s%s", what, suffix)
		}
		if shift >= 64 {
			return 0, errAt(errMalformed, r.off, "%s%s is a varint longer than 10 bytes", what, suffix)
		}
		c := r.b[r.off]
		r.off++
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			break
		}
	}
	return int64(u>>1) ^ -int64(u&1), nil
}

// blockCount reads the count of a block of an array's or a map's items and
// returns it as a positive number, or 0 at the end of the items. A
// negative count is followed by the block's size in bytes, which is read
// and checked against the bytes that remain, and, when max is not -1,
// against the max bytes the value may take; -2^63, which has no positive
// counterpart, is refused rather than negated.
func (r *reader) blockCount(what string, max int) (int64, error) {
	at := r.off
	n, err := r.varintOf(what, " block count")
	if err != nil || n >= 0 {
		return n, err
	}
	if n == math.MinInt64 {
		return 0, errAt(errMalformed, at, "%s block count is -2^63, which no number of items is", what)
	}
	sizeAt := r.off
	size, err := r.varintOf(what, " block size")
	if err != nil {
		return 0, err
	}
	if size < 0 {
		return 0, errAt(errMalformed, sizeAt, "%s block of %s claims a negative size (%d bytes)", what, codecerr.Count(-n, "item"), size)
	}
	if max >= 0 && size > int64(max-r.off) {
		return 0, errAt(ndarray.ErrTooLarge, sizeAt, "%s block of %s claims %s, more than the %d a value may take", what, codecerr.Count(-n, "item"), codecerr.Count(size, "byte"), max)
	}
	if size > int64(len(r.b)-r.off) {
		return 0, errAt(ndarray.ErrTruncated, sizeAt, "%s block of %s claims %s, %s", what, codecerr.Count(-n, "item"), codecerr.Count(size, "byte"), codecerr.Remain(len(r.b)-r.off, ""))
	}
	return -n, nil
}

// bytes reads a length and that many bytes, as a slice of the input.
func (r *reader) bytes(what string) ([]byte, error) {
	at := r.off
	n, err := r.varintOf(what, " length")
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, errAt(errMalformed, at, "%s has a negative length (%d)", what, n)
	}
	if n > int64(len(r.b)-r.off) {
		return nil, errAt(ndarray.ErrTruncated, at, "%s claims %d bytes, %d remain", what, n, len(r.b)-r.off)
	}
	s := r.b[r.off : r.off+int(n) : r.off+int(n)]
	r.off += int(n)
	return s, nil
}

func appendVarint(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

func varintLen(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}
