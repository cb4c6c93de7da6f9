package zarr

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

func TestParseMetaRefuses(t *testing.T) {
	good := `{"chunks": [2], "compressor": null, "dtype": "<f4", "fill_value": null, "filters": null, "order": "C", "shape": [4], "zarr_format": 2}`
	if _, err := ParseMeta([]byte(good)); err != nil {
		t.Fatal(err)
	}
	with := func(old, new string) string { return strings.Replace(good, old, new, 1) }
	for _, c := range []struct {
		doc   string
		class error
		text  string
	}{
		{`[1]`, ndarray.ErrMalformed, ".zarray is not a JSON object"},
		{with(`"zarr_format": 2`, `"zarr_format": 3`), ErrUnsupported, "zarr_format"},
		{with(`"filters": null, `, ``), ndarray.ErrMalformed, `.zarray has no "filters"`},
		{with(`"shape": [4]`, `"shape": [-4]`), ndarray.ErrMalformed, "dimension 0 of shape is -4"},
		{with(`"shape": [4]`, `"shape": [4.5]`), ndarray.ErrMalformed, "dimension 0 of shape is 4.5"},
		{with(`"shape": [4]`, `"shape": [4, 4]`), ndarray.ErrMalformed, "differ in dimensions"},
		{with(`"chunks": [2]`, `"chunks": [0]`), ndarray.ErrMalformed, "chunks are at least 1 a side"},
		{with(`"shape": [4]`, `"shape": [4611686018427387904]`), ndarray.ErrMalformed, "overflows"},
		{with(`"chunks": [2]`, `"chunks": [4611686018427387904]`), ndarray.ErrMalformed, "overflows"},
		{with(`"shape": [4]`, `"shape": [`+strings.Repeat("1,", 40)+`1]`), ndarray.ErrMalformed, "more than the 32 numpy allows"},
		{with(`"dtype": "<f4"`, `"dtype": "|O"`), ErrUnsupported, "an object dtype"},
		{with(`"dtype": "<f4"`, `"dtype": "<f5"`), ndarray.ErrMalformed, `dtype "<f5"`},
		{with(`"dtype": "<f4"`, `"dtype": [[["t", "n"], "<f4"]]`), ErrUnsupported, "a title and a name"},
		{with(`"dtype": "<f4"`, `"dtype": 7`), ndarray.ErrMalformed, "not a typestr or a list of fields"},
		{with(`"compressor": null`, `"compressor": {"id": "blosc", "cname": "lz4"}`), ErrUnsupported, `the compressor "blosc"`},
		{with(`"compressor": null`, `"compressor": {"level": 1}`), ndarray.ErrMalformed, "not null or a codec's"},
		{with(`"filters": null`, `"filters": [{"id": "delta"}]`), ErrUnsupported, "filters"},
		{with(`"order": "C"`, `"order": "K"`), ndarray.ErrMalformed, "order"},
		{with(`"fill_value": null`, `"fill_value": "x"`), ndarray.ErrMalformed, "fill_value"},
		{with(`"fill_value": null`, `"fill_value": [1, 2]`), ndarray.ErrMalformed, "fill_value"},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), ndarray.ErrTooDeep, "nest more than"},
		{with(`"dtype": "<f4"`, `"dtype": `+strings.Repeat(`[["a", `, 40)+`"<f4"`+strings.Repeat(`]]`, 40)), ndarray.ErrTooDeep, "nest more than"},
	} {
		_, err := ParseMeta([]byte(c.doc))
		if !errors.Is(err, c.class) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%.80s: got %v, want %v with %q", c.doc, err, c.class, c.text)
		}
		var ne *ndarray.Error
		if !errors.As(err, &ne) || ne.Pkg != "zarr" {
			t.Errorf("%.80s: %v is not zarr's *ndarray.Error", c.doc, err)
		}
	}
	huge := append([]byte(`{"x": "`), bytes.Repeat([]byte("a"), MaxMetadataSize)...)
	if _, err := ParseMeta(huge); !errors.Is(err, ndarray.ErrTooLarge) {
		t.Errorf("%d bytes of metadata: %v", len(huge), err)
	}
}

