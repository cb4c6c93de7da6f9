package openpi

import (
	"fmt"
	"math"
	"slices"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// maxDepth bounds how deeply the maps and lists of a message may nest (the
// message's own map is at depth 1); maxExpansion bounds the memory its
// decoding may take as a multiple of its size (plus mpwalk's slack). Both
// are those of the module's other message decoders.
const (
	maxDepth     = mpwalk.DefaultMaxDepth
	maxExpansion = mpwalk.DefaultMaxExpansion
)

// decodeMessage decodes one whole message, a msgpack map, as openpi's
// msgpack_numpy.unpackb would: OpenPI's array maps (those whose first key
// is "__ndarray__" or "__npgeneric__", as its packer writes them) become
// *ndarray.Array, whose Data aliases b; str becomes string, bin []byte
// (aliasing b), lists []any, other maps map[string]any, integers int64
// (uint64 above the int64 range), floats float64 or float32 as sent.
//
// The whole message is walked first, without allocating, so that nothing
// is allocated for a length or count before it is known to fit in b, and
// nesting and expansion are bounded before any of it is decoded.
func decodeMessage(b []byte) (map[string]any, error) {
	n, err := mpwalk.Len(b, mpwalk.Limits{MaxDepth: maxDepth, MaxExpansion: maxExpansion})
	if err != nil {
		return nil, walkError(err)
	}
	if n != len(b) {
		return nil, errAt(ErrMalformed, n, "%s after the message's map", codecerr.Count(len(b)-n, "byte"))
	}
	if t := mpwire.NextType(b); t != mpwire.MapType {
		return nil, errAt(ErrMalformed, 0, "the message is a msgpack %s, not a map", t)
	}
	d := decoder{b: b}
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok { // an array map at the top
		return nil, errAt(ErrMalformed, 0, "the message is an array, not a map of named values")
	}
	return m, nil
}

// walkClasses is how a message's walk fails in this package's terms.
var walkClasses = mpwalk.Classes{
	Invalid:     ErrMalformed,
	OverBudget:  ndarray.ErrTruncated,
	TooDeep:     ndarray.ErrTooLarge,
	TooCostly:   ndarray.ErrTooLarge,
	Ended:       ndarray.ErrTruncated,
	EndedDetail: "the message ends inside a value",
	Other:       ndarray.ErrTruncated,
}

// walkError turns mpwalk's failure into the package's error.
func walkError(err error) error {
	f := walkClasses.Classify(err)
	return &msgError{class: f.Class, offset: f.Offset, detail: f.Detail}
}

// decoder reads values from a message that mpwalk has checked: every
// length in it fits, and nesting is bounded, so the recursion is too.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) next(rest []byte) { d.off = len(d.b) - len(rest) }

func (d *decoder) value() (any, error) {
	in := d.b[d.off:]
	switch t := mpwire.NextType(in); t {
	case mpwire.NilType:
		d.off++
		return nil, nil
	case mpwire.BoolType:
		d.off++
		return in[0] == 0xc3, nil
	case mpwire.IntType:
		v, rest, err := mpwire.ReadIntBytes(in)
		d.next(rest)
		return v, d.wire(err)
	case mpwire.UintType:
		u, rest, err := mpwire.ReadUintBytes(in)
		d.next(rest)
		if u > math.MaxInt64 {
			return u, d.wire(err)
		}
		return int64(u), d.wire(err)
	case mpwire.Float32Type:
		f, rest, err := mpwire.ReadFloat64Bytes(in)
		d.next(rest)
		return float32(f), d.wire(err)
	case mpwire.Float64Type:
		f, rest, err := mpwire.ReadFloat64Bytes(in)
		d.next(rest)
		return f, d.wire(err)
	case mpwire.StrType:
		s, rest, err := mpwire.ReadStringZC(in)
		d.next(rest)
		return string(s), d.wire(err)
	case mpwire.BinType:
		s, rest, err := mpwire.ReadBytesZC(in)
		d.next(rest)
		return s[:len(s):len(s)], d.wire(err)
	case mpwire.ArrayType:
		n, rest, err := mpwire.ReadArrayHeaderBytes(in)
		if err != nil {
			return nil, d.wire(err)
		}
		d.next(rest)
		list := make([]any, n) // n fits: mpwalk checked it
		for i := range list {
			if list[i], err = d.value(); err != nil {
				return nil, err
			}
		}
		return list, nil
	case mpwire.MapType:
		if isArrayMap(in) {
			return d.array(in)
		}
		return d.dict(in)
	default:
		return nil, errAt(ErrMalformed, d.off, "a msgpack %s, which OpenPI messages do not carry", t)
	}
}

// wire reports a failure of a wire reader on bytes mpwalk accepted, which
// cannot happen; it is kept an error, not a panic.
func (d *decoder) wire(err error) error {
	if err == nil {
		return nil
	}
	return &msgError{class: ErrMalformed, offset: int64(d.off), cause: err}
}

// isArrayMap reports whether the map at the start of b is one of
// openpi's msgpack_numpy array maps: its first key, as the packer writes
// it, is "__ndarray__" or "__npgeneric__" (as bin, or as str).
func isArrayMap(b []byte) bool {
	n, rest, err := mpwire.ReadMapHeaderBytes(b)
	if err != nil || n == 0 {
		return false
	}
	key, _, err := mpwire.ReadStringOrBinZC(rest)
	if err != nil {
		return false
	}
	switch string(key) {
	case "__ndarray__", "__npgeneric__":
		return true
	}
	return false
}

func (d *decoder) array(in []byte) (any, error) {
	h, err := dialect.DecodeHeader(in)
	if err != nil {
		return nil, &msgError{class: ErrMalformed, offset: int64(d.off), detail: "an array map", cause: err}
	}
	d.off += h.Len
	if h.Scalar != nil {
		return h.Scalar, nil
	}
	end := h.DataOffset + h.DataLen
	return &ndarray.Array{DType: h.DType, Shape: h.Shape, Data: in[h.DataOffset:end:end]}, nil
}

func (d *decoder) dict(in []byte) (any, error) {
	n, rest, err := mpwire.ReadMapHeaderBytes(in)
	if err != nil {
		return nil, d.wire(err)
	}
	d.next(rest)
	m := make(map[string]any, n) // n fits: mpwalk checked it
	for range n {
		at := d.off
		key, rest, err := mpwire.ReadStringOrBinZC(d.b[d.off:])
		if err != nil {
			return nil, errAt(ErrMalformed, at, "a map key that is a msgpack %s, not a string", mpwire.NextType(d.b[d.off:]))
		}
		d.next(rest)
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		m[string(key)] = v
	}
	return m, nil
}

// appendMessage appends m as msgpack to dst, as openpi's
// msgpack_numpy.Packer packs a dict: arrays as its array maps, keys in
// sorted order (a Go map has no other). If extraKey is not "", the map
// also holds extraKey: extraValue, in place of any value m has for it.
func appendMessage(dst []byte, m map[string]any, extraKey string, extraValue any) ([]byte, error) {
	return appendMap(dst, m, extraKey, extraValue, 1)
}

func appendMap(dst []byte, m map[string]any, extraKey string, extraValue any, depth int) ([]byte, error) {
	keys := make([]string, 0, len(m))
	for k := range m {
		if k != extraKey || extraKey == "" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	n := len(keys)
	if extraKey != "" {
		n++
	}
	dst = mpwire.AppendMapHeader(dst, n)
	var err error
	for _, k := range keys {
		dst = mpwire.AppendString(dst, k)
		if dst, err = appendValue(dst, m[k], depth+1); err != nil {
			return dst, err
		}
	}
	if extraKey != "" {
		dst = mpwire.AppendString(dst, extraKey)
		dst, err = appendValue(dst, extraValue, depth+1)
	}
	return dst, err
}

// appendValue appends one value: the types a decoded message holds are
// written here; any other Go value (a struct, a typed slice) as the root
// package's MarshalMessage writes it, arrays as OpenPI maps.
func appendValue(dst []byte, v any, depth int) ([]byte, error) {
	if depth > maxDepth {
		return dst, fmt.Errorf("openpi: cannot send values nested more than %d deep (a map that holds itself?): %w", maxDepth, ndarray.ErrTooLarge)
	}
	switch x := v.(type) {
	case nil:
		return mpwire.AppendNil(dst), nil
	case bool:
		return mpwire.AppendBool(dst, x), nil
	case int:
		return mpwire.AppendInt(dst, int64(x)), nil
	case int8:
		return mpwire.AppendInt(dst, int64(x)), nil
	case int16:
		return mpwire.AppendInt(dst, int64(x)), nil
	case int32:
		return mpwire.AppendInt(dst, int64(x)), nil
	case int64:
		return mpwire.AppendInt(dst, x), nil
	case uint:
		return mpwire.AppendUint(dst, uint64(x)), nil
	case uint8:
		return mpwire.AppendUint(dst, uint64(x)), nil
	case uint16:
		return mpwire.AppendUint(dst, uint64(x)), nil
	case uint32:
		return mpwire.AppendUint(dst, uint64(x)), nil
	case uint64:
		return mpwire.AppendUint(dst, x), nil
	case float32:
		u := math.Float32bits(x)
		return append(dst, 0xca, byte(u>>24), byte(u>>16), byte(u>>8), byte(u)), nil
	case float64:
		return mpwire.AppendFloat64(dst, x), nil
	case string:
		return mpwire.AppendString(dst, x), nil
	case []byte:
		return mpwire.AppendBytes(dst, x), nil
	case *ndarray.Array:
		if x == nil {
			return mpwire.AppendNil(dst), nil
		}
		return appendArray(dst, x)
	case ndarray.Array:
		return appendArray(dst, &x)
	case map[string]any:
		return appendMap(dst, x, "", nil, depth)
	case []any:
		dst = mpwire.AppendArrayHeader(dst, len(x))
		var err error
		for _, e := range x {
			if dst, err = appendValue(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return dst, nil
	case map[string]*ndarray.Array:
		m := make(map[string]any, len(x))
		for k, a := range x {
			m[k] = a
		}
		return appendMap(dst, m, "", nil, depth)
	}
	b, err := ndpack.MessageOptions{Encoding: dialect.OpenPI, MaxDepth: maxDepth}.MarshalMessage(v)
	if err != nil {
		return dst, fmt.Errorf("openpi: cannot send a %T: %w", v, err)
	}
	return append(dst, b...), nil
}

func appendArray(dst []byte, a *ndarray.Array) ([]byte, error) {
	out, err := dialect.OpenPI.Append(dst, a)
	if err != nil {
		return dst, fmt.Errorf("openpi: cannot send the %s array: %w", a, err)
	}
	return out, nil
}
