package ndpack_test

import (
	"testing"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// mixedMessage is about 64 MiB of what services send: records of numbers,
// strings and small maps, with a small OpenPI array in every 50th.
func mixedMessage(b *testing.B) []byte {
	small, _ := ndarray.FromSlice([]float32{1, 2, 3, 4})
	var records []any
	for i := 0; len(records) < 700000; i++ {
		r := map[string]any{"id": i, "name": "channel", "gain": 1.5, "tags": []any{"a", "b"},
			"limits": map[string]any{"lo": -1, "hi": 1}}
		if i%50 == 0 {
			r["frame"] = map[string]any{"__ndarray__": true, "data": small.Data, "dtype": "<f4", "shape": []int{4}}
		}
		records = append(records, r)
	}
	msg, err := msgpack.Marshal(map[string]any{"records": records})
	if err != nil {
		b.Fatal(err)
	}
	return msg
}

// BenchmarkUnmarshalMessageDialects decodes mixed content, finding the
// dialect arrays in it; compare with BenchmarkUnmarshalMixedBaseline,
// msgpack.Unmarshal of the same bytes.
func BenchmarkUnmarshalMessageDialects(b *testing.B) {
	msg := mixedMessage(b)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	opts := ndpack.MessageOptions{Dialects: true, MaxExpansion: 1000}
	for b.Loop() {
		var v any
		if err := opts.UnmarshalMessage(msg, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalMixedBaseline(b *testing.B) {
	msg := mixedMessage(b)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := msgpack.Unmarshal(msg, &v); err != nil {
			b.Fatal(err)
		}
	}
}
