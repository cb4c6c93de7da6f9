package ext110

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/mpdescr"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// Unmarshal decodes one ext 110 object that fills b exactly. The returned
// Array owns a copy of its data. It fails with an error matching
// ndarray.ErrNotArray when b does not start with an ext header of type 110,
// ndarray.ErrTruncated when b ends inside the object, ErrStrided for non-nil
// strides, ErrOffset for a non-zero offset, or ndarray.ErrMalformed when the
// payload is not a valid YEP-110 array map or bytes follow the object (a
// typestr, shape or data length that makes no array also matches ndarray's
// ErrDType, ErrShape or ErrDataLength); errors.As finds the *ndarray.Error, whose
// Offset is the byte at fault.
func Unmarshal(b []byte) (*ndarray.Array, error) { return unmarshal(b, false) }

// UnmarshalNoCopy is Unmarshal without the copy: the returned Array's Data
// aliases b, so b must not be modified while the Array is in use, and its
// cost does not depend on the size of the array, when the data lies in b
// aligned for its items (Array.Aligned). Data that does not is copied
// once, aligned, so that typed access (ndarray.Values) never copies it
// again. It fails as Unmarshal does.
func UnmarshalNoCopy(b []byte) (*ndarray.Array, error) { return unmarshal(b, true) }

func unmarshal(b []byte, alias bool) (*ndarray.Array, error) {
	p := parser{b: b}
	start, n, err := p.extHeader()
	if err != nil {
		return nil, err
	}
	if start+n != len(b) {
		return nil, errAt(errMalformed, start+n, "%s after the ext 110 object", codecerr.Count(len(b)-start-n, "byte"))
	}
	a, err := decodePayload(b[start:], start, alias)
	if err != nil || !alias {
		return a, err
	}
	return alignedAlias(a), nil
}

// Header describes an encoded ext 110 object without its data, like
// image.DecodeConfig: the dtype, the shape and where the data bytes lie.
type Header struct {
	DType      ndarray.DType // from typestr (and descr, for a record)
	Shape      []int         // empty for a 0-d array
	DataOffset int           // offset of the first data byte in the input
	DataLen    int           // number of data bytes, shape times item size
	Len        int           // length of the whole object
}

// DecodeHeader checks one ext 110 object at the start of b exactly as
// Unmarshal does, without copying its data, and returns where the data
// lies. Bytes after the object are allowed. Run over a memory-mapped file, it
// touches only the pages that hold the framing, so that the data can then be
// moved by other means (a kernel copy between files). It fails as Unmarshal
// does, but for bytes after the object.
func DecodeHeader(b []byte) (Header, error) {
	p := parser{b: b}
	start, n, err := p.extHeader()
	if err != nil {
		return Header{}, err
	}
	q := parser{b: b[start : start+n], base: start}
	a, err := q.arrayMap()
	if err != nil {
		return Header{}, err
	}
	return Header{DType: a.DType, Shape: a.Shape, DataOffset: start + q.dataOff, DataLen: len(a.Data), Len: start + n}, nil
}

// decodePayload decodes an ext 110 payload (the map) that fills b; base is
// its offset in the caller's input, for error messages.
func decodePayload(b []byte, base int, alias bool) (*ndarray.Array, error) {
	p := parser{b: b, base: base}
	a, err := p.arrayMap()
	if err != nil {
		return nil, err
	}
	if !alias {
		a.Data = append(make([]byte, 0, len(a.Data)), a.Data...)
	}
	return a, nil
}

// alignedAlias makes a's data, which aliases the caller's input, aligned
// for its items, in place: left where it is if it is, else copied once (a
// new heap block starts at a multiple of 8, or of the item's size when
// smaller). It returns a.
func alignedAlias(a *ndarray.Array) *ndarray.Array {
	if !a.Aligned() {
		a.Data = append([]byte(nil), a.Data...)
	}
	return a
}

