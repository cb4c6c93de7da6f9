package dialect

import (
	"errors"
	"math"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/mpdescr"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// Header describes an encoded array without its data, like
// image.DecodeConfig: the dialect, dtype, shape and where the data bytes lie.
type Header struct {
	Dialect    Dialect       // which convention the map follows
	DType      ndarray.DType // the array's dtype, a record for a msgpack-numpy descr
	Shape      []int         // empty for a 0-d array or a numpy scalar
	DataOffset int           // offset of the first data byte in the input; -1 for Scalar
	DataLen    int           // number of data bytes, shape times item size
	Len        int           // length of the whole map
	// Scalar is set, and the data is not raw bytes, for an OpenPI numpy
	// scalar, whose value is a native msgpack number: it is the 0-d array.
	Scalar *ndarray.Array
}

// Unmarshal decodes one array map of either dialect that fills b, and says
// which dialect it was. The returned Array owns a copy of its data. It
// fails with an error matching ndarray.ErrNotArray when b does not start with a map
// holding a marker key of either dialect, ndarray.ErrTruncated when b ends inside
// the map, ErrPickle for an object array, ErrStructured for a descr list
// where the dialect carries none (OpenPI, a numpy scalar), or ndarray.ErrMalformed
// when the map is not a valid array or bytes follow it (a typestr, shape or
// data that makes no array also matches ndarray's ErrDType, ErrShape,
// ErrDataLength or ErrType); errors.As finds the *ndarray.Error, whose Offset is
// where in b the fault was found.
func Unmarshal(b []byte) (*ndarray.Array, Dialect, error) { return unmarshal(b, false) }

// UnmarshalNoCopy is Unmarshal without the copy: the Array's Data aliases
// b, which must not change while the Array is in use, and its cost does not
// depend on the size of the array, when the data lies in b aligned for its
// items (ndarray.Array.Aligned). Data that does not is copied once,
// aligned, so that typed access never copies it again. It fails as
// Unmarshal does.
func UnmarshalNoCopy(b []byte) (*ndarray.Array, Dialect, error) { return unmarshal(b, true) }

func unmarshal(b []byte, alias bool) (*ndarray.Array, Dialect, error) {
	h, err := DecodeHeader(b)
	if err != nil {
		return nil, 0, err
	}
	if h.Len != len(b) {
		return nil, 0, errAt(errMalformed, h.Len, "%s after the array map", codecerr.Count(len(b)-h.Len, "byte"))
	}
	if h.Scalar != nil {
		return h.Scalar, h.Dialect, nil
	}
	data := b[h.DataOffset : h.DataOffset+h.DataLen : h.DataOffset+h.DataLen]
	if !alias {
		// Appended to nothing rather than made and filled: an append
		// clears no byte it then overwrites.
		data = append([]byte{}, data...)
	}
	a := &ndarray.Array{DType: h.DType, Shape: h.Shape, Data: data}
	if alias && !a.Aligned() {
		a.Data = append([]byte(nil), data...)
	}
	return a, h.Dialect, nil
}

// Marker reports which dialect's array maps key marks: "nd"
// msgpack-numpy's (an array, or with the value false a numpy scalar),
// "__ndarray__" and "__npgeneric__" OpenPI's (an array, a numpy scalar).
// A message decoder reading a map's keys uses it to tell a dialect's array
// from an ordinary map, and DecodeHeader to read the array; the packers
// write the marker first, and DecodeHeader reads it wherever it is. Key
// is compared in place, without a copy.
func Marker(key []byte) (Dialect, bool) {
	switch string(key) {
	case "nd":
		return MsgpackNumpy, true
	case "__ndarray__", "__npgeneric__":
		return OpenPI, true
	}
	return 0, false
}

// DecodeHeader checks one array map of either dialect at the start of b, as
// Unmarshal does, without copying its data, and says where the data lies.
// Bytes after the map are allowed; otherwise it fails as Unmarshal does.
func DecodeHeader(b []byte) (Header, error) {
	p := parser{b: b}
	n, err := p.mapHeader()
	if err != nil {
		return Header{}, err
	}
	f, err := p.arrayFields(n)
	if err != nil {
		return Header{}, err
	}
	return f.header(p.off)
}

// arrayFields is what an array map's keys say, as read by arrayFields.
type arrayFields struct {
	marker                   string
	isArray                  bool // nd True, __ndarray__ True
	typestr, kind, dataBytes []byte
	descr                    []byte // a descr list in place of the typestr, read once the dialect is known
	descrAt                  int
	dataOffset               int // of dataBytes in the input; -1 without
	dataVal                  scalarValue
	shape                    []int
	hasShape, hasData        bool
}

// arrayFields reads the n entries of an array map, checking each key's
// value and that no key comes twice; extra keys are skipped.
func (p *parser) arrayFields(n int) (arrayFields, error) {
	f := arrayFields{dataOffset: -1}
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		keyAt := p.off
		key, err := p.stringOrBin("map key")
		if err != nil {
			return f, err
		}
		k := string(key)
		if seen[k] {
			return f, errAt(errMalformed, keyAt, "duplicate key %q", k)
		}
		seen[k] = true
		valAt := p.off
		switch k {
		case "nd", "__ndarray__", "__npgeneric__":
			if f.marker != "" {
				return f, errAt(errMalformed, keyAt, "both %q and %q", f.marker, k)
			}
			f.marker = k
			v, err := p.boolean(k)
			if err != nil {
				return f, err
			}
			f.isArray = v && k != "__npgeneric__"
			if k != "nd" && !v {
				return f, errAt(errMalformed, valAt, "%q is False", k)
			}
		case "type", "dtype":
			if mpwire.NextType(p.b[p.off:]) == mpwire.ArrayType {
				if err := p.skip(); err != nil {
					return f, err
				}
				if f.typestr != nil || f.descr != nil {
					return f, errAt(errMalformed, keyAt, "both \"type\" and \"dtype\"")
				}
				f.descr, f.descrAt = p.b[valAt:p.off], valAt
				continue
			}
			if f.typestr != nil || f.descr != nil {
				return f, errAt(errMalformed, keyAt, "both \"type\" and \"dtype\"")
			}
			if f.typestr, err = p.stringOrBin(k); err != nil {
				return f, err
			}
		case "kind":
			if f.kind, err = p.stringOrBin(k); err != nil {
				return f, err
			}
		case "shape":
			if f.shape, err = p.shape(); err != nil {
				return f, err
			}
			f.hasShape = true
		case "data":
			f.hasData = true
			if f.marker == "__npgeneric__" || !p.atBytes() {
				if f.dataVal, err = p.scalar(); err != nil {
					return f, err
				}
				continue
			}
			if f.dataBytes, err = p.stringOrBin(k); err != nil {
				return f, err
			}
			f.dataOffset = p.off - len(f.dataBytes)
		default:
			if err := p.skip(); err != nil { // extra keys are allowed
				return f, err
			}
		}
	}
	return f, nil
}

