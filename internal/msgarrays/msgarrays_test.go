package msgarrays

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/vmihailenco/msgpack/v5"
)

// pack writes a map of the keys and values kv in their order.
func pack(t testing.TB, kv ...any) []byte {
	t.Helper()
	b := mpwire.AppendMapHeader(nil, len(kv)/2)
	for _, x := range kv {
		p, err := msgpack.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		b = append(b, p...)
	}
	return b
}

func mustArray(t testing.TB) *ndarray.Array {
	t.Helper()
	a, err := ndarray.FromSlice([]int16{1, 2, 3})
	if err == nil {
		a, err = a.ToOrder('<')
	}
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func encoded(t testing.TB, a *ndarray.Array) (ext, numpy, openpi []byte) {
	t.Helper()
	var err error
	if ext, err = ext110.Marshal(a); err != nil {
		t.Fatal(err)
	}
	if numpy, err = dialect.MsgpackNumpy.Marshal(a); err != nil {
		t.Fatal(err)
	}
	if openpi, err = dialect.OpenPI.Marshal(a); err != nil {
		t.Fatal(err)
	}
	return ext, numpy, openpi
}

// At takes for an array what starts as one of its set's encodings, with
// a marker first or, in a map of a dialect's size, anywhere; reads it as
// its codec does; and leaves every other value alone.
func TestAt(t *testing.T) {
	a := mustArray(t)
	ext, numpy, openpi := encoded(t, a)
	openpiLate := pack(t, "shape", []int{3}, "dtype", "<i2", "data", a.Data, "__ndarray__", true)
	for _, c := range []struct {
		name string
		set  Set
		in   []byte
		want Set // the encoding found; 0 for none
	}{
		{"ext 110", All, ext, Ext110},
		{"msgpack-numpy", All, numpy, Of(dialect.MsgpackNumpy)},
		{"openpi", All, openpi, Of(dialect.OpenPI)},
		{"a marker last", All, openpiLate, Of(dialect.OpenPI)},
		{"ext 110 with bytes after it", All, append(append([]byte{}, ext...), 0xc0), Ext110},
		{"ext 110, dialects only", Dialects, ext, 0},
		{"msgpack-numpy, openpi only", Of(dialect.OpenPI), numpy, 0},
		{"openpi, ext 110 only", Ext110, openpi, 0},
		{"another ext type", All, []byte{0xd4, 0x05, 0x00}, 0},
		{"an ordinary map", All, pack(t, "a", 1, "b", 2, "c", 3), 0},
		{"a marker deep in a value", All, pack(t, "a", map[string]any{"nd": 1}, "b", 2, "c", 3), 0},
		{"a later marker in a map of two", All, pack(t, "type", "<f8", "nd", true), 0},
		{"a list", All, []byte{0x93, 1, 2, 3}, 0},
		{"a map cut short", All, []byte{0x83, 0xa1}, 0},
		{"nothing", All, nil, 0},
	} {
		h, ok, err := c.set.At(c.in)
		if err != nil || ok != (c.want != 0) || h.Encoding != c.want {
			t.Errorf("%s: %v, %v, %v; want %v", c.name, h.Encoding, ok, err, c.want)
			continue
		}
		if ok && (h.DType.String() != a.DType.String() || len(h.Shape) != 1 || h.Shape[0] != 3 || !bytes.Equal(h.Data(c.in), a.Data)) {
			t.Errorf("%s: %v %v %x", c.name, h.DType, h.Shape, h.Data(c.in))
		}
	}
	// Taken for an array and not one: the codec's error.
	bad := pack(t, "__ndarray__", true, "data", []byte{1}, "dtype", "<i2", "shape", []int{3})
	if _, ok, err := All.At(bad); !ok || !errors.Is(err, ndarray.ErrDataLength) || !strings.HasPrefix(err.Error(), "dialect: ") {
		t.Errorf("a lying map: %v %v", ok, err)
	}
	if _, ok, err := All.At(ext[:len(ext)-1]); !ok || !errors.Is(err, ndarray.ErrTruncated) {
		t.Errorf("ext 110 cut short: %v %v", ok, err)
	}
	// Looking for a later marker reads in place.
	if n := testing.AllocsPerRun(100, func() { All.marked(openpiLate) }); n != 0 {
		t.Errorf("%v allocations to find a later marker", n)
	}
}

// Header.Array aliases the message where the data lies aligned for its
// items, and copies it, aligned, where it does not or when asked to.
func TestHeaderArray(t *testing.T) {
	a, _ := ndarray.FromSlice([]float64{1, 2, 3})
	ext, _, _ := encoded(t, a)
	buf := make([]byte, len(ext)+8)
	aliased := 0
	for shift := range 8 {
		in := buf[shift : shift+len(ext)]
		copy(in, ext)
		h, _, err := All.At(in)
		if err != nil {
			t.Fatal(err)
		}
		there := &in[h.DataOffset]
		got := h.Array(in, true)
		alias := &got.Data[0] == there
		if aligned := uintptr(unsafe.Pointer(there))%8 == 0; alias != aligned || !got.Aligned() || !got.Equal(a) {
			t.Errorf("shift %d: aliased %v, aligned %v, %v", shift, alias, aligned, got)
		}
		if alias {
			aliased++
		}
		if c := h.Array(in, false); &c.Data[0] == there || !c.Equal(a) {
			t.Errorf("shift %d: a copy aliases the input", shift)
		}
	}
	if aliased != 1 {
		t.Errorf("aliased at %d shifts of 8", aliased)
	}
}

// Find lists the arrays of every encoding at any depth, by path, in byte
// order; a map whose marker comes later is one array, and what was found
// inside its earlier entries goes.
func TestFind(t *testing.T) {
	a := mustArray(t)
	ext, numpy, openpi := encoded(t, a)
	inner := pack(t, "x", []any{msgpack.RawMessage(numpy), 7}, "y", "s", "__ndarray__", true)
	msg := pack(t, "ext", msgpack.RawMessage(ext), "list", []any{1, msgpack.RawMessage(openpi)},
		"late", msgpack.RawMessage(inner), "n", map[string]any{"deep": []any{[]any{msgpack.RawMessage(ext)}}},
		5, []any{msgpack.RawMessage(ext)}) // a key that is no string names its value by its place
	found, end, err := All.Find(msg, 0, MaxDepth, true)
	if err != nil || end != len(msg) {
		t.Fatalf("%v, end %d of %d", err, end, len(msg))
	}
	var paths []string
	for _, f := range found {
		paths = append(paths, f.Path)
		h, ok, err := All.At(msg[f.At:])
		if f.Path == "late" { // taken for an array, and not a valid one
			ok, err, h.Len = ok && err != nil, nil, f.Len
		}
		if !ok || err != nil || h.Len != f.Len {
			t.Errorf("%s: not an array of %d bytes: %v %v %v", f.Path, f.Len, ok, err, h.Len)
		}
	}
	if got, want := strings.Join(paths, " "), "ext list/1 late n/deep/0/0 #4/0"; got != want {
		t.Errorf("found %q, want %q", got, want)
	}
	// Without paths, the same places.
	bare, _, _ := All.Find(msg, 0, MaxDepth, false)
	for i := range bare {
		if bare[i].Path != "" || bare[i].At != found[i].At {
			t.Errorf("without paths: %+v", bare[i])
		}
	}
	// OpenPI alone: its maps only.
	pi, _, _ := Of(dialect.OpenPI).Find(msg, 0, MaxDepth, true)
	if len(pi) != 2 || pi[0].Path != "list/1" || pi[1].Path != "late" {
		t.Errorf("openpi alone found %+v", pi)
	}
}

// Find's failures say where, and by what path.
func TestFindErrors(t *testing.T) {
	deep := pack(t, "a", []any{[]any{[]any{1}}})
	_, _, err := All.Find(deep, 0, 3, true)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ndarray.ErrTooDeep) || e.Path != "a/0/0" || e.Offset != 5 {
		t.Errorf("too deep: %v", err)
	}
	if _, _, err := All.Find(deep, 0, 4, true); err != nil {
		t.Errorf("deep enough: %v", err)
	}
	cut := pack(t, "a", []any{"xyz"})
	_, _, err = All.Find(cut[:len(cut)-1], 0, MaxDepth, true)
	if !errors.As(err, &e) || !errors.Is(err, ndarray.ErrTruncated) || e.Path != "a/0" {
		t.Errorf("cut short: %v", err)
	}
	if got := err.Error(); got != "msgpack: truncated input at byte 4: a/0: value claims 3, only 2 bytes remain" {
		t.Errorf("worded %q", got)
	}
	_, _, err = All.Find([]byte{0x91, 0xc1}, 0, MaxDepth, true)
	if !errors.Is(err, ndarray.ErrMalformed) {
		t.Errorf("never used byte: %v", err)
	}
	_, _, err = All.Find([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}, 0, MaxDepth, true)
	if !errors.Is(err, ndarray.ErrTruncated) {
		t.Errorf("a claimed count: %v", err)
	}
}

