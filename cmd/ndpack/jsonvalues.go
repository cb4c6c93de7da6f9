package main

import (
	"bytes"
	"encoding/json"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"

	"github.com/ndpack/ndpack/ndarray"
)

// writeJSONLine writes v (a call's result, a value read from a file) as
// one line of JSON: maps with sorted keys, arrays as {"dtype", "shape",
// "values"} with the values nested by the shape, as numpy's tolist nests
// them, each value in inspect's JSON form (numbers, with "NaN", "+Inf" and
// "-Inf" as strings; booleans; text; [re, im] for complex numbers). No
// control character is written raw, even where JSON allows it
// (escapeJSON).
func writeJSONLine(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(jsonValue(v)); err != nil {
		return err
	}
	_, err := w.Write(peertext.JSON(b.Bytes()))
	return err
}

// jsonValue turns v into what encoding/json writes as wanted: arrays as
// objects of their values, bytes as their text, and floats that JSON
// cannot hold as inspect writes them.
func jsonValue(v any) any {
	switch x := v.(type) {
	case *ndarray.Array:
		shape := x.Shape
		if shape == nil {
			shape = []int{}
		}
		return map[string]any{"dtype": x.DType.String(), "shape": shape, "values": arrayValues(x)}
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case float64:
		return floatNumber(x, 64)
	case float32:
		return floatNumber(float64(x), 32)
	case []byte:
		return string(x)
	}
	return v
}

// arrayValues returns a's values nested by its shape (a 0-d array's one
// value bare), each as formatItem gives it.
func arrayValues(a *ndarray.Array) any {
	size := a.DType.ItemSize
	flat := make([]any, a.Len())
	for i := range flat {
		flat[i] = formatItem(a.DType, a.Data[i*size:(i+1)*size])
	}
	return nest(flat, a.Shape)
}

// nest arranges row-major values as lists nested by shape; a 0-d array is
// its one value.
func nest(values []any, shape []int) any {
	if len(shape) == 0 {
		if len(values) == 1 {
			return values[0]
		}
		return nil
	}
	if len(shape) == 1 {
		return values
	}
	n := len(values) / max(shape[0], 1)
	out := make([]any, shape[0])
	for i := range out {
		out[i] = nest(values[i*n:(i+1)*n], shape[1:])
	}
	return out
}
