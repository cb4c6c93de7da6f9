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
// value bare), each as jsonItem gives it.
func arrayValues(a *ndarray.Array) any {
	size := a.DType.ItemSize
	flat := make([]any, a.Len())
	for i := range flat {
		flat[i] = jsonItem(a.DType, a.Data[i*size:(i+1)*size])
	}
	return nest(flat, a.Shape)
}

// jsonItem is one item's JSON value: a record an object of its fields by
// name, in the record's order (a subarray field a list nested by its
// shape), a datetime64 its ISO text as numpy prints it, a timedelta64
// its count of the unit ("NaT" for either's NaT), and the others as
// formatItem writes them (numbers, "NaN", [re, im], text).
func jsonItem(dt ndarray.DType, b []byte) any {
	switch {
	case dt.IsRecord():
		fields := dt.Fields()
		obj := make(orderedObject, len(fields))
		for i, f := range fields {
			fdt, shape := leafDType(f)
			n, _ := ndarray.NumElements(shape)
			size := fdt.ItemSize
			vals := make([]any, n)
			for k := range vals {
				at := f.Offset + k*size
				vals[k] = jsonItem(fdt, b[at:at+size])
			}
			obj[i] = jsonMember{f.Name, nest(vals, shape)}
		}
		return obj
	case dt.Kind == 'M':
		s, ok := datetimeString(int64Of(dt, b), dt.Unit)
		if !ok {
			return int64Of(dt, b) // generic: the bare count
		}
		return s
	case dt.Kind == 'm':
		if v := int64Of(dt, b); v != nat {
			return v
		}
		return "NaT"
	}
	return formatItem(dt, b)
}

// orderedObject is a JSON object whose members keep their order (a record's
// fields), which a Go map would sort.
type orderedObject []jsonMember

type jsonMember struct {
	name  string
	value any
}

// MarshalJSON writes the members in order, text unescaped for HTML as
// writeJSONLine writes the rest.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := enc.Encode(m.name); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1) // the Encoder's newline
		b.WriteByte(':')
		if err := enc.Encode(m.value); err != nil {
			return nil, err
		}
		b.Truncate(b.Len() - 1)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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
