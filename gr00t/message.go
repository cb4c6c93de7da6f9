package gr00t

import (
	"bytes"
	"fmt"
	"sort"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/vmihailenco/msgpack/v5"
)

// ordered is a msgpack map whose keys keep their order, as a Python dict
// keeps its insertion order: for the request envelope and the
// dataclasses, which GR00T writes in a fixed order.
type ordered []kv

type kv struct {
	k string
	v any
}

// EncodeMsgpack writes o as a map in its order.
func (o ordered) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := e.EncodeMapLen(len(o)); err != nil {
		return err
	}
	for _, p := range o {
		if err := e.EncodeString(p.k); err != nil {
			return err
		}
		if err := e.Encode(p.v); err != nil {
			return err
		}
	}
	return nil
}

const ndarrayClass = "__ndarray_class__"

// encode writes a message.
func encode(v any) ([]byte, error) {
	t, err := toWire(v, 0)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	enc.UseCompactFloats(false)
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func toWire(v any, depth int) (any, error) {
	if depth > 512 {
		return nil, fmt.Errorf("gr00t: a value nests more than 512 levels")
	}
	switch v := v.(type) {
	case *ndarray.Array:
		var b bytes.Buffer
		if err := npybridge.Write(&b, v); err != nil {
			return nil, err
		}
		return ordered{{ndarrayClass, true}, {"as_npy", b.Bytes()}}, nil
	case map[string]any:
		if v == nil {
			return nil, nil // None, as a nil map means
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := make(ordered, len(keys))
		for i, k := range keys {
			w, err := toWire(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			o[i] = kv{k, w}
		}
		return o, nil
	case ordered:
		o := make(ordered, len(v))
		for i, p := range v {
			w, err := toWire(p.v, depth+1)
			if err != nil {
				return nil, err
			}
			o[i] = kv{p.k, w}
		}
		return o, nil
	case []any:
		l := make([]any, len(v))
		for i, x := range v {
			w, err := toWire(x, depth+1)
			if err != nil {
				return nil, err
			}
			l[i] = w
		}
		return l, nil
	}
	return v, nil
}

// decode reads a message.
func decode(b []byte, max int64) (any, error) {
	n, err := mpwalk.Len(b, mpwalk.Limits{MaxDepth: mpwalk.DefaultMaxDepth, MaxExpansion: mpwalk.DefaultMaxExpansion})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if n != len(b) {
		return nil, fmt.Errorf("%w: %d bytes after the message", ErrMalformed, len(b)-n)
	}
	var v any
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return fromWire(v, max, 0)
}

func fromWire(v any, max int64, depth int) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v[ndarrayClass]; ok {
			npy, ok := v["as_npy"].([]byte)
			if !ok {
				return nil, fmt.Errorf("%w: an array map without as_npy bytes", ErrMalformed)
			}
			return npybridge.Read(bytes.NewReader(npy))
		}
		for k, x := range v {
			w, err := fromWire(x, max, depth+1)
			if err != nil {
				return nil, err
			}
			v[k] = w
		}
	case []any:
		for i, x := range v {
			w, err := fromWire(x, max, depth+1)
			if err != nil {
				return nil, err
			}
			v[i] = w
		}
	}
	return v, nil
}
