package mpmsg_test

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"unsafe"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110" // registers the array types
	"github.com/ndpack/ndpack/internal/mpmsg"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// Marshal writes what msgpack.Marshal writes, arrays as the registered
// encoder writes them or in the Format asked for, into one buffer of the
// message's size.
func TestMarshal(t *testing.T) {
	small, _ := ndarray.FromSlice([]int16{1, 2, 3})
	big, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), 1<<15) // 256 KiB: counted in the draft
	for _, a := range []*ndarray.Array{small, big} {
		v := []any{"x", a, map[string]any{"a": a}, 7}
		want, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		exact := a == big // a message with large data is written once, sized
		got, err := mpmsg.Marshal(v, nil)
		if err != nil || !bytes.Equal(got, want) || exact && len(got) != cap(got) {
			t.Errorf("%v: %d bytes of %d capacity (%v), msgpack.Marshal %d", a, len(got), cap(got), err, len(want))
		}
		pi, _ := dialect.OpenPI.Marshal(a)
		got, err = mpmsg.Marshal([]any{a, "s"}, dialect.OpenPI)
		want = append(append([]byte{0x92}, pi...), 0xa1, 's')
		if err != nil || !bytes.Equal(got, want) || exact && len(got) != cap(got) {
			t.Errorf("%v as OpenPI: %d bytes of %d (%v)", a, len(got), cap(got), err)
		}
	}
	// The Format's refusal is the call's error.
	c, _ := ndarray.Zeros(ndarray.MustParseDType("<c8"), 2)
	if _, err := mpmsg.Marshal(map[string]any{"z": c}, dialect.OpenPI); !errors.Is(err, dialect.ErrUnsupported) {
		t.Errorf("complex as OpenPI: %v", err)
	}
}

// Unmarshal reads ext payloads in place, aliasing the message when asked
// to, and offers maps met as interface values to Maps with their offset.
func TestUnmarshal(t *testing.T) {
	a, _ := ndarray.FromSlice([]uint8{1, 2, 3, 4, 5, 6, 7, 8})
	msg, _ := msgpack.Marshal([]any{map[string]any{"k": 1}, a})
	var offered []int
	maps := func(b []byte, at int) (any, int, error) {
		offered = append(offered, at)
		if b[at] != 0x81 {
			t.Errorf("offered a map at %d, where byte 0x%02x is", at, b[at])
		}
		return nil, 0, nil
	}
	var v []any
	if err := mpmsg.Unmarshal(msg, &v, maps, true, nil); err != nil {
		t.Fatal(err)
	}
	got := v[1].(*ndarray.Array)
	inMsg := bytes.Index(msg, a.Data)
	if !got.Equal(a) || unsafe.SliceData(got.Data) != &msg[inMsg] {
		t.Errorf("%v does not alias the message", got)
	}
	if len(offered) != 1 || offered[0] != 1 || v[0].(map[string]any)["k"] != int8(1) {
		t.Errorf("offered maps at %v, decoded %v", offered, v[0])
	}
	// A map decoded by Maps: its value, its bytes skipped.
	v = nil
	if err := mpmsg.Unmarshal(msg, &v, func([]byte, int) (any, int, error) { return "mine", 4, nil }, false, nil); err != nil || v[0] != "mine" {
		t.Errorf("%v %v", v, err)
	}
	if got := v[1].(*ndarray.Array); unsafe.SliceData(got.Data) == &msg[inMsg] {
		t.Error("without alias the array aliases the message")
	}
	// Maps' error is the call's, as it is.
	mine := errors.New("mine")
	v = nil
	if err := mpmsg.Unmarshal(msg, &v, func([]byte, int) (any, int, error) { return nil, 0, mine }, false, nil); err != mine {
		t.Errorf("got %v", err)
	}
	// Outside Unmarshal, the registered decoder reads as msgpack does.
	v = nil
	if err := msgpack.Unmarshal(msg, &v); err != nil || !v[1].(*ndarray.Array).Equal(a) {
		t.Errorf("msgpack.Unmarshal: %v %v", v, err)
	}
}

// Calls running at once each get their own encoding and memory: a call's
// Format or aliasing never reaches another call, nor plain msgpack.
func TestConcurrentCalls(t *testing.T) {
	a, _ := ndarray.Zeros(ndarray.DTypeOf[uint8](), 1<<17) // 128 KiB: drafted; bytes, always aligned
	plain, _ := msgpack.Marshal([]any{a})
	pi, _ := dialect.OpenPI.Marshal(a)
	openpi := append([]byte{0x91}, pi...)
	h, err := ext110.DecodeHeader(plain[1:])
	if err != nil {
		t.Fatal(err)
	}
	data := &plain[1+h.DataOffset]
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				var got []byte
				var err error
				want := plain
				switch g % 4 {
				case 0:
					got, err = mpmsg.Marshal([]any{a}, dialect.OpenPI)
					want = openpi
				case 1:
					got, err = mpmsg.Marshal([]any{a}, nil)
				case 2:
					got, err = msgpack.Marshal([]any{a})
				case 3:
					var v []any
					if err = mpmsg.Unmarshal(plain, &v, nil, true, nil); err == nil && unsafe.SliceData(v[0].(*ndarray.Array).Data) != data {
						err = errors.New("an Unmarshal with alias copied")
					}
					var w []any
					if err == nil {
						if err = msgpack.Unmarshal(plain, &w); err == nil && unsafe.SliceData(w[0].(*ndarray.Array).Data) == data {
							err = errors.New("msgpack.Unmarshal aliased")
						}
					}
					got = want
				}
				if err == nil && !bytes.Equal(got, want) {
					err = fmt.Errorf("goroutine %d wrote %d bytes, want %d", g, len(got), len(want))
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
