package msgarrays

import (
	"math"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// What decoding allocates, as Go 1.24 and later do, charged before it is
// allocated (openpi's TestDecodeCost holds the estimate to the truth):
// each element of a list takes an interface slot; a number other than
// 0-255 a boxed word; a string its header and its bytes; a list or byte
// string its boxed slice header; a map its header, and one group of 8
// slots if it holds up to 8 entries, else about 72 bytes an entry; a map
// key its bytes; an array its ndarray.Array and shape.
const (
	costSlot   = 16
	costNumber = 8
	costString = 16
	costSlice  = 24
	costMap    = 48
	costGroup  = 288
	costEntry  = 72
	costArray  = 128
)

// MaxDepth bounds how deeply Decode and Cost recurse: the lists and maps
// of a message nest at most this deep, as mpwalk.DefaultMaxDepth bounds
// the module's other decoders.
const MaxDepth = mpwalk.DefaultMaxDepth

// Decode decodes b, one whole message, into Go values, as Python's
// msgpack.unpackb with an array hook would: the arrays of s become
// *ndarray.Array whose Data aliases b as it lies there (aligned for its
// items or not: ndarray.Values copies misaligned data when it reads it), a
// dialect's numpy scalar a 0-d array; str becomes string, bin []byte
// (aliasing b), lists []any, other maps map[string]any, integers int64
// (uint64 above the int64 range), floats float64 or float32 as sent.
//
// b must be one value that mpwalk checked (every length within b). Decode
// fails with an *Error: ErrMalformed for a value that is no array of s
// and none of those (an ext of another type or encoding), a map key that
// is not a str or bin, or what is taken for an array and is not a valid
// one (the codec's error its Cause); ErrTooDeep past MaxDepth.
func (s Set) Decode(b []byte) (any, error) {
	d := decoder{s: s, b: b, limit: math.MaxInt64}
	return d.value(0)
}

// Cost walks b as Decode does, allocating nothing for its values, and
// returns the memory decoding it takes beyond b's own, in bytes. It stops
// as soon as that passes limit, with an *Error matching ErrTooLarge whose
// Offset is where; otherwise it fails as Decode does.
func (s Set) Cost(b []byte, limit int64) (int64, error) {
	d := decoder{s: s, b: b, dry: true, limit: limit}
	if _, err := d.value(0); err != nil {
		return 0, err
	}
	return d.cost, nil
}

// decoder reads values from a message that mpwalk has checked: every
// length in it fits. A dry decoder allocates nothing: it counts what
// decoding would allocate (cost), failing once that passes limit, and
// returns nil values.
type decoder struct {
	s     Set
	b     []byte
	off   int
	dry   bool
	cost  int64
	limit int64
}

func (d *decoder) next(rest []byte) { d.off = len(d.b) - len(rest) }

// charge counts n bytes of memory that decoding takes.
func (d *decoder) charge(n int64) error {
	d.cost += n
	if d.cost > d.limit {
		return errAt(ndarray.ErrTooLarge, d.off, "decoding the message of %d bytes would take more than %d bytes of memory", len(d.b), d.limit)
	}
	return nil
}

func (d *decoder) value(depth int) (any, error) {
	in := d.b[d.off:]
	switch t := mpwire.NextType(in); t {
	case mpwire.NilType:
		d.off++
		return nil, nil
	case mpwire.BoolType:
		d.off++
		return in[0] == 0xc3, nil
	case mpwire.IntType, mpwire.UintType, mpwire.Float32Type, mpwire.Float64Type:
		return d.number(t, in)
	case mpwire.StrType:
		s, rest, err := mpwire.ReadStringZC(in)
		d.next(rest)
		if err != nil {
			return nil, d.wire(err)
		}
		if err := d.charge(costString + roundUp(len(s))); err != nil || d.dry {
			return nil, err
		}
		return string(s), nil
	case mpwire.BinType:
		s, rest, err := mpwire.ReadBytesZC(in)
		d.next(rest)
		if err != nil {
			return nil, d.wire(err)
		}
		if err := d.charge(costSlice); err != nil || d.dry {
			return nil, err
		}
		return s[:len(s):len(s)], nil
	case mpwire.ArrayType:
		return d.list(in, depth)
	case mpwire.MapType:
		return d.dict(in, depth)
	case mpwire.ExtType:
		if d.s.takesExt(in) {
			return d.array(ext110Header(in))
		}
		typ, _, _, _ := mpwire.ReadExtHeaderUnchecked(in)
		return nil, errAt(ndarray.ErrMalformed, d.off, "a msgpack ext of type %d, which is no %s array", typ, d.s)
	default:
		return nil, errAt(ndarray.ErrMalformed, d.off, "a msgpack %s, which no message holds", t)
	}
}

// number reads an integer or a float.
func (d *decoder) number(t mpwire.Type, in []byte) (any, error) {
	var (
		i     int64
		u     uint64
		f     float64
		err   error
		rest  []byte
		small bool // boxed without allocating
	)
	switch t {
	case mpwire.IntType:
		i, rest, err = mpwire.ReadIntBytes(in)
		small = i >= 0 && i < 256
	case mpwire.UintType:
		u, rest, err = mpwire.ReadUintBytes(in)
		small = u < 256
	default:
		f, rest, err = mpwire.ReadFloat64Bytes(in)
	}
	d.next(rest)
	if err != nil {
		return nil, d.wire(err)
	}
	if !small {
		if err := d.charge(costNumber); err != nil {
			return nil, err
		}
	}
	switch {
	case d.dry:
		return nil, nil
	case t == mpwire.IntType:
		return i, nil
	case t == mpwire.UintType && u > math.MaxInt64:
		return u, nil
	case t == mpwire.UintType:
		return int64(u), nil
	case t == mpwire.Float32Type:
		return float32(f), nil
	}
	return f, nil
}

func roundUp(n int) int64 { return int64(n+7) &^ 7 }

// wire reports a failure of a wire reader on bytes mpwalk accepted, which
// cannot happen; it is kept an error, not a panic.
func (d *decoder) wire(err error) error {
	return &Error{Class: ndarray.ErrMalformed, Offset: d.off, Cause: err}
}

func (d *decoder) deeper(depth int) error {
	if depth >= MaxDepth {
		return errAt(ndarray.ErrTooDeep, d.off, "lists and maps nest more than %d deep", MaxDepth)
	}
	return nil
}

func (d *decoder) list(in []byte, depth int) (any, error) {
	if err := d.deeper(depth); err != nil {
		return nil, err
	}
	n, rest, err := mpwire.ReadArrayHeaderBytes(in)
	if err != nil {
		return nil, d.wire(err)
	}
	d.next(rest)
	if err := d.charge(costSlice + costSlot*int64(n)); err != nil {
		return nil, err
	}
	var list []any
	if !d.dry {
		list = make([]any, n) // n fits: mpwalk checked it, and so was its cost
	}
	for i := range int(n) {
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if !d.dry {
			list[i] = v
		}
	}
	if d.dry {
		return nil, nil
	}
	return list, nil
}

// array makes the array At found where the decoder is, aliasing the
// message.
func (d *decoder) array(h Header, ok bool, err error) (any, error) {
	if err != nil {
		return nil, &Error{Class: ndarray.ErrMalformed, Offset: d.off, Detail: "an array", Cause: err}
	}
	if !ok {
		return nil, errAt(ndarray.ErrMalformed, d.off, "a map marked as an array of %s and of another dialect", d.s)
	}
	in := d.b[d.off:]
	d.off += h.Len
	if err := d.charge(costArray + 8*int64(len(h.Shape))); err != nil || d.dry {
		return nil, err
	}
	if h.Scalar != nil {
		return h.Scalar, nil
	}
	return &ndarray.Array{DType: h.DType, Shape: h.Shape, Data: h.Data(in)}, nil
}

// dict reads a map: an array of s's dialects if a key marks it (first, or
// anywhere in a map of 3 to 16 entries), else map[string]any.
func (d *decoder) dict(in []byte, depth int) (any, error) {
	if err := d.deeper(depth); err != nil {
		return nil, err
	}
	start := d.off
	n, rest, err := mpwire.ReadMapHeaderBytes(in)
	if err != nil {
		return nil, d.wire(err)
	}
	d.next(rest)
	cost := int64(costMap)
	switch {
	case n > 8:
		cost += costEntry * int64(n)
	case n > 0:
		cost += costGroup
	}
	var m map[string]any
	for i := range n {
		at := d.off
		key, rest, err := mpwire.ReadStringOrBinZC(d.b[d.off:])
		if err != nil {
			return nil, errAt(ndarray.ErrMalformed, at, "a map key that is a msgpack %s, not a string", mpwire.NextType(d.b[d.off:]))
		}
		if d.s.markerOf(key) && (i == 0 || n >= minMarked && n <= maxMarked) {
			// An array: what was read of the map as one (keys before the
			// marker, which the sender put later) was charged, and goes.
			d.off = start
			return d.array(d.s.dialectHeader(d.b[start:]))
		}
		if i == 0 {
			if err := d.charge(cost); err != nil {
				return nil, err
			}
			if !d.dry {
				m = make(map[string]any, n) // n fits: mpwalk checked it, and so was its cost
			}
		}
		d.next(rest)
		if err := d.charge(roundUp(len(key))); err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if !d.dry {
			m[string(key)] = v
		}
	}
	if n == 0 {
		if err := d.charge(cost); err != nil || d.dry {
			return nil, err
		}
		return map[string]any{}, nil
	}
	if d.dry {
		return nil, nil
	}
	return m, nil
}