func TestFillValues(t *testing.T) {
	for _, c := range []struct {
		dt, fill string
		item     []byte
	}{
		{"<f4", `"NaN"`, []byte{0, 0, 0xc0, 0x7f}},
		{"<f8", `"-Infinity"`, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0xff}},
		{">f2", `1.5`, []byte{0x3e, 0x00}},
		{"<i2", `-2`, []byte{0xfe, 0xff}},
		{">u4", `4294967295`, []byte{0xff, 0xff, 0xff, 0xff}},
		{"|b1", `true`, []byte{1}},
		{"<c8", `[1.0, "NaN"]`, []byte{0, 0, 0x80, 0x3f, 0, 0, 0xc0, 0x7f}},
		{"|S3", `"YWI="`, []byte("ab\x00")},
		{"<U2", `"\u00e9"`, []byte{0xe9, 0, 0, 0, 0, 0, 0, 0}},
		{"<M8[s]", `-9223372036854775808`, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}},
	} {
		dt := ndarray.MustParseDType(c.dt)
		item, err := parseFill([]byte(c.fill), dt)
		if err != nil || !bytes.Equal(item, c.item) {
			t.Errorf("%s %s: got % x %v, want % x", c.dt, c.fill, item, err, c.item)
			continue
		}
		v, err := fillValue(item, dt)
		if err != nil {
			t.Errorf("%s %s: %v", c.dt, c.fill, err)
			continue
		}
		if again := string(appendPyJSON(nil, v, 0)); strings.Join(strings.Fields(again), "") != strings.ReplaceAll(c.fill, " ", "") &&
			!(c.dt == "<U2" && again == `"\u00e9"`) {
			t.Errorf("%s %s: written back as %s", c.dt, c.fill, again)
		}
	}
	for _, c := range []struct{ dt, fill string }{
		{"|i1", "128"}, {"<u2", "-1"}, {"<i4", "1.5"}, {"|S2", `"YWJj"`}, {"<U1", `"ab"`}, {"|b1", "2"}, {"|V4", `"YQ=="`},
	} {
		if item, err := parseFill([]byte(c.fill), ndarray.MustParseDType(c.dt)); err == nil {
			t.Errorf("%s %s: read as % x", c.dt, c.fill, item)
		}
	}
}

func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{
		0: "0.0", 1: "1.0", -2.5: "-2.5", 1e-5: "1e-05", 0.0001: "0.0001", 1e16: "1e+16", 123456789012345678: "1.2345678901234568e+17",
		1e15: "1000000000000000.0", math.MaxFloat64: "1.7976931348623157e+308", 5e-324: "5e-324", 0.1: "0.1",
	} {
		if got := string(appendPyFloat(nil, f)); got != want {
			t.Errorf("%g: %s, want %s", f, got, want)
		}
	}
}

// FuzzParseMeta holds ParseMeta to its bounds and to Marshal: whatever it
// reads, Marshal writes, and ParseMeta reads that back as the same Meta.
func FuzzParseMeta(f *testing.F) {
	for _, s := range metaSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMeta(b)
		if err != nil {
			var ne *ndarray.Error
			if !errors.As(err, &ne) {
				t.Fatalf("%v is not an *ndarray.Error", err)
			}
			return
		}
		out, err := m.Marshal()
		if err != nil {
			t.Fatalf("read %q, cannot write it: %v", b, err)
		}
		again, err := ParseMeta(out)
		if err != nil {
			t.Fatalf("wrote %q, cannot read it: %v", out, err)
		}
		if m.Order == 0 {
			m.Order = 'C'
		}
		if m.DimensionSeparator == '.' {
			m.DimensionSeparator = 0
		}
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("read %+v, then %+v from %s", m, again, out)
		}
	})
}