// parser reads msgpack from a byte slice through mpwire, whose reads check
// every length against the bytes that remain, so no length from the input
// is used before it is known to fit.
type parser struct {
	b       []byte
	off     int
	base    int // offset of b in the whole input, for error messages
	dataOff int // where arrayMap found the data bytes, relative to b
}

func (p *parser) pos() int { return p.base + p.off }

func (p *parser) truncated(what string, need int) error {
	return errAt(ndarray.ErrTruncated, p.pos(), "%s needs %s, %s", what, codecerr.Count(need, "byte"), codecerr.Remain(len(p.b)-p.off, ""))
}

func (p *parser) byte(what string) (byte, error) {
	if p.off >= len(p.b) {
		return 0, p.truncated(what, 1)
	}
	c := p.b[p.off]
	p.off++
	return c, nil
}

// extHeader reads an ext header of type 110 and returns the offset and the
// length of its payload, which is known to fit in the input.
func (p *parser) extHeader() (start, n int, err error) {
	at := p.pos()
	typ, l, rest, err := mpwire.ReadExtHeaderUnchecked(p.b[p.off:])
	if err != nil {
		return 0, 0, extHeaderError(err, at)
	}
	p.next(rest)
	if typ != ExtType {
		return 0, 0, extTypeError(typ, p.pos()-1)
	}
	if int64(l) > int64(len(rest)) {
		return 0, 0, errAt(ndarray.ErrTruncated, at, "ext header claims a %d-byte payload, %d bytes remain", l, len(rest))
	}
	return p.pos(), int(l), nil
}

// extHeaderError words a failure to read an ext header found at offset at.
func extHeaderError(err error, at int) error {
	e, ok := err.(*mpwire.Error)
	switch {
	case !ok:
		return err
	case e.Err == mpwire.ErrType:
		return notExtError(e.Byte, at)
	}
	return errAt(ndarray.ErrTruncated, at, "ext header needs %s, %s", codecerr.Count(e.Need, "byte"), codecerr.Remain(e.Remain, ""))
}

func notExtError(c byte, at int) error {
	return errAt(errNotExt110, at, "msgpack type byte 0x%02x is not an ext header", c)
}

func extTypeError(typ int8, at int) error {
	return errAt(errNotExt110, at, "ext type %d, want %d", typ, ExtType)
}

// next moves the parser to rest, what a wire reader left of p.b[p.off:].
func (p *parser) next(rest []byte) { p.off = len(p.b) - len(rest) }

// wireError turns the failure of a wire reader at the parser's position
// into the package's error, quoting what was read (see mpwire.Describe).
func (p *parser) wireError(err error, value, length, want string) error {
	off, detail, truncated := mpwire.Describe(err, value, length, want)
	if truncated {
		return newError(ndarray.ErrTruncated, int64(p.pos()+off), detail, nil)
	}
	return newError(errMalformed, int64(p.pos()+off), detail, nil)
}

// The keys of the array map, as bits of a set.
const (
	keyData = 1 << iota
	keyTypestr
	keyShape
	keyVersion
	keyStrides
	keyOffset
	keyDescr
)

