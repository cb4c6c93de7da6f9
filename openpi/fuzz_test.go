package openpi

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeMessage: no message panics the decoder, and what it decodes
// (and can send again) encodes to bytes that decode to the same encoding:
// the decoder and encoder agree. Seeded from openpi's own packer's arrays
// (../shared/corpus/dialects, each as a value of a map), from messages
// of this package, and from hostile ones (values that cost many times
// their bytes, whole and cut short; a dtype that is an escape sequence).
func FuzzDecodeMessage(f *testing.F) {
	files, _ := filepath.Glob("../../shared/corpus/dialects/pi_*.msgpack")
	if len(files) == 0 && os.Getenv("CI") != "" {
		f.Fatal("../shared/corpus/dialects is required in CI")
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append([]byte{0x81, 0xa3, 'o', 'b', 's'}, b...))
	}
	for _, obs := range []map[string]any{observation(f), {}, {"a": map[string]any{"b": []any{nil}}}} {
		b, err := appendMessage(nil, obs, "server_timing", map[string]any{"infer_ms": 1.5})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, h := range hostileMessages() {
		if len(h.msg) < 1<<16 {
			f.Add(h.msg)
		}
	}
	f.Add(escapeDTypeMessage())
	for _, msg := range costMessages(f, 1000) {
		f.Add(msg)
		f.Add(msg[:len(msg)/2]) // cut short
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMessage(b)
		if err != nil {
			return
		}
		once, err := appendMessage(nil, m, "", nil)
		if err != nil {
			return // decodable, not sendable: a complex or record array
		}
		m2, err := decodeMessage(once)
		if err != nil {
			t.Fatalf("re-encoded message does not decode: %v\n%x", err, once)
		}
		twice, err := appendMessage(nil, m2, "", nil)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("encodings differ: %v\n%x\n%x", err, once, twice)
		}
	})
}
