package ndpack_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ndarray"
)

// TestAppendMessage: AppendMessage writes MarshalMessage's bytes after
// dst's, in every encoding, allocates nothing for the message where dst's
// capacity holds it (an 8 MiB array included), and leaves dst as it was
// when it fails.
func TestAppendMessage(t *testing.T) {
	big, _ := ndarray.Zeros(ndarray.MustParseDType("<f4"), 1024, 2048)
	small, _ := ndarray.FromSlice([]int16{1, 2, 3})
	v := map[string]any{"big": big, "small": small, "n": 7, "s": "text"}
	for _, d := range []dialect.Dialect{0, dialect.MsgpackNumpy, dialect.OpenPI, dialect.GR00T} {
		o := ndpack.MessageOptions{Encoding: d}
		want, err := o.MarshalMessage(v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := o.AppendMessage([]byte("head"), v)
		if err != nil || !bytes.Equal(got, append([]byte("head"), want...)) {
			t.Fatalf("%v: AppendMessage after a head differs from MarshalMessage (%v)", d, err)
		}
		buf := make([]byte, 0, len(want))
		out, _ := o.AppendMessage(buf[:0], v)
		if &out[0] != &buf[:1][0] || !bytes.Equal(out, want) {
			t.Errorf("%v: the message was not written into the buffer given", d)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 5 {
			o.AppendMessage(buf[:0], v)
		}
		runtime.ReadMemStats(&after)
		if n := (after.TotalAlloc - before.TotalAlloc) / 5; n > 64<<10 {
			t.Errorf("%v: %d bytes allocated for a message of %d written into a buffer that holds it", d, n, len(want))
		}
	}
	bad := map[string]any{"c": make(chan int)}
	dst := []byte("head")
	out, err := ndpack.MessageOptions{}.AppendMessage(dst, bad)
	if err == nil || string(out) != "head" {
		t.Errorf("a failure returned %q, %v", out, err)
	}
}