// metaSeeds are .zarray files zarr-python 2.13 wrote, and variations.
var metaSeeds = []string{
	`{"chunks": [2, 2], "compressor": {"id": "zlib", "level": 6}, "dtype": "<f4", "fill_value": 0.0, "filters": null, "order": "C", "shape": [5, 3], "zarr_format": 2}`,
	`{"chunks": [], "compressor": null, "dtype": "<f4", "fill_value": "NaN", "filters": null, "order": "C", "shape": [], "zarr_format": 2}`,
	`{"chunks": [1, 3], "compressor": null, "dtype": ">i2", "fill_value": null, "filters": null, "order": "F", "shape": [0, 3], "zarr_format": 2, "dimension_separator": "/"}`,
	`{"chunks": [4], "compressor": null, "dtype": [["p", [["x", "<f4"], ["y", ">i2"]]], ["s", "|S3"], ["u", "<U2"], ["t", "<M8[us]", [2]]], "fill_value": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "filters": null, "order": "C", "shape": [9], "zarr_format": 2}`,
	`{"chunks": [3], "compressor": null, "dtype": "<c16", "fill_value": [1.0, "-Infinity"], "filters": [], "order": "C", "shape": [9], "zarr_format": 2}`,
	`{"chunks": [3], "compressor": null, "dtype": "|S4", "fill_value": "YWJj", "filters": null, "order": "C", "shape": [9], "zarr_format": 2}`,
	`{"chunks": [3], "compressor": null, "dtype": "<U2", "fill_value": "\u00e9", "filters": null, "order": "C", "shape": [9], "zarr_format": 2}`,
	`{"chunks": [3], "compressor": null, "dtype": "<m8[25s]", "fill_value": -3, "filters": null, "order": "C", "shape": [9], "zarr_format": 2}`,
	`{"chunks": [3], "compressor": null, "dtype": "|b1", "fill_value": true, "filters": null, "order": "C", "shape": [9], "zarr_format": 2}`,
}

// FuzzDecodeChunk holds the zlib chunk decoder to compress/zlib's reading
// of the same bytes: whatever DecodeChunk accepts inflates to those bytes
// with a matching checksum, and nothing makes it write past the chunk.
func FuzzDecodeChunk(f *testing.F) {
	m := &Meta{Shape: []int{64}, Chunks: []int{64}, DType: ndarray.MustParseDType("<u2"), Compressor: Zlib(1)}
	for _, level := range []int{0, 1, 6, 9} {
		mm := *m
		mm.Compressor = Zlib(level)
		chunk := make([]byte, m.ChunkSize())
		for i := range chunk {
			chunk[i] = byte(i * i / 7)
		}
		z, err := mm.EncodeChunk(nil, chunk)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(z)
		f.Add(z[:len(z)-1])
	}
	f.Fuzz(func(t *testing.T, z []byte) {
		dst := make([]byte, m.ChunkSize()+16)
		err := m.DecodeChunk(dst[:m.ChunkSize()], z, "0")
		if !bytes.Equal(dst[m.ChunkSize():], make([]byte, 16)) {
			t.Fatal("wrote past the chunk")
		}
		if err != nil {
			if !errors.Is(err, ndarray.ErrMalformed) {
				t.Fatalf("%v is not ndarray.ErrMalformed", err)
			}
			return
		}
		r, zerr := zlib.NewReader(bytes.NewReader(z))
		if zerr != nil {
			t.Fatalf("DecodeChunk read what compress/zlib refuses: %v", zerr)
		}
		want, zerr := io.ReadAll(r)
		if zerr != nil || !bytes.Equal(want, dst[:m.ChunkSize()]) {
			t.Fatalf("DecodeChunk read %d bytes compress/zlib reads differently (%v)", m.ChunkSize(), zerr)
		}
	})
}
