package ndpack_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// FuzzUnmarshalMessage checks that no message panics, overflows the stack
// or allocates past a small multiple of its size, whatever it is decoded
// into; that a failure is one of the codecs' errors; that recognising the
// dialects never makes the checked decode accept what it refuses without
// them; and that what it accepts is what the msgpack library itself
// reads.
func FuzzUnmarshalMessage(f *testing.F) {
	for _, seed := range conformance.Seeds("ext110") {
		f.Add(seed)
	}
	// The real packers' messages; under CI the corpus must be there.
	names, _ := filepath.Glob(filepath.Join(dialectCorpus, "*.msgpack"))
	if len(names) == 0 && os.Getenv("CI") != "" {
		f.Fatalf("no messages in %s, which CI requires", dialectCorpus)
	}
	for _, name := range names {
		if b, err := os.ReadFile(name); err == nil && len(b) <= 1<<16 {
			f.Add(b)
		}
	}
	for _, in := range hostile.Inputs() {
		if len(in.Bytes) <= 1<<16 {
			f.Add(in.Bytes)
		}
	}
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	for _, d := range []dialect.Dialect{dialect.MsgpackNumpy, dialect.OpenPI} {
		msg, _ := ndpack.MessageOptions{Encoding: d}.MarshalMessage(map[string]any{"x": []any{a, 2, "s"}, "y": a})
		f.Add(msg)
	}
	f.Add(hostile.NestedRequest(600))
	msg, _ := msgpack.Marshal(map[string]any{"ver": "1.0", "id": 3, "result": []any{a, map[string]any{"x": a}, nil, 1.5}})
	f.Add(msg)
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := ndpack.MessageOptions{NoCopy: true}.UnmarshalMessage(in, &v)
		runtime.ReadMemStats(&after)
		// The walk refuses what would cost more than 48 times the input
		// plus 4 MiB, estimated within a third; a count or length the
		// bytes do not hold would cost millions of times more.
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 80*uint64(len(in))+5<<20 {
			t.Fatalf("%d bytes allocated for a %d-byte message", alloc, len(in))
		}
		var arrays []*ndarray.Array
		_ = ndpack.MessageOptions{}.UnmarshalMessage(in, &arrays)
		var plain any
		perr := ndpack.MessageOptions{NoDialects: true}.UnmarshalMessage(in, &plain)
		if err != nil {
			if !errors.As(err, new(*ndarray.Error)) {
				t.Fatalf("error is not an *ndarray.Error: %T %v", err, err)
			}
			return
		}
		if perr != nil {
			t.Fatalf("accepted with dialects what ext 110 alone refused: %v", perr)
		}
		// Accepted: it is exactly one well-formed value, which the
		// library re-encodes and the checked decoder reads again.
		back, merr := msgpack.Marshal(plain)
		if merr != nil {
			return // e.g. maps with non-string keys decode but do not all encode
		}
		var again any
		if err := (ndpack.MessageOptions{NoDialects: true}).UnmarshalMessage(back, &again); err != nil {
			t.Fatalf("re-encoded message refused: %v", err)
		}
	})
}
