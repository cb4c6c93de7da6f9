package ext110

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// fuzzSeeds are the ext 110 files of the conformance corpus, valid objects of several shapes and forms plus the
// hand-made malformed ones of the decode tests.
func fuzzSeeds(f *testing.F) {
	for _, seed := range conformance.Seeds("ext110") {
		f.Add(seed)
	}
	f.Add(arange6)
	for _, ts := range []string{"|b1", "<i2", ">f8", "<c16", "|S3", "<U2", "<M8[ns]"} {
		dt := ndarray.MustParseDType(ts)
		for _, shape := range [][]int{{}, {0}, {3}, {2, 2}} {
			n, _ := ndarray.ByteSize(dt, shape)
			a, _ := ndarray.New(dt, shape, bytes.Repeat([]byte{1}, n))
			b, _ := Options{AllowNonstandard: true}.Marshal(a)
			f.Add(b)
		}
	}
	data := []byte{1, 0, 2, 0, 3, 0}
	f.Add(ext32(mpMap(mpStr("data"), mpStr(string(data)), mpStr("strides"), []byte{0xc0},
		mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 0xd3, 0, 0, 0, 0, 0, 0, 0, 3})))
	f.Add(ext8(mpMap(mpStr("descr"), []byte{0x91, 0x92, 0xa0, 0xa3, '<', 'u', '2'}, mpStr("x"), []byte{0xdf, 0, 0, 0, 1, 0xc0, 0xc0})))
	f.Add([]byte{0xc9, 0xff, 0xff, 0xff, 0xff, 110, 0x84})
}

func FuzzUnmarshal(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := Unmarshal(in)
		z, zerr := UnmarshalNoCopy(in)
		if (err == nil) != (zerr == nil) {
			t.Fatalf("Unmarshal: %v, UnmarshalNoCopy: %v", err, zerr)
		}
		if err != nil {
			return
		}
		if !a.Equal(z) {
			t.Fatal("copying and aliasing decodes differ")
		}
		if verr := a.Validate(); verr != nil {
			t.Fatalf("decoded an invalid array: %v", verr)
		}
		out, err := Options{AllowNonstandard: true}.Marshal(a)
		if err != nil {
			t.Fatalf("cannot re-encode a decoded array: %v", err)
		}
		back, err := Unmarshal(out)
		if err != nil || !back.Equal(a) {
			t.Fatalf("re-encoded array does not decode to itself: %v", err)
		}
	})
}

func FuzzDecoder(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		dec := NewDecoder(bytes.NewReader(in))
		for i := 0; ; i++ {
			a, err := dec.Decode()
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			if verr := a.Validate(); verr != nil {
				t.Fatalf("decoded an invalid array: %v", verr)
			}
			if i == 0 {
				// A single object decodes the same both ways.
				if one, err := Unmarshal(in); err == nil && !one.Equal(a) {
					t.Fatal("stream and Unmarshal disagree")
				}
			}
		}
	})
}

// FuzzUnmarshalMessage checks that no whole message panics, overflows the
// stack or allocates past a small multiple of its size, and that what it
// accepts is what the msgpack library itself reads.
func FuzzUnmarshalMessage(f *testing.F) {
	fuzzSeeds(f)
	for _, in := range hostile.Inputs() {
		if len(in.Bytes) <= 1<<16 {
			f.Add(in.Bytes)
		}
	}
	f.Add(hostile.NestedRequest(600))
	a, _ := ndarray.FromSlice([]float32{1, 2, 3})
	msg, _ := msgpack.Marshal(map[string]any{"ver": "1.0", "id": 3, "result": []any{a, map[string]any{"x": a}, nil, 1.5}})
	f.Add(msg)
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := UnmarshalMessage(in, &v)
		runtime.ReadMemStats(&after)
		// The walk refuses what would cost more than 48 times the input
		// plus 4 MiB, estimated within a third; a count or length the
		// bytes do not hold would cost millions of times more.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 80*uint64(len(in))+5<<20 {
			t.Fatalf("%d bytes allocated for a %d-byte message", alloc, len(in))
		}
		var arrays []*ndarray.Array
		_ = UnmarshalMessage(in, &arrays)
		// The MapDecoder and no-copy paths decode through a reader of their
		// own: the same bounds, the same verdict on well-formed msgpack.
		var vd any
		notMine := func([]byte) (any, int, error) { return nil, 0, nil }
		derr := MessageOptions{MapDecoder: notMine, NoCopy: true}.UnmarshalMessage(in, &vd)
		if err != nil && derr == nil {
			t.Fatalf("accepted with dialects what the plain decode refused: %v", err)
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error is not an *ext110.Error: %v", err)
			}
			return
		}
		// Accepted: it is exactly one well-formed value, which the
		// library re-encodes and the checked decoder reads again.
		back, merr := msgpack.Marshal(v)
		if merr != nil {
			return // e.g. maps with non-string keys decode but do not all encode
		}
		var again any
		if err := UnmarshalMessage(back, &again); err != nil {
			t.Fatalf("re-encoded message refused: %v", err)
		}
	})
}
