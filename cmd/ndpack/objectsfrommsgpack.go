package main

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/npybridge"
)

// listObjects is the array source of a msgpack list holding no array,
// read with --objects: an object array of shape (len,) whose elements are
// the list's values as Python's msgpack.unpackb(raw=False) gives them
// (None, bool, int, float, str, bytes, list, dict), so that convert writes
// what np.array(values, dtype=object) would hold (ragged lists stay
// lists). b holds the list and nothing after it.
func listObjects(b []byte) arraySource {
	return arraySource{
		// An object array: read through objects, as a pickled one is.
		err: errors.New("msgpack: a list of values, read as an object array"),
		objects: func() (*npybridge.ObjectArray, error) {
			n, rest, err := mpwire.ReadArrayHeaderBytes(b)
			if err != nil {
				return nil, fmt.Errorf("msgpack: %w", err)
			}
			values := make([]any, 0, min(n, len(rest)))
			for i := 0; i < n; i++ {
				var v any
				if v, rest, err = msgpackValue(rest, 1); err != nil {
					return nil, fmt.Errorf("msgpack: list item %d: %w", i, err)
				}
				values = append(values, v)
			}
			if len(rest) != 0 {
				return nil, fmt.Errorf("msgpack: %d %s after the list", len(rest), plural(int64(len(rest)), "byte"))
			}
			return &npybridge.ObjectArray{Shape: []int{len(values)}, Values: values}, nil
		},
	}
}

// msgpackValue decodes the value b starts with as a value of an object
// array. Every value takes at least one byte of b, so the values made are
// at most len(b), and lists and maps nest at most mpwalk.DefaultMaxDepth.
func msgpackValue(b []byte, depth int) (v any, rest []byte, err error) {
	if depth > mpwalk.DefaultMaxDepth {
		return nil, nil, fmt.Errorf("nested more than %d deep", mpwalk.DefaultMaxDepth)
	}
	switch t := mpwire.NextType(b); t {
	case mpwire.NilType:
		rest, err = mpwire.ReadNilBytes(b)
		return nil, rest, err
	case mpwire.BoolType:
		return wrap(mpwire.ReadBoolBytes(b))
	case mpwire.IntType:
		return wrap(mpwire.ReadIntBytes(b))
	case mpwire.UintType:
		x, rest, err := mpwire.ReadUintBytes(b)
		if x <= 1<<63-1 {
			return int64(x), rest, err
		}
		return x, rest, err
	case mpwire.Float32Type, mpwire.Float64Type:
		return wrap(mpwire.ReadFloat64Bytes(b))
	case mpwire.StrType:
		s, rest, err := mpwire.ReadStringZC(b)
		return string(s), rest, err
	case mpwire.BinType:
		s, rest, err := mpwire.ReadBytesZC(b)
		return append([]byte{}, s...), rest, err
	case mpwire.ArrayType:
		n, rest, err := mpwire.ReadArrayHeaderBytes(b)
		if err != nil {
			return nil, nil, err
		}
		items := make([]any, 0, min(n, len(rest)))
		for range n {
			var x any
			if x, rest, err = msgpackValue(rest, depth+1); err != nil {
				return nil, nil, err
			}
			items = append(items, x)
		}
		return items, rest, nil
	case mpwire.MapType:
		n, rest, err := mpwire.ReadMapHeaderBytes(b)
		if err != nil {
			return nil, nil, err
		}
		items := make(npybridge.Dict, 0, min(n, len(rest)/2))
		for range n {
			var k, x any
			if k, rest, err = msgpackValue(rest, depth+1); err != nil {
				return nil, nil, err
			}
			switch k.(type) {
			case []any, npybridge.Dict:
				return nil, nil, fmt.Errorf("a map key that is a %s, which a Python dict cannot hold", pythonType(k))
			}
			if x, rest, err = msgpackValue(rest, depth+1); err != nil {
				return nil, nil, err
			}
			items = append(items, npybridge.DictItem{Key: k, Value: x})
		}
		return items, rest, nil
	case mpwire.ExtType:
		typ, _, _, err := mpwire.ReadExtHeaderBytes(b)
		if err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("an ext %d value (an array?) in a list of values, which --objects does not read yet", typ)
	}
	_, err = mpwire.ReadNilBytes(b) // says what is wrong with b
	return nil, nil, err
}

func wrap[T any](v T, rest []byte, err error) (any, []byte, error) { return v, rest, err }
