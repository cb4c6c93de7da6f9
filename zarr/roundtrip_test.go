package zarr

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// randomArray is an array of dt and shape filled with random bytes.
func randomArray(t testing.TB, dt ndarray.DType, shape []int, seed uint64) *ndarray.Array {
	t.Helper()
	n, err := ndarray.ByteSize(dt, shape)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	if dt.Kind == 'b' {
		for i := range data {
			data[i] &= 1
		}
	}
	a, err := ndarray.New(dt, shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// writeArray writes a into a new directory store at path with opts.
func writeArray(t testing.TB, d Dir, path string, a *ndarray.Array, opts WriteOptions) {
	t.Helper()
	w, err := opts.Create(d, path, a.DType, a.Shape)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, bytes.NewReader(a.Data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestRoundTrip(t *testing.T) {
	for i, c := range []struct {
		dt     string
		shape  []int
		chunks []int
		comp   *Compressor
	}{
		{"<f4", []int{10, 7}, []int{3, 4}, nil},
		{"<f4", []int{10, 7}, []int{3, 4}, Zlib(6)},
		{">i2", []int{5, 6, 7}, []int{2, 6, 7}, Zlib(1)},
		{"<c16", []int{9}, []int{4}, nil},
		{"|b1", []int{4, 4, 4}, []int{3, 3, 3}, Zlib(9)},
		{"<U3", []int{6}, []int{4}, nil},
		{"<f8", []int{}, []int{}, Zlib(1)},
		{"<f8", []int{0, 3}, []int{1, 3}, nil},
		{"<i8", []int{3, 0}, []int{2, 1}, nil},
		{"<M8[ns]", []int{100}, nil, Zlib(0)},
		{"|u1", []int{3000, 700}, nil, Zlib(-1)},
	} {
		t.Run(fmt.Sprintf("%d-%s%v", i, c.dt, c.shape), func(t *testing.T) {
			a := randomArray(t, ndarray.MustParseDType(c.dt), c.shape, uint64(i))
			d := Dir(t.TempDir())
			writeArray(t, d, "", a, WriteOptions{Chunks: c.chunks, Compressor: c.comp})
			arrays, err := ReadOptions{}.Open(d, "")
			if err != nil {
				t.Fatal(err)
			}
			if len(arrays) != 1 || arrays[0].Name != "" {
				t.Fatalf("opened %d arrays", len(arrays))
			}
			got, err := arrays[0].Read()
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(a) {
				t.Errorf("read back %v, want %v", got, a)
			}
			if len(c.shape) > 0 && c.shape[0] > 2 {
				rows, err := arrays[0].ReadRows(1, -1)
				if err != nil {
					t.Fatal(err)
				}
				rb := len(a.Data) / c.shape[0]
				if !bytes.Equal(rows.Data, a.Data[rb:len(a.Data)-rb]) {
					t.Errorf("rows 1:-1 differ")
				}
			}
		})
	}
}

// TestSameBytesWhateverTheCores writes the same array on 1 and 4 cores:
// every file of the two stores is the same.
func TestSameBytesWhateverTheCores(t *testing.T) {
	a := randomArray(t, ndarray.MustParseDType("<f4"), []int{64, 50}, 7)
	for i := 0; i < len(a.Data); i += 8 {
		a.Data[i] = 0 // something to compress
	}
	var stores [2]Dir
	for i, cores := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(cores)
		stores[i] = Dir(t.TempDir())
		writeArray(t, stores[i], "x", a, WriteOptions{Chunks: []int{5, 20}, Compressor: Zlib(6)})
		runtime.GOMAXPROCS(prev)
	}
	files, _ := filepath.Glob(filepath.Join(string(stores[0]), "x", "*"))
	if len(files) != 13*3+1 {
		t.Fatalf("%d files", len(files))
	}
	for _, f := range files {
		b0, _ := os.ReadFile(f)
		b1, err := os.ReadFile(filepath.Join(string(stores[1]), "x", filepath.Base(f)))
		if err != nil || !bytes.Equal(b0, b1) {
			t.Errorf("%s differs between 1 and 4 cores", filepath.Base(f))
		}
	}
}

// TestNoiseProbe: a chunk of noise is Huffman coded, no larger than 1.002x
// what level 6's search (compress/zlib's) makes it and read back the
// same; a chunk that compresses keeps the search.
func TestNoiseProbe(t *testing.T) {
	m := &Meta{Shape: []int{1 << 17}, Chunks: []int{1 << 17}, DType: ndarray.MustParseDType("<f4"), Compressor: Zlib(6)}
	noise := randomArray(t, m.DType, m.Shape, 9).Data
	zeros := make([]byte, len(noise))
	for _, c := range []struct {
		name  string
		chunk []byte
		most  float64 // of the chunk's bytes
	}{{"noise", noise, 1.001}, {"zeros", zeros, 0.002}} {
		z, err := m.EncodeChunk(nil, c.chunk)
		if err != nil {
			t.Fatal(err)
		}
		var plain bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&plain, 6)
		zw.Write(c.chunk)
		zw.Close()
		if (c.name == "noise" && float64(len(z)) > 1.002*float64(plain.Len())) || float64(len(z)) > c.most*float64(len(c.chunk)) {
			t.Errorf("%s: %d bytes stored, level 6 alone %d", c.name, len(z), plain.Len())
		}
		back := make([]byte, len(c.chunk))
		if err := m.DecodeChunk(back, z, "0"); err != nil || !bytes.Equal(back, c.chunk) {
			t.Errorf("%s: read back differs: %v", c.name, err)
		}
	}
}

// failWriter takes n bytes and then fails.
type failWriter struct{ n int }

var errFull = errors.New("full")

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errFull
	}
	w.n -= len(p)
	return len(p), nil
}

// TestWriteTo: io.Copy from a reader of rows takes its bands as they are
// (WriteTo), the same bytes Read gives, across several bands and from a
// row inside the first; a writer's failure ends the copy with its error.
func TestWriteTo(t *testing.T) {
	a := randomArray(t, ndarray.MustParseDType("<i2"), []int{40, 30}, 11)
	d := Dir(t.TempDir())
	writeArray(t, d, "", a, WriteOptions{Chunks: []int{3, 7}, Compressor: Zlib(1)})
	arrays, err := ReadOptions{MaxSize: 8 * 60}.Open(d, "")
	if err != nil {
		t.Fatal(err)
	}
	r, shape, err := arrays[0].Rows(1, 38)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(io.WriterTo); !ok {
		t.Fatal("the reader of rows is no io.WriterTo")
	}
	var got bytes.Buffer
	n, err := io.Copy(&got, r)
	r.Close()
	if err != nil || n != 37*60 || shape[0] != 37 {
		t.Fatalf("copied %d bytes of %v: %v", n, shape, err)
	}
	if !bytes.Equal(got.Bytes(), a.Data[60:38*60]) {
		t.Error("rows 1:38 copied differ from the array's")
	}
	r, _ = arrays[0].NewReader()
	defer r.Close()
	n, err = io.Copy(&failWriter{n: 1000}, r)
	if !errors.Is(err, errFull) || n != 1000 {
		t.Errorf("copy to a writer that fails after 1000 bytes: %d, %v", n, err)
	}
	if _, err := r.Read(make([]byte, 1)); err == nil {
		t.Error("read on after a failed WriteTo")
	}
}
