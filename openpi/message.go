package openpi

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/internal/msgarrays"
	"github.com/ndpack/ndpack/ndarray"
)

// maxDepth bounds how deeply the maps and lists of a message may nest (the
// message's own map is at depth 1), as the module's other message
// decoders do.
const maxDepth = msgarrays.MaxDepth

// maxExpansion bounds the memory decoding a message may take, as a
// multiple of its size plus expansionSlack: arrays and byte strings alias
// the message, so what a robot sends costs about its size once more in
// Go values at most (a list of floats 2.7 times), while a message of
// empty lists would take 40 times, of empty maps 60. The module's other
// decoders allow 48 (mpwalk.DefaultMaxExpansion), for msgpack's copies.
const (
	maxExpansion   = 8
	expansionSlack = 1 << 20
)

// arrays are the arrays an OpenPI message holds: openpi's msgpack_numpy
// maps, which its unpacker (an object hook) makes arrays wherever they
// are. An ext 110 object or a msgpack-numpy map is not one: the Python
// peer would see an ExtType or a dict.
var arrays = msgarrays.Of(dialect.OpenPI)

// decodeMessage decodes one whole message, a msgpack map, as openpi's
// msgpack_numpy.unpackb would: OpenPI's array maps (see arrays) become
// *ndarray.Array, whose Data aliases b; str becomes string, bin []byte
// (aliasing b), lists []any, other maps map[string]any, integers int64
// (uint64 above the int64 range), floats float64 or float32 as sent (see
// msgarrays.Set.Decode).
//
// The whole message is checked first (checkMessage), without allocating
// for it, so that nothing is allocated for a length or count before it is
// known to fit in b, and nesting and the memory its values take are
// bounded before any of it is decoded.
func decodeMessage(b []byte) (map[string]any, error) {
	if _, err := checkMessage(b); err != nil {
		return nil, err
	}
	return decodeChecked(b)
}

// checkMessage checks that b holds one message that decodeChecked can
// decode within the bounds (nesting, maxExpansion), and returns the
// memory decoding it will take, in bytes, beyond b's own. It allocates
// nothing for the message's values: the checking pass walks them as the
// decoding pass does, counting what each would allocate, and stops as soon
// as the count passes the bound.
func checkMessage(b []byte) (int64, error) {
	cost, err := arrays.Check(b, maxExpansion, expansionSlack)
	if err != nil {
		return 0, decodeError(err)
	}
	if t := mpwire.NextType(b); t != mpwire.MapType {
		return 0, errAt(errMalformed, 0, "the message is a msgpack %s, not a map", t)
	}
	if _, isArray, _ := arrays.At(b); isArray {
		return 0, errAt(errMalformed, 0, "the message is an array, not a map of named values")
	}
	return cost, nil
}

// decodeChecked decodes a message that checkMessage accepted.
func decodeChecked(b []byte) (map[string]any, error) {
	v, err := arrays.Decode(b)
	if err != nil {
		return nil, decodeError(err)
	}
	return v.(map[string]any), nil
}

// decodeError is a failure of msgarrays' decoder in this package's words.
func decodeError(err error) error {
	var e *msgarrays.Error
	if !errors.As(err, &e) {
		return err
	}
	class := e.Class
	if class == ndarray.ErrMalformed {
		class = errMalformed
	}
	return &msgError{class: class, offset: int64(e.Offset), detail: e.Detail, cause: e.Cause}
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
		return dst, fmt.Errorf("openpi: cannot send values nested more than %d deep (a map that holds itself?): %w", maxDepth, ndarray.ErrTooDeep)
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

// messageBound returns at least the number of bytes appendMessage writes
// for m (and extraKey: extraValue), so that their memory can be had
// before they are written: the arrays' data and the byte strings and
// strings exactly, a few bytes more than each other value takes; a value
// written through MarshalMessage is marshalled to be measured. It reports
// false for values nested more deeply than appendMessage writes (which
// then fails).
func messageBound(m map[string]any, extraKey string, extraValue any) (int64, bool) {
	n, ok := valueBound(m, 1)
	if extraKey != "" {
		v, vok := valueBound(extraValue, 2)
		n += 5 + int64(len(extraKey)) + v
		ok = ok && vok
	}
	return n, ok
}

// The most that a number, a header (of a map, list, string or byte string)
// and an array map besides its data and shape take.
const (
	boundNumber = 9
	boundHeader = 5
	boundArray  = 128
)

func valueBound(v any, depth int) (int64, bool) {
	if depth > maxDepth {
		return 0, false
	}
	switch x := v.(type) {
	case nil, bool:
		return 1, true
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, float32, float64:
		return boundNumber, true
	case string:
		return boundHeader + int64(len(x)), true
	case []byte:
		return boundHeader + int64(len(x)), true
	case *ndarray.Array:
		if x == nil {
			return 1, true
		}
		return arrayBound(x), true
	case ndarray.Array:
		return arrayBound(&x), true
	case map[string]any:
		n := int64(boundHeader)
		for k, e := range x {
			b, ok := valueBound(e, depth+1)
			if !ok {
				return 0, false
			}
			n += boundHeader + int64(len(k)) + b
		}
		return n, true
	case []any:
		n := int64(boundHeader)
		for _, e := range x {
			b, ok := valueBound(e, depth+1)
			if !ok {
				return 0, false
			}
			n += b
		}
		return n, true
	case map[string]*ndarray.Array:
		n := int64(boundHeader)
		for k, a := range x {
			n += boundHeader + int64(len(k)) + 1
			if a != nil {
				n += arrayBound(a)
			}
		}
		return n, true
	}
	b, err := ndpack.MessageOptions{Encoding: dialect.OpenPI, MaxDepth: maxDepth}.MarshalMessage(v)
	return int64(len(b)), err == nil
}

func arrayBound(a *ndarray.Array) int64 {
	return boundArray + boundNumber*int64(len(a.Shape)) + int64(len(a.Data))
}