// Maps of a dialect's size nested in each other, each with its child last:
// finding later markers costs a walk of the message, not one per level
// (which would be 500 walks of the list at the bottom).
func TestFindLinear(t *testing.T) {
	list := mpwire.AppendArrayHeader(nil, 1<<20)
	list = append(list, bytes.Repeat([]byte{0x01}, 1<<20)...)
	var b []byte
	const levels = 500
	for range levels {
		b = append(b, 0x83, 0xa1, 'a', 0x01, 0xa1, 'b', 0x02, 0xa1, 'c')
	}
	b = append(b, list...)
	took := func(in []byte) time.Duration {
		best := time.Hour
		for range 3 {
			start := time.Now()
			found, _, err := All.Find(in, 0, MaxDepth, false)
			if err != nil || len(found) != 0 {
				t.Fatalf("%v, %d found", err, len(found))
			}
			if _, err := All.Cost(in, 1<<40); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		return best
	}
	if nested, flat := took(b), took(list); nested > 20*flat {
		t.Errorf("%v for the nested maps, %v for the list alone", nested, flat)
	}
}

// A key that is no string does not hide a later marker, for At as for
// Find.
func TestAtSkipsKeysThatAreNoStrings(t *testing.T) {
	a := mustArray(t)
	m := pack(t, 7, "x", "shape", []int{3}, "dtype", "<i2", "data", a.Data, "__ndarray__", true)
	h, ok, err := All.At(m)
	if !ok || err == nil || !errors.Is(err, ndarray.ErrMalformed) {
		t.Errorf("At: %v %v %v", h.Encoding, ok, err) // dialect refuses the int key
	}
	found, _, err := All.Find(m, 0, MaxDepth, true)
	if err != nil || len(found) != 1 || found[0].At != 0 {
		t.Errorf("Find: %v %+v", err, found)
	}
}
