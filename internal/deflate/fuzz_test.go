package deflate

import (
	"bytes"
	"compress/flate"
	"io"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/frames"
)

// Whatever the bytes, the level and the cut between history and data, the
// stream decodes to the data, and the same call writes the same bytes.
func FuzzAppend(f *testing.F) {
	f.Add([]byte{}, uint8(6), uint16(0), false)
	f.Add([]byte("abcabcabcabcabd"), uint8(6), uint16(3), true)
	f.Add(bytes.Repeat([]byte{0}, 600), uint8(1), uint16(0), false)
	f.Add(frames.Camera(1, 25, 1)[:4096], uint8(9), uint16(1000), true)
	f.Add(frames.Camera(1, 10, 2)[:2048], uint8(0), uint16(17), false)
	f.Fuzz(func(t *testing.T, data []byte, level uint8, start uint16, final bool) {
		l := int(level % 11) // 10 is HuffmanOnly here
		if l == 10 {
			l = HuffmanOnly
		}
		s := min(int(start), len(data))
		e, err := NewEncoder(l)
		if err != nil {
			t.Fatal(err)
		}
		z := e.Append(nil, data, s, final)
		if !bytes.Equal(z, e.Append(nil, data, s, final)) {
			t.Fatal("a second call wrote other bytes")
		}
		if !final {
			// A sync flush ends the stream; a final empty block closes it.
			z = append(z, 3, 0)
		}
		var dict []byte
		if s > 0 {
			dict = data[:s]
		}
		decodeDict(t, z, dict, data[s:])
	})
}

// decodeDict is decode with a dictionary, which only compress/flate takes.
func decodeDict(t *testing.T, z, dict, want []byte) {
	t.Helper()
	if len(dict) == 0 {
		decode(t, z, want, "the stream")
		return
	}
	got, err := io.ReadAll(flate.NewReaderDict(bytes.NewReader(z), dict))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("compress/flate reads %d of %d bytes, equal %v: %v", len(got), len(want), bytes.Equal(got, want), err)
	}
}