// header checks that the fields make an array or scalar of either dialect
// and says where its data lies; mapLen is the length of the whole map.
func (f arrayFields) header(mapLen int) (Header, error) {
	const at = 0 // errors about the map as a whole point at its start
	h := Header{DataOffset: f.dataOffset, Len: mapLen}
	switch f.marker {
	case "nd":
		h.Dialect = MsgpackNumpy
	case "__ndarray__", "__npgeneric__":
		h.Dialect = OpenPI
	default:
		return Header{}, errAt(errNotArray, at, "a map without b'nd', b'__ndarray__' or b'__npgeneric__'")
	}
	switch string(f.kind) {
	case "":
	case "O":
		return Header{}, errAt(ErrPickle, at, "kind b'O': the data is a Python pickle, which is never loaded")
	case "V":
		if f.descr == nil && f.typestr != nil {
			return Header{}, errAt(errMalformed, at, "kind b'V' with a typestr: msgpack-numpy sends a void or record array's descr list")
		}
	default:
		return Header{}, errAt(errMalformed, at, "unknown kind %q", f.kind)
	}
	typeKey := map[string]string{"nd": "type"}[f.marker]
	if typeKey == "" {
		typeKey = "dtype"
	}
	switch {
	case f.typestr == nil && f.descr == nil:
		return Header{}, errAt(errMalformed, at, "missing key %q", typeKey)
	case !f.hasData:
		return Header{}, errAt(errMalformed, at, "missing key \"data\"")
	case f.isArray && !f.hasShape:
		return Header{}, errAt(errMalformed, at, "missing key \"shape\"")
	}
	var dt ndarray.DType
	switch {
	case f.descr != nil && h.Dialect == OpenPI:
		return Header{}, errAt(ErrStructured, f.descrAt, "%q is a descr list: OpenPI cannot carry record (structured) arrays, its dtype is a typestr", typeKey)
	case f.descr != nil && !f.isArray:
		return Header{}, errAt(ErrStructured, f.descrAt, "a numpy scalar with a descr list: msgpack-numpy sends record scalars as 0-d arrays")
	case f.descr != nil:
		// msgpack-numpy's kind b'V', or an older msgpack-numpy's map
		// without kind (its decoder reads both).
		var err error
		if dt, err = readDescr(f.descr, f.descrAt); err != nil {
			return Header{}, err
		}
	default:
		var err error
		dt, err = ndarray.ParseTypestr(string(f.typestr))
		if errors.Is(err, ndarray.ErrObject) {
			return Header{}, errAt(ErrPickle, at, "%q %q is an object array (pickle), which is never read", typeKey, f.typestr)
		}
		if err != nil {
			return Header{}, wrapAt(errMalformed, at, err)
		}
	}
	h.DType = dt
	if !f.isArray {
		f.shape = []int{} // a numpy scalar is a 0-d array
	}
	h.Shape = f.shape
	if f.dataBytes == nil {
		if f.marker != "__npgeneric__" {
			return Header{}, errAt(errMalformed, at, "\"data\" is not str or bin")
		}
		a, err := f.dataVal.array(dt)
		if err != nil {
			return Header{}, wrapAt(errMalformed, at, err)
		}
		h.Scalar, h.DataLen = a, len(a.Data)
		return h, nil
	}
	h.DataLen = len(f.dataBytes)
	if err := (&ndarray.Array{DType: dt, Shape: f.shape, Data: f.dataBytes}).Validate(); err != nil {
		return Header{}, wrapAt(errMalformed, at, err)
	}
	return h, nil
}