// arrayMap reads the payload map, which must fill the parser's bytes.
func (p *parser) arrayMap() (*ndarray.Array, error) {
	at := p.pos()
	entries, rest, err := mpwire.ReadMapHeaderBytes(p.b[p.off:])
	if err != nil {
		return nil, p.wireError(err, "payload", "map", "a map")
	}
	p.next(rest)
	var (
		a       ndarray.Array
		seen    int
		descr   []byte // the descr value's bytes, read once typestr is known
		descrAt int
	)
	for i := 0; i < entries; i++ {
		keyAt := p.pos()
		key, err := p.stringOrBin("map key")
		if err != nil {
			return nil, err
		}
		var bit int
		switch string(key) {
		case "data":
			bit = keyData
		case "typestr":
			bit = keyTypestr
		case "shape":
			bit = keyShape
		case "version":
			bit = keyVersion
		case "strides":
			bit = keyStrides
		case "offset":
			bit = keyOffset
		case "descr":
			bit = keyDescr
		default:
			// Extra keys are allowed by the YEP and ignored.
			if err := p.skip(); err != nil {
				return nil, err
			}
			continue
		}
		if seen&bit != 0 {
			return nil, errAt(errMalformed, keyAt, "duplicate key %q", key)
		}
		seen |= bit
		valAt := p.pos()
		switch bit {
		case keyData:
			a.Data, err = p.stringOrBin("data")
			p.dataOff = p.off - len(a.Data)
		case keyTypestr:
			var s []byte
			if s, err = p.stringOrBin("typestr"); err == nil {
				a.DType, err = parseTypestr(s, valAt)
			}
		case keyShape:
			a.Shape, err = p.shape()
		case keyVersion:
			// Any version is accepted: the YEP asks readers not to
			// reject objects of future versions of the interface.
			_, err = p.integer("version")
		case keyStrides:
			if c, e := p.byte("strides"); e != nil {
				err = e
			} else if c != 0xc0 {
				err = errAt(ErrStrided, valAt, "strides must be nil (the data must be C-contiguous)")
			}
		case keyDescr:
			// Kept for after the loop: what it means depends on the
			// typestr, which may come later.
			start := p.off
			if err = p.skip(); err == nil {
				descr, descrAt = p.b[start:p.off], valAt
			}
		case keyOffset:
			// The array interface lets data start offset bytes in; the
			// reference reads there. Only nil and 0 describe data that
			// starts where the bytes do.
			if mpwire.NextType(p.b[p.off:]) == mpwire.NilType {
				p.off++
			} else if off, e := p.integer("offset"); e != nil {
				err = e
			} else if off != 0 {
				err = errAt(ErrOffset, valAt, "offset %d: the array must start at the first byte of data", off)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	if p.off != len(p.b) {
		return nil, errAt(errMalformed, p.pos(), "%s left over inside the ext payload after the map", codecerr.Count(len(p.b)-p.off, "byte"))
	}
	for _, k := range requiredKeys {
		if seen&k.bit == 0 {
			return nil, errAt(errMalformed, at, "missing key %q", k.name)
		}
	}
	if descr != nil && a.DType.Kind == 'V' {
		if a.DType, err = recordDType(descr, descrAt, a.DType); err != nil {
			return nil, err
		}
	}
	if err := a.Validate(); err != nil {
		return nil, newError(errMalformed, int64(at), "", err)
	}
	return &a, nil
}

var requiredKeys = [...]struct {
	bit  int
	name string
}{{keyShape, "shape"}, {keyTypestr, "typestr"}, {keyData, "data"}}

// standardDTypes holds the standard typestrs in canonical form. It is filled
// once and only read: indexing a map with string(bytes) does not copy, so the
// common case of decoding costs no allocation for the typestr.
var standardDTypes = func() map[string]ndarray.DType {
	m := map[string]ndarray.DType{}
	for _, kind := range "biufc" {
		for _, size := range []int{1, 2, 4, 8, 16, 32} {
			for _, order := range "<>|" {
				s := string(order) + string(kind) + strconv.Itoa(size)
				if dt, err := ndarray.ParseTypestr(s); err == nil && dt.String() == s {
					m[s] = dt
				}
			}
		}
	}
	return m
}()

func parseTypestr(s []byte, at int) (ndarray.DType, error) {
	if dt, ok := standardDTypes[string(s)]; ok {
		return dt, nil
	}
	dt, err := ndarray.ParseTypestr(string(s))
	if errors.Is(err, ndarray.ErrObject) {
		return ndarray.DType{}, errAt(errMalformed, at, "typestr %q is an object array (pickle): the reference sends the addresses of Python objects, which are never read", s)
	}
	if err != nil {
		return dt, newError(errMalformed, int64(at), "", err)
	}
	return dt, nil
}

// recordDType is the dtype of a |V<n> array whose descr key, found at
// offset at, is descr. As numpy's array interface does, descr counts only
// with a void typestr: it gives the record dtype (numpy's dtype.descr, read
// as numpy.lib.format.descr_to_dtype reads it), or, when it holds only
// padding (numpy's [("", '|V8')] for a plain void), the plain void. Its
// records must be the typestr's size: numpy would take the descr's size
// and read other bytes than the sender meant.
func recordDType(descr []byte, at int, void ndarray.DType) (ndarray.DType, error) {
	dt, n, err := mpdescr.Read(descr)
	if err != nil {
		e := err.(*mpdescr.Error)
		class := errMalformed
		if e.Truncated {
			class = ndarray.ErrTruncated
		}
		return dt, newError(class, int64(at+e.Offset), e.Detail, e.Cause)
	}
	if n != len(descr) {
		return dt, errAt(errMalformed, at+n, "%s left over in descr", codecerr.Count(len(descr)-n, "byte"))
	}
	if dt.ItemSize != void.ItemSize {
		return dt, errAt(errMalformed, at, "descr describes %d-byte records, typestr %s %d-byte ones", dt.ItemSize, void, void.ItemSize)
	}
	return dt, nil
}

// stringOrBin reads a str or bin value: older packers send bytes as str.
func (p *parser) stringOrBin(what string) ([]byte, error) {
	v, rest, err := mpwire.ReadStringOrBinZC(p.b[p.off:])
	if err != nil {
		return nil, p.wireError(err, what, what, "str or bin")
	}
	p.next(rest)
	return v, nil
}

// shape reads an array of non-negative integers of any msgpack width.
func (p *parser) shape() ([]int, error) {
	// The count is at most the bytes that remain, as each dimension takes
	// one at least: this bounds the allocation by the input's size.
	n, rest, err := mpwire.ReadArrayHeaderBytes(p.b[p.off:])
	if err != nil {
		return nil, p.wireError(err, "shape", "shape", "an array")
	}
	p.next(rest)
	shape := make([]int, n)
	for i := range shape {
		dimAt := p.pos()
		v, err := p.integer("shape entry")
		if err != nil {
			return nil, err
		}
		if v < 0 {
			return nil, newError(errMalformed, int64(dimAt), "", &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrShape, Detail: fmt.Sprintf("dimension %d is negative (%d)", i, v)})
		}
		shape[i] = int(v)
	}
	return shape, nil
}

// integer reads a msgpack integer of any width that fits in an int.
func (p *parser) integer(what string) (int, error) {
	in := p.b[p.off:]
	if mpwire.NextType(in) == mpwire.UintType {
		u, rest, err := mpwire.ReadUintBytes(in)
		if err != nil {
			return 0, p.wireError(err, what, what, "an integer")
		}
		if u > math.MaxInt {
			return 0, newError(errMalformed, int64(p.pos()), "", &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrShape, Detail: fmt.Sprintf("%s %d overflows int", what, u)})
		}
		p.next(rest)
		return int(u), nil
	}
	v, rest, err := mpwire.ReadIntBytes(in)
	if err != nil {
		return 0, p.wireError(err, what, what, "an integer")
	}
	p.next(rest)
	return int(v), nil
}

// skip passes over one msgpack value of any type (an extra key's value).
func (p *parser) skip() error {
	n, err := mpwalk.Len(p.b[p.off:], mpwalk.Limits{})
	if err == nil {
		p.off += n
		return nil
	}
	f := skipClasses.Classify(err)
	if f.Kind == mpwalk.Ended { // the only way: nothing left at all
		return p.truncated("value", 1)
	}
	return errAt(f.Class, p.pos(), "%s", f.Detail)
}

// skipClasses is how skip's walk fails in this package's terms: an unused
// type byte is malformed, anything else a claim past the end.
var skipClasses = mpwalk.Classes{Invalid: errMalformed, OverBudget: ndarray.ErrTruncated, Other: ndarray.ErrTruncated}
