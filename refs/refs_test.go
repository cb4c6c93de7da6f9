package refs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/zarr"
)

func mustArray[T ndarray.Element](t testing.TB, v []T, shape ...int) *ndarray.Array {
	t.Helper()
	a, err := ndarray.FromSlice(v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// readBack parses the set's file again and reads every array through a
// Store, by name.
func readBack(t *testing.T, s *Set, o Options) map[string]*ndarray.Array {
	t.Helper()
	var buf bytes.Buffer
	if _, err := s.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	again, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	st := o.Store(context.Background(), again)
	defer st.Close()
	arrays, err := zarr.ReadOptions{}.Open(st, "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*ndarray.Array{}
	for _, a := range arrays {
		v, err := a.Read()
		if err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		out[a.Name] = v
	}
	return out
}

func TestBuildAndRead(t *testing.T) {
	dir := t.TempDir()
	img := mustArray(t, []int32{1, 2, 3, 4, 5, 6, 7, 8}, 4, 2)
	f := mustArray(t, []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5, 2)
	npy := filepath.Join(dir, "img.npy")
	if err := npybridge.WriteFile(npy, img); err != nil {
		t.Fatal(err)
	}
	npz := filepath.Join(dir, "run.npz")
	if err := npybridge.WriteNPZFile(npz, []npybridge.NamedArray{{Name: "a", Array: f}, {Name: "s", Array: ndarray.Scalar(int16(-3))}}, false); err != nil {
		t.Fatal(err)
	}
	b := Options{ChunkRows: 5}.NewBuilder()
	if err := b.AddFiles(context.Background(), []string{npy, npz}); err != nil {
		t.Fatal(err)
	}
	got := readBack(t, b.Set(), Options{})
	if len(got) != 3 || !got["img"].Equal(img) || !got["run/s"].Equal(ndarray.Scalar(int16(-3))) {
		t.Errorf("read back %v", got)
	}
	if a := got["run/a"]; a == nil || !a.Equal(f) {
		t.Errorf("run/a: %v", a)
	}
	b = Options{ChunkRows: 2}.NewBuilder()
	if err := b.AddFiles(context.Background(), []string{npy}); err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, b.Set(), Options{}); !got["img"].Equal(img) {
		t.Errorf("img in chunks of 2 rows: %v", got["img"])
	}
	r, _ := b.Set().Get("img/1.0")
	abs, _ := filepath.Abs(npy)
	if r.URL != abs || r.Offset != 128+16 || r.Length != 16 {
		t.Errorf("img/1.0 is %+v", r)
	}
	zattrs, _ := b.Set().Get("img/.zattrs")
	if !strings.Contains(string(zattrs.Data), `"img_dim_0"`) {
		t.Errorf(".zattrs: %s", zattrs.Data)
	}

	// 5 rows in chunks of 2: refused, naming the divisors near.
	b = Options{ChunkRows: 2}.NewBuilder()
	if err := b.AddFiles(context.Background(), []string{npz}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "5 rows are not a multiple of 2") || !strings.Contains(err.Error(), "(1 or 5)") {
		t.Errorf("5 rows in chunks of 2: %v", err)
	}
	// Two inputs of one name.
	b = Options{}.NewBuilder()
	if err := b.AddFiles(context.Background(), []string{npy, npy}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), `would both be the array or group "img"`) {
		t.Errorf("one name twice: %v", err)
	}
}

func TestStack(t *testing.T) {
	dir := t.TempDir()
	var names []string
	var want []float32
	for i := 0; i < 5; i++ {
		frame := []float32{float32(i), float32(i) + 0.5, -float32(i), 7, 8, 9}
		want = append(want, frame...)
		name := filepath.Join(dir, "shot"+string(rune('0'+i))+".npy")
		if err := npybridge.WriteFile(name, mustArray(t, frame, 2, 3)); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	b := Options{}.NewBuilder()
	if err := b.AddStackFiles(context.Background(), "frames", names); err != nil {
		t.Fatal(err)
	}
	got := readBack(t, b.Set(), Options{})
	if a := got["frames"]; a == nil || !a.Equal(mustArray(t, want, 5, 2, 3)) {
		t.Errorf("frames: %v", a)
	}
	// A frame that disagrees is named.
	odd := filepath.Join(dir, "odd.npy")
	npybridge.WriteFile(odd, mustArray(t, []float64{1, 2, 3, 4, 5, 6}, 2, 3))
	b = Options{}.NewBuilder()
	err := b.AddStackFiles(context.Background(), "frames", append(names, odd))
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), odd+" holds <f8, (2, 3); ") {
		t.Errorf("a frame of another dtype: %v", err)
	}
}

func TestRefusedInputs(t *testing.T) {
	dir := t.TempDir()
	a := mustArray(t, []int32{1, 2, 3}, 3)
	comp := filepath.Join(dir, "comp.npz")
	if err := npybridge.WriteNPZFile(comp, []npybridge.NamedArray{{Name: "a", Array: a}}, true); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("hello"), 0o644)
	short := filepath.Join(dir, "short.npy")
	var buf bytes.Buffer
	npybridge.Write(&buf, a)
	os.WriteFile(short, buf.Bytes()[:buf.Len()-1], 0o644)
	for _, c := range []struct {
		input string
		class error
		text  string
	}{
		{comp, npybridge.ErrCompressed, "ndpack convert " + comp + " comp.zarr"},
		{text, ErrUnsupported, "is neither an .npy file nor an .npz archive"},
		{short, ndarray.ErrTruncated, "the header announces 12 data bytes (shape (3,) of <i4), the file holds 11"},
		{filepath.Join(dir, "none.npy"), os.ErrNotExist, "none.npy"},
	} {
		err := Options{}.NewBuilder().AddFiles(context.Background(), []string{c.input})
		if !errors.Is(err, c.class) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v", filepath.Base(c.input), err)
		}
	}
}
