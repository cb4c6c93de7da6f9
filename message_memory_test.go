package ndpack_test

import (
	"runtime"
	"testing"
	"unsafe"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// A message's arrays decode with their data aligned for their items, in
// one payload-sized allocation, so ndarray.Values reads them in place
// instead of copying them a second time (16.8 MB allocated per 8 MiB
// array before).
func TestUnmarshalMessageAlignsData(t *testing.T) {
	const n = 1 << 20 // 8 MiB of <f8
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	a, _ := ndarray.FromSlice(v)
	for _, prefix := range []string{"", "x", "xyz", "sixteen bytes!!"} { // shift the payload in the message
		msg, err := msgpack.Marshal(map[string]any{"id": prefix, "result": a})
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := (ndpack.MessageOptions{}).UnmarshalMessage(msg, &m); err != nil {
			t.Fatal(err)
		}
		got := m["result"].(*ndarray.Array)
		vals, err := ndarray.Values[float64](got)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if addr := uintptr(unsafe.Pointer(&got.Data[0])); addr%8 != 0 {
			t.Errorf("prefix %q: data at an address %% 8 = %d", prefix, addr%8)
		}
		if &vals[0] != (*float64)(unsafe.Pointer(&got.Data[0])) {
			t.Errorf("prefix %q: Values copied the data", prefix)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20+1<<20 {
			t.Errorf("prefix %q: %d bytes allocated for an 8 MiB array, want one payload", prefix, alloc)
		}
		if vals[n-1] != float64(n-1) {
			t.Errorf("prefix %q: last value %v", prefix, vals[n-1])
		}
	}
}

// MarshalMessage sizes the message first and writes it into one buffer of
// that size: an 8 MiB array costs one allocation of its size, and the
// bytes are msgpack.Marshal's.
func TestMarshalMessageExactSize(t *testing.T) {
	a, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), 1<<20)
	v := []any{1, map[string]any{"result": a}, "x"} // one key a map: msgpack.Marshal's order is its own
	want, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := ndpack.MessageOptions{}.MarshalMessage(v)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("MarshalMessage differs from msgpack.Marshal")
	}
	if cap(got) != len(got) {
		t.Errorf("buffer of %d for a %d-byte message: not sized exactly", cap(got), len(got))
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20+64<<10 {
		t.Errorf("%d bytes allocated for an 8 MiB array's message, want one buffer", alloc)
	}
}

// A message without large array data is its first draft, written once:
// the same bytes as msgpack.Marshal.
func TestMarshalMessageSmall(t *testing.T) {
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	v := []any{1, "x", map[string]any{"a": a}, []any{a, nil}}
	want, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ndpack.MessageOptions{}.MarshalMessage(v)
	if err != nil || string(got) != string(want) {
		t.Fatalf("MarshalMessage gave % x (%v), msgpack.Marshal % x", got, err, want)
	}
}

// NoCopy aliases the message where an array's data lies aligned for its
// items, allocating nothing payload-sized, and copies it once, aligned,
// where it does not: either way ndarray.Values reads it in place.
func TestNoCopyAliasesOnlyAlignedData(t *testing.T) {
	const n = 1 << 17 // 1 MiB of <f8
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)
	}
	a, _ := ndarray.FromSlice(v)
	obj, err := ext110.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	h, err := ext110.DecodeHeader(obj)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := msgpack.Marshal(map[string]any{"result": a})
	if err != nil {
		t.Fatal(err)
	}
	inMsg := len(msg) - len(obj) + h.DataOffset // {"result": comes first
	buf := make([]byte, len(msg)+16)
	aliased := 0
	for shift := 0; shift < 8; shift++ {
		for _, c := range []struct {
			name   string
			in     []byte
			at     int
			decode func([]byte) (*ndarray.Array, error)
		}{
			{"UnmarshalNoCopy", buf[shift : shift+len(obj)], h.DataOffset, ext110.UnmarshalNoCopy},
			{"UnmarshalMessage", buf[shift : shift+len(msg)], inMsg, func(b []byte) (*ndarray.Array, error) {
				var m map[string]*ndarray.Array
				err := ndpack.MessageOptions{NoCopy: true}.UnmarshalMessage(b, &m)
				return m["result"], err
			}},
		} {
			if c.name == "UnmarshalNoCopy" {
				copy(c.in, obj)
			} else {
				copy(c.in, msg)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			got, err := c.decode(c.in)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(c.name, err)
			}
			there := &c.in[c.at]
			alias := &got.Data[0] == there
			if aligned := uintptr(unsafe.Pointer(there))%8 == 0; alias != aligned {
				t.Errorf("%s, data at address %% 8 = %d in the input: aliases it %v", c.name, uintptr(unsafe.Pointer(there))%8, alias)
			}
			if alias {
				aliased++
				if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
					t.Errorf("%s: %d bytes allocated to alias a 1 MiB array", c.name, alloc)
				}
			}
			vals, err := ndarray.Values[float64](got)
			if err != nil || &vals[0] != (*float64)(unsafe.Pointer(&got.Data[0])) || vals[n-1] != float64(n-1) {
				t.Errorf("%s, shift %d: Values copied or differs (%v)", c.name, shift, err)
			}
		}
	}
	if aliased != 2 {
		t.Errorf("%d of 16 decodes aliased the input, want one shift for each decoder", aliased)
	}
}
