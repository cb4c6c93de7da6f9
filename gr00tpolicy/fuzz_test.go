package gr00tpolicy

import (
	"bytes"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// FuzzDecode: no message, however made, panics the decoder or takes more
// than a bounded multiple of its size; what decodes encodes again and
// decodes to the same values.
func FuzzDecode(f *testing.F) {
	modalities := map[string]any{}
	for name, mc := range modality() {
		modalities[name] = mc.wire()
	}
	small := map[string]any{
		"state": must(ndarray.FromSlice([]float32{1, 2, 3}, 3)),
		"flag":  ndarray.Scalar(true),
		"text":  "pick",
		"list":  []any{1, -2, 3.5, nil, []byte("raw")},
	}
	for _, v := range []any{
		ordered{{"endpoint", "get_action"}, {"data", ordered{{"observation", small}, {"options", nil}}}, {"api_token", "t"}},
		modalities,
		[]any{small, map[string]any{"calls": 1}},
		ordered{{"error", "Unknown endpoint: x"}},
	} {
		b, err := encode(nil, v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(arrayMap([]byte("\x93NUMPY\x01\x00v\x00{'descr': '|O', 'fortran_order': False, 'shape': (3,), }")))
	f.Add(append(bytes.Repeat([]byte{0x91}, 600), 0xc0))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := decode(b, nil)
		if err != nil {
			return
		}
		again, err := encode(nil, v)
		if err != nil {
			return // a value GR00T's wire cannot write (a record array's map, say)
		}
		w, err := decode(again, nil)
		if err != nil {
			t.Fatalf("what decoded does not decode once encoded again: %v", err)
		}
		if err := sameValue(v, w, "message"); err != nil {
			t.Fatalf("decoded, encoded and decoded again: %v", err)
		}
	})
}
