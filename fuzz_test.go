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
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
)

// FuzzUnmarshalMessage checks that no message decoded with the dialects
// panics, overflows the stack or allocates past a small multiple of its
// size; that a failure is one of the codecs' errors; and that recognising
// the dialects never makes the checked decode accept what it refuses
// without them.
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
	f.Fuzz(func(t *testing.T, in []byte) {
		var v any
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := ndpack.MessageOptions{NoCopy: true}.UnmarshalMessage(in, &v)
		runtime.ReadMemStats(&after)
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 80*uint64(len(in))+5<<20 {
			t.Fatalf("%d bytes allocated for a %d-byte message", alloc, len(in))
		}
		if err == nil {
			var plain any
			if perr := (ext110.MessageOptions{}).UnmarshalMessage(in, &plain); perr != nil {
				t.Fatalf("accepted with dialects what ext 110 alone refused: %v", perr)
			}
			return
		}
		var e110 *ndarray.Error
		var ed *ndarray.Error
		if !errors.As(err, &e110) && !errors.As(err, &ed) {
			t.Fatalf("error is neither an *ndarray.Error nor a *ndarray.Error: %T %v", err, err)
		}
	})
}
