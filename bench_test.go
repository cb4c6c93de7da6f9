package ndpack_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// mixedMessage is about 64 MiB of what services send: records of numbers,
// strings and small maps, with a small OpenPI array in every 50th.
func mixedMessage(b *testing.B) []byte {
	small, _ := ndarray.FromSlice([]float32{1, 2, 3, 4})
	var records []any
	for i := 0; len(records) < 700000; i++ {
		r := map[string]any{"id": i, "name": "channel", "gain": 1.5, "tags": []any{"a", "b"},
			"limits": map[string]any{"lo": -1, "hi": 1}}
		if i%50 == 0 {
			r["frame"] = map[string]any{"__ndarray__": true, "data": small.Data, "dtype": "<f4", "shape": []int{4}}
		}
		records = append(records, r)
	}
	msg, err := msgpack.Marshal(map[string]any{"records": records})
	if err != nil {
		b.Fatal(err)
	}
	return msg
}

// BenchmarkUnmarshalMessageDialects decodes mixed content, finding the
// dialect arrays in it; compare with BenchmarkUnmarshalMixedBaseline,
// msgpack.Unmarshal of the same bytes.
func BenchmarkUnmarshalMessageDialects(b *testing.B) {
	msg := mixedMessage(b)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	opts := ndpack.MessageOptions{MaxExpansion: 1000}
	for b.Loop() {
		var v any
		if err := opts.UnmarshalMessage(msg, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalMixedBaseline(b *testing.B) {
	msg := mixedMessage(b)
	b.SetBytes(int64(len(msg)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := msgpack.Unmarshal(msg, &v); err != nil {
			b.Fatal(err)
		}
	}
}

const bigLen = 64 << 20

func bigNPY(b *testing.B) (*ndarray.Array, []byte) {
	a, err := ndarray.New(ndarray.DTypeOf[float64](), []int{bigLen / 8}, benchbase.Data(bigLen))
	if err != nil {
		b.Fatal(err)
	}
	var buf bytes.Buffer
	if err := npybridge.Write(&buf, a); err != nil {
		b.Fatal(err)
	}
	return a, buf.Bytes()
}

func bigFile(b *testing.B, name string, content []byte) string {
	p := filepath.Join(b.TempDir(), name)
	if err := os.WriteFile(p, content, 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkCopyFile64MiB is what cp does: io.Copy between files, which the
// kernel performs (copy_file_range).
func BenchmarkCopyFile64MiB(b *testing.B) {
	_, file := bigNPY(b)
	benchFileToFile(b, bigFile(b, "a.npy", file), func(w io.Writer, r io.Reader) error {
		_, err := io.Copy(w, r)
		return err
	})
}

func BenchmarkConvertNPYToExt110File64MiB(b *testing.B) {
	_, file := bigNPY(b)
	benchFileToFile(b, bigFile(b, "a.npy", file), ndpack.ConvertOptions{}.NPYToExt110)
}

func BenchmarkConvertExt110ToNPYFile64MiB(b *testing.B) {
	a, _ := bigNPY(b)
	blob, err := ext110.Marshal(a)
	if err != nil {
		b.Fatal(err)
	}
	benchFileToFile(b, bigFile(b, "a.ext", blob), ndpack.ConvertOptions{}.Ext110ToNPY)
}

func benchFileToFile(b *testing.B, in string, conv func(io.Writer, io.Reader) error) {
	out := filepath.Join(b.TempDir(), "out")
	b.SetBytes(bigLen)
	for b.Loop() {
		r, err := os.Open(in)
		if err != nil {
			b.Fatal(err)
		}
		w, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		if err := conv(w, r); err != nil {
			b.Fatal(err)
		}
		r.Close()
		w.Close()
	}
}

// The conversions each way against a file copy of the same input (io.Copy
// between files, which is copy_file_range, as cp does), in turn in each
// iteration: x-baseline is the median ratio of their times.
func BenchmarkConvertNPYToExt110File64MiBVsCopy(b *testing.B) {
	_, file := bigNPY(b)
	benchConvertVsCopy(b, bigFile(b, "a.npy", file), ndpack.ConvertOptions{}.NPYToExt110)
}

func BenchmarkConvertExt110ToNPYFile64MiBVsCopy(b *testing.B) {
	a, _ := bigNPY(b)
	blob, err := ext110.Marshal(a)
	if err != nil {
		b.Fatal(err)
	}
	benchConvertVsCopy(b, bigFile(b, "a.ext", blob), ndpack.ConvertOptions{}.Ext110ToNPY)
}

func benchConvertVsCopy(b *testing.B, in string, conv func(io.Writer, io.Reader) error) {
	dir := b.TempDir()
	run := func(out string, conv func(io.Writer, io.Reader) error) func() {
		return func() {
			r, err := os.Open(in)
			if err != nil {
				b.Fatal(err)
			}
			defer r.Close()
			w, err := os.Create(filepath.Join(dir, out))
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			if err := conv(w, r); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.SetBytes(bigLen)
	benchbase.Versus(b, run("converted", conv), run("copied", func(w io.Writer, r io.Reader) error {
		_, err := io.Copy(w, r)
		return err
	}))
}

// The message rows of the performance table: an 8 MiB <f8 array in a
// message, encoded and decoded (and read as []float64, which copies again
// if the data is misaligned), each against make+copy of the same bytes in
// the same iteration.
// requireAllocated fails b when f allocates more than most bytes (the
// mean over three calls).
func requireAllocated(b *testing.B, most int, f func()) {
	b.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 3 {
		f()
	}
	runtime.ReadMemStats(&after)
	if n := (after.TotalAlloc - before.TotalAlloc) / 3; n > uint64(most) {
		b.Fatalf("%d bytes allocated a call, more than %d: a copy was added", n, most)
	}
}

func BenchmarkMessage8MiBVsMakeCopy(b *testing.B) {
	a, _ := ndarray.FromSlice(make([]float64, 1<<20))
	copy(a.Data, benchbase.Data(len(a.Data)))
	makeCopy := func() { benchbase.Sink = append([]byte(nil), a.Data...) }
	for _, c := range []struct {
		name string
		opts ndpack.MessageOptions
	}{{"ext110", ndpack.MessageOptions{}}, {"msgpack-numpy", ndpack.MessageOptions{Encoding: dialect.MsgpackNumpy}}} {
		msg, err := c.opts.MarshalMessage(map[string]any{"result": a})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/encode", func(b *testing.B) {
			b.SetBytes(int64(len(a.Data)))
			b.ReportAllocs()
			// One allocation of the message's exact size, and nothing
			// else the size of its data: a refactor that adds a copy
			// fails here before it is timed.
			requireAllocated(b, len(msg)+64<<10, func() { c.opts.MarshalMessage(map[string]any{"result": a}) })
			benchbase.Versus(b, func() {
				out, err := c.opts.MarshalMessage(map[string]any{"result": a})
				if err != nil {
					b.Fatal(err)
				}
				benchbase.Sink = out
			}, makeCopy)
		})
		// AppendMessage into the buffer of the last message: one copy of
		// the data, nothing allocated (Go zeroes what make allocates,
		// which is MarshalMessage's second pass over the data).
		b.Run(c.name+"/encode-append", func(b *testing.B) {
			b.SetBytes(int64(len(a.Data)))
			b.ReportAllocs()
			buf := make([]byte, 0, len(msg))
			requireAllocated(b, 64<<10, func() { c.opts.AppendMessage(buf[:0], map[string]any{"result": a}) })
			benchbase.Versus(b, func() {
				out, err := c.opts.AppendMessage(buf[:0], map[string]any{"result": a})
				if err != nil {
					b.Fatal(err)
				}
				benchbase.Sink = out
			}, makeCopy)
		})
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.SetBytes(int64(len(a.Data)))
			b.ReportAllocs()
			benchbase.Versus(b, func() {
				var m map[string]any
				if err := (ndpack.MessageOptions{}).UnmarshalMessage(msg, &m); err != nil {
					b.Fatal(err)
				}
				v, err := ndarray.Values[float64](m["result"].(*ndarray.Array))
				if err != nil || len(v) != 1<<20 {
					b.Fatal(err)
				}
			}, makeCopy)
		})
		// Into the memory of the last call (a ResultBuffer): one copy, no
		// allocation the size of the array, so nothing zeroed first.
		b.Run(c.name+"/decode-reusing", func(b *testing.B) {
			b.SetBytes(int64(len(a.Data)))
			b.ReportAllocs()
			var buf ndpack.ResultBuffer
			decode := func() {
				var m map[string]any
				if err := (ndpack.MessageOptions{}).UnmarshalMessageReusing(msg, &m, &buf); err != nil {
					b.Fatal(err)
				}
				v, err := ndarray.Values[float64](m["result"].(*ndarray.Array))
				if err != nil || len(v) != 1<<20 {
					b.Fatal(err)
				}
			}
			decode() // into new memory: the buffer learns the size
			decode() // the buffer grows to it
			requireAllocated(b, 64<<10, decode)
			benchbase.Versus(b, decode, makeCopy)
		})
		// NoCopy lets the array alias msg where its bytes lie aligned
		// there. In the ext 110 message they lie at an offset that is
		// not a multiple of 8, so they are copied once, aligned, as typed
		// access needs: one copy, as msgpack_numpy makes (msgpack copies
		// a bin into a bytes object, which frombuffer then aliases). In
		// the msgpack-numpy message they lie aligned: no copy.
		b.Run(c.name+"/decode-nocopy", func(b *testing.B) {
			b.SetBytes(int64(len(a.Data)))
			b.ReportAllocs()
			benchbase.Versus(b, func() {
				var m map[string]any
				if err := (ndpack.MessageOptions{NoCopy: true}).UnmarshalMessage(msg, &m); err != nil {
					b.Fatal(err)
				}
				v, err := ndarray.Values[float64](m["result"].(*ndarray.Array))
				if err != nil || len(v) != 1<<20 {
					b.Fatal(err)
				}
			}, makeCopy)
		})
	}
}