// readDescr reads msgpack-numpy's descr list, found at offset at, as
// numpy.lib.format.descr_to_dtype reads it: the record dtype, or the plain
// void for a list of padding only (msgpack-numpy's [["", "|V8"]] for a
// plain |V8 array).
func readDescr(descr []byte, at int) (ndarray.DType, error) {
	dt, n, err := mpdescr.Read(descr)
	if err != nil {
		e := err.(*mpdescr.Error)
		class := errMalformed
		switch {
		case e.Object:
			class = ErrPickle
		case e.Truncated:
			class = ndarray.ErrTruncated
		}
		return dt, &ndarray.Error{Pkg: "dialect", Err: class, Offset: int64(at + e.Offset), Detail: e.Detail, Cause: e.Cause}
	}
	if n != len(descr) {
		return dt, errAt(errMalformed, at+n, "%s left over in the descr list", codecerr.Count(len(descr)-n, "byte"))
	}
	return dt, nil
}

// atBytes reports whether the value at the parser is a str or a bin, or
// the input has ended there (which reading it will report).
func (p *parser) atBytes() bool {
	t := mpwire.NextType(p.b[p.off:])
	return p.off >= len(p.b) || t == mpwire.StrType || t == mpwire.BinType
}

// scalarValue is an OpenPI numpy scalar's value: a native msgpack number.
type scalarValue struct {
	kind  byte // 'b' bool, 'i' int64, 'u' uint64, 'f' float64
	i     int64
	u     uint64
	f     float64
	b     bool
	valid bool
}

// array converts the value to a 0-d array of dtype dt, as numpy's
// np.dtype(dt).type(value) would for a value that fits.
func (v scalarValue) array(dt ndarray.DType) (*ndarray.Array, error) {
	if !v.valid {
		return nil, &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrType, Detail: "the scalar's data is not a number or a bool"}
	}
	var src *ndarray.Array
	switch v.kind {
	case 'b':
		src = ndarray.Scalar(v.b)
	case 'i':
		src = ndarray.Scalar(v.i)
	case 'u':
		src = ndarray.Scalar(v.u)
	default:
		src = ndarray.Scalar(v.f)
	}
	return ndarray.Unsafe.AsType(src, dt)
}

// parser reads msgpack from a byte slice through mpwire, whose reads check
// every length against the bytes that remain, so no length from the input
// is used before it is known to fit.
type parser struct {
	b   []byte
	off int
}

// next moves the parser to rest, what a wire reader left of p.b[p.off:].
func (p *parser) next(rest []byte) { p.off = len(p.b) - len(rest) }

// wireError turns the failure of a wire reader at the parser into the
// package's error, quoting what was read (see mpwire.Describe); a value of
// the wrong type is of class wrongType.
func (p *parser) wireError(err error, value, length, want string, wrongType error) error {
	off, detail, truncated := mpwire.Describe(err, value, length, want)
	class := wrongType
	if truncated {
		class = ndarray.ErrTruncated
	}
	return &ndarray.Error{Pkg: "dialect", Err: class, Offset: int64(p.off + off), Detail: detail}
}

func (p *parser) mapHeader() (int, error) {
	n, rest, err := mpwire.ReadMapHeaderBytes(p.b[p.off:])
	switch {
	case errors.Is(err, mpwire.ErrType):
		return 0, errAt(errNotArray, p.off, "msgpack type byte 0x%02x is not a map", p.b[p.off])
	case err != nil:
		return 0, p.wireError(err, "map", "map", "a map", errNotArray)
	}
	p.next(rest)
	return n, nil
}

