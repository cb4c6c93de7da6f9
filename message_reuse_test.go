package ndpack_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ndarray"
)

// TestUnmarshalMessageReusing: decoding messages of one shape into a
// ResultBuffer gives the values UnmarshalMessage gives, copies each array
// into the buffer's memory from the second call on (the same memory call
// after call) and allocates nothing the size of the arrays, in every
// encoding; with NoCopy, an array whose data lies misaligned in the
// message goes into the buffer too.
func TestUnmarshalMessageReusing(t *testing.T) {
	a, _ := ndarray.FromSlice(make([]float64, 1<<17), 1<<17) // 1 MiB
	for i := range 1 << 17 {
		a.Data[i*8] = byte(i)
	}
	b, _ := ndarray.FromSlice([]int16{1, 2, 3})
	for _, d := range []dialect.Dialect{0, dialect.MsgpackNumpy, dialect.OpenPI, dialect.GR00T} {
		for _, noCopy := range []bool{false, true} {
			msg, err := ndpack.MessageOptions{Encoding: d}.MarshalMessage(map[string]any{"a": a, "b": b, "n": 1})
			if err != nil {
				t.Fatal(err)
			}
			if noCopy {
				msg = append([]byte{0}, msg...)[1:] // the same bytes at another address: misaligned data stays misaligned
			}
			o := ndpack.MessageOptions{NoCopy: noCopy}
			var buf ndpack.ResultBuffer
			var first unsafe.Pointer
			var before, after runtime.MemStats
			for call := range 4 {
				if call == 2 {
					runtime.ReadMemStats(&before)
				}
				var m map[string]any
				if err := o.UnmarshalMessageReusing(msg, &m, &buf); err != nil {
					t.Fatalf("%v: %v", d, err)
				}
				got := m["a"].(*ndarray.Array)
				if !got.Equal(a) || !m["b"].(*ndarray.Array).Equal(b) || !got.Aligned() {
					t.Fatalf("%v, NoCopy %v: decoded %v", d, noCopy, got)
				}
				p := unsafe.Pointer(unsafe.SliceData(got.Data))
				inMsg := uintptr(p) >= uintptr(unsafe.Pointer(&msg[0])) && uintptr(p) < uintptr(unsafe.Pointer(&msg[0]))+uintptr(len(msg))
				switch {
				case noCopy && inMsg:
					// aliased where it lies aligned: nothing to reuse
				case call == 1:
					first = p
				case call > 1 && p != first:
					t.Errorf("%v, NoCopy %v: call %d copied the array elsewhere than the buffer", d, noCopy, call)
				}
			}
			runtime.ReadMemStats(&after)
			if n := (after.TotalAlloc - before.TotalAlloc) / 2; n > 64<<10 {
				t.Errorf("%v, NoCopy %v: %d bytes allocated a call into a ResultBuffer", d, noCopy, n)
			}
		}
	}
	var m map[string]any
	msg, _ := ndpack.MessageOptions{}.MarshalMessage(map[string]any{"a": a})
	if err := (ndpack.MessageOptions{}).UnmarshalMessageReusing(msg, &m, nil); err != nil || !m["a"].(*ndarray.Array).Equal(a) {
		t.Errorf("a nil ResultBuffer: %v", err)
	}
}
