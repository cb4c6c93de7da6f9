package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
)

// FuzzMsgpackArrays: what the command reads of a msgpack file (the framing
// of ext 110 and dialect arrays, map keys) never panics, and every array it
// describes lies inside the input.
func FuzzMsgpackArrays(f *testing.F) {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	ext, _ := ext110.Marshal(a)
	f.Add(ext)
	for _, d := range []dialect.Dialect{dialect.MsgpackNumpy, dialect.OpenPI} {
		b, _ := d.Marshal(a)
		f.Add(b)
		f.Add(append([]byte{0x82, 0xa1, 'a'}, append(b, append([]byte{0xa1, 'b'}, ext...)...)...))
	}
	files, _ := filepath.Glob("../../../shared/corpus/dialects/*.msgpack")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<14 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fa := &fileArrays{}
		err := fa.msgpackArrays(in, func(off, n int64) io.ReadCloser {
			if off < 0 || n < 0 || off+n > int64(len(in)) {
				t.Fatalf("array data [%d, %d) outside a %d-byte input", off, off+n, len(in))
			}
			return io.NopCloser(nil)
		}, func(fn func() error) error { return fn() })
		if err != nil {
			return
		}
		for _, s := range fa.all() {
			if s.err == nil {
				s.open()
			}
		}
	})
}