func (p *parser) stringOrBin(what string) ([]byte, error) {
	v, rest, err := mpwire.ReadStringOrBinZC(p.b[p.off:])
	if err != nil {
		return nil, p.wireError(err, what, what, "str or bin", errMalformed)
	}
	p.next(rest)
	return v, nil
}

func (p *parser) boolean(what string) (bool, error) {
	v, rest, err := mpwire.ReadBoolBytes(p.b[p.off:])
	switch {
	case errors.Is(err, mpwire.ErrType):
		return false, errAt(errMalformed, p.off, "%q is msgpack type byte 0x%02x, not a bool", what, p.b[p.off])
	case err != nil:
		return false, p.wireError(err, what, what, "a bool", errMalformed)
	}
	p.next(rest)
	return v, nil
}

// integer reads a msgpack integer of any width; unsigned is set for one
// that is not negative, and u then holds it (a uint64 above the int64 range
// too).
func (p *parser) integer(what string) (v int64, u uint64, unsigned bool, err error) {
	in := p.b[p.off:]
	if mpwire.NextType(in) == mpwire.UintType {
		u, rest, err := mpwire.ReadUintBytes(in)
		if err != nil {
			return 0, 0, false, p.wireError(err, what, what, "an integer", errMalformed)
		}
		p.next(rest)
		return int64(u), u, true, nil
	}
	v, rest, err := mpwire.ReadIntBytes(in)
	if err != nil {
		return 0, 0, false, p.wireError(err, what, what, "an integer", errMalformed)
	}
	p.next(rest)
	return v, uint64(v), v >= 0, nil
}

func (p *parser) shape() ([]int, error) {
	// The count is at most the bytes that remain, as each dimension takes
	// one at least: this bounds the allocation by the input's size.
	n, rest, err := mpwire.ReadArrayHeaderBytes(p.b[p.off:])
	if err != nil {
		return nil, p.wireError(err, "shape", "shape", "an array", errMalformed)
	}
	p.next(rest)
	shape := make([]int, n)
	for i := range shape {
		dimAt := p.off
		v, u, unsigned, err := p.integer("shape entry")
		if err != nil {
			return nil, err
		}
		if !unsigned || u > math.MaxInt {
			return nil, wrapAt(errMalformed, dimAt, &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrShape, Detail: "a dimension is negative or overflows int"})
		}
		shape[i] = int(v)
	}
	return shape, nil
}

// scalar reads a native msgpack number or bool (an OpenPI scalar's data).
func (p *parser) scalar() (scalarValue, error) {
	at := p.off
	in := p.b[p.off:]
	switch t := mpwire.NextType(in); {
	case len(in) == 0:
		return scalarValue{}, errAt(ndarray.ErrTruncated, p.off, "data needs 1 byte, 0 remain")
	case t == mpwire.BoolType:
		v, err := p.boolean("data")
		return scalarValue{kind: 'b', b: v, valid: true}, err
	case t == mpwire.Float32Type || t == mpwire.Float64Type:
		f, rest, err := mpwire.ReadFloat64Bytes(in)
		if err != nil {
			return scalarValue{}, p.wireError(err, "data", "data", "a float", errMalformed)
		}
		p.next(rest)
		return scalarValue{kind: 'f', f: f, valid: true}, nil
	case t == mpwire.IntType || t == mpwire.UintType:
		v, u, unsigned, err := p.integer("data")
		if unsigned && u > math.MaxInt64 {
			return scalarValue{kind: 'u', u: u, valid: true}, err
		}
		return scalarValue{kind: 'i', i: v, valid: true}, err
	}
	if err := p.skip(); err != nil {
		return scalarValue{}, err
	}
	return scalarValue{}, errAt(errMalformed, at, "data is neither bytes nor a number")
}

// skip passes over one msgpack value of any type. The walker fails only
// on a byte msgpack never uses, a length or count that claims more than
// remains, or, with nothing left at all, io.ErrUnexpectedEOF.
func (p *parser) skip() error {
	n, err := mpwalk.Len(p.b[p.off:], mpwalk.Limits{})
	if err == nil {
		p.off += n
		return nil
	}
	f := skipClasses.Classify(err)
	return errAt(f.Class, p.off, "%s", f.Detail)
}

// skipClasses is how skip's walk fails in this package's terms: an unused
// type byte is malformed, anything else truncated input.
var skipClasses = mpwalk.Classes{
	Invalid:     errMalformed,
	OverBudget:  ndarray.ErrTruncated,
	Ended:       ndarray.ErrTruncated,
	EndedDetail: "input ended inside a value",
	Other:       ndarray.ErrTruncated,
}
