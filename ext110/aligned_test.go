package ext110

import (
	"runtime"
	"testing"
	"unsafe"

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
		if err := UnmarshalMessage(msg, &m); err != nil {
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
	a, _ := ndarray.Zeros(ndarray.Float64, 1<<20)
	v := []any{1, map[string]any{"result": a}, "x"} // one key a map: msgpack.Marshal's order is its own
	want, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := MarshalMessage(v)
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
	got, err := MarshalMessage(v)
	if err != nil || string(got) != string(want) {
		t.Fatalf("MarshalMessage gave % x (%v), msgpack.Marshal % x", got, err, want)
	}
}
