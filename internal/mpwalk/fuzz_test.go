package mpwalk

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/vmihailenco/msgpack/v5"
)

func FuzzRead(f *testing.F) {
	for _, s := range conformance.Seeds("ext110") {
		f.Add(s)
	}
	b, _ := msgpack.Marshal(map[string]any{"ver": "1.0", "method": "m", "id": 1, "params": []any{1.5, "x", nil, []byte{1}}})
	f.Add(b)
	f.Add([]byte{0xdf, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Read(bufio.NewReader(bytes.NewReader(in)), 1<<16, Limits{})
		if !bytes.HasPrefix(in, got) {
			t.Fatal("returned bytes that are not the input's")
		}
		if err != nil {
			return
		}
		// The bytes are exactly one value: walking them again takes all.
		n, err := Value(&collector{r: bufio.NewReader(bytes.NewReader(got)), chunks: new(boundedio.Chunks)}, int64(len(got)), Limits{})
		if err != nil || n != int64(len(got)) {
			t.Fatalf("re-walk took %d of %d bytes: %v", n, len(got), err)
		}
		// Whatever the msgpack library reads as one value, the walker
		// agrees on its length.
		dec := msgpack.NewDecoder(bytes.NewReader(in))
		if raw, err := dec.DecodeRaw(); err == nil && !bytes.Equal(raw, got) {
			t.Fatalf("walker took %d bytes, the msgpack library %d", len(got), len(raw))
		}
	})
}
