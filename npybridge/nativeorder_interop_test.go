package npybridge

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// TestNativeOrderMatchesNumpy reads big-endian .npy files numpy wrote with
// NativeOrder, through every path that swaps (a file, a reader with a
// length, a reader without one, into a reused buffer), and checks the
// bytes against numpy's own conversion to little-endian (astype to the
// dtype with '<' order): scalars of 2, 4, 8 and 16 bytes, complex numbers,
// and records mixing orders; lengths that end mid-block and that cross
// the 128 KiB swap chunks; random bits, so NaN payloads too.
func TestNativeOrderMatchesNumpy(t *testing.T) {
	if ndarray.NativeOrder() != '<' {
		t.Skip("numpy's little-endian bytes are the expected result only on a little-endian machine")
	}
	out := pypeer.Run(t, `
import numpy as np, io, json, base64
rng = np.random.default_rng(35)
rec = np.dtype([('a', '>f8'), ('b', '<i4'), ('c', '>u2'), ('d', '>c8'), ('e', '>U2')])
cases = {}
for name in ['>i2', '>u2', '>f2', '>i4', '>f4', '>i8', '>f8', '>c8', '>c16', '>M8[ns]', '>U3', 'rec']:
    dt = rec if name == 'rec' else np.dtype(name)
    for n in [0, 1, 7, 1001, 70001]:
        a = np.frombuffer(rng.bytes(n * dt.itemsize), dtype=dt).copy()
        if n == 1001:
            a = a[:1000].reshape(10, 100)
        f = io.BytesIO()
        np.save(f, a)
        want = a.astype(dt.newbyteorder('<')).tobytes()
        cases['%s/%d' % (name, n)] = [base64.b64encode(f.getvalue()).decode(), base64.b64encode(want).decode()]
print(json.dumps(cases))
`, nil)
	var cases map[string][2]string
	require.NoError(t, json.Unmarshal(out, &cases))
	require.Len(t, cases, 60)
	dir := t.TempDir()
	var reused []byte
	for name, c := range cases {
		file, err := base64.StdEncoding.DecodeString(c[0])
		require.NoError(t, err)
		want, err := base64.StdEncoding.DecodeString(c[1])
		require.NoError(t, err)
		p := filepath.Join(dir, "a.npy")
		require.NoError(t, os.WriteFile(p, file, 0o644))
		o := ReadOptions{NativeOrder: true}
		reads := map[string]func() (*ndarray.Array, error){
			"file":     func() (*ndarray.Array, error) { return o.ReadFile(p) },
			"sized":    func() (*ndarray.Array, error) { return o.Read(bytes.NewReader(file)) },
			"unsized":  func() (*ndarray.Array, error) { return o.Read(struct{ io.Reader }{bytes.NewReader(file)}) },
			"fileinto": func() (*ndarray.Array, error) { return o.ReadFileInto(p, reused) },
		}
		for how, read := range reads {
			a, err := read()
			require.NoError(t, err, "%s %s", name, how)
			assert.True(t, bytes.Equal(want, a.Data), "%s %s: bytes differ from numpy's", name, how)
			assert.Equal(t, a.DType.WithOrder('<'), a.DType, "%s %s", name, how)
			if how == "fileinto" && cap(a.Data) > cap(reused) {
				reused = a.Data[:cap(a.Data)]
			}
		}
	}
}

// A file large enough to be read and swapped on every core (more than two
// parts of parallelSwapPart) gives, with NativeOrder, the bytes a plain read
// swapped afterwards gives: for >f8 and >i2 items, an odd length that ends
// a part inside a chunk, and a record whose fields have mixed orders (the
// native ones left alone), and the file is left after its data.
func TestNativeOrderOnEveryCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	dir := t.TempDir()
	rec, err := ndarray.NewRecord([]ndarray.Field{{Name: "a", DType: ndarray.MustParseDType(">i4")},
		{Name: "b", DType: ndarray.MustParseDType("<f8"), Offset: 4}, {Name: "c", DType: ndarray.MustParseDType(">u2"), Offset: 12}}, 14)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dt ndarray.DType
		n  int
	}{
		{ndarray.MustParseDType(">f8"), (2*parallelSwapPart)/8 + 12345},
		{ndarray.MustParseDType(">i2"), (3*parallelSwapPart)/2 + 7},
		{rec, (2*parallelSwapPart)/rec.ItemSize + 999},
	} {
		data := make([]byte, c.n*c.dt.ItemSize)
		for i := range data {
			data[i] = byte(i*131 + i>>11)
		}
		a, err := ndarray.New(c.dt, []int{c.n}, data)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "a.npy")
		if err := WriteFile(p, a); err != nil {
			t.Fatal(err)
		}
		got, err := ReadOptions{NativeOrder: true}.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %v", c.dt, err)
		}
		want, _ := ReadFile(p)
		if err := want.SetOrder(ndarray.NativeOrder()); err != nil {
			t.Fatal(err)
		}
		if got.DType.String() != want.DType.String() || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("%s: NativeOrder on every core differs from a swap after the read", c.dt)
		}
		// Read from an open file: left after the data, with the next bytes there.
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := (ReadOptions{NativeOrder: true}).Read(f); err != nil {
			t.Fatal(err)
		}
		if rest, _ := io.ReadAll(f); len(rest) != 0 {
			t.Errorf("%s: %d bytes after the read, want 0", c.dt, len(rest))
		}
		pos, _ := f.Seek(0, io.SeekCurrent)
		if fi, _ := f.Stat(); pos != fi.Size() {
			t.Errorf("%s: the file was left at %d of %d", c.dt, pos, fi.Size())
		}
		f.Close()
	}
}
