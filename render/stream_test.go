package render_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/render"
)

// streamSource is a's Source read through a plain io.Reader, as a file
// is, rather than in place.
func streamSource(a *ndarray.Array) render.Source {
	return render.Source{DType: a.DType, Shape: a.Shape, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(a.Data)), nil
	}}
}

// idatStream returns the zlib stream of a PNG's IDAT chunks, checking
// every chunk's CRC on the way.
func idatStream(t *testing.T, b []byte) []byte {
	t.Helper()
	var z []byte
	for at := 8; at < len(b); {
		n := int(binary.BigEndian.Uint32(b[at:]))
		typ, data := string(b[at+4:at+8]), b[at+8:at+8+n]
		if got, want := binary.BigEndian.Uint32(b[at+8+n:]), crc32IEEE(b[at+4:at+8+n]); got != want {
			t.Fatalf("%s chunk CRC %08x, want %08x", typ, got, want)
		}
		if typ == "IDAT" {
			z = append(z, data...)
		}
		at += 12 + n
	}
	return z
}

// A picture of many chunks of rows, compressed in parallel, is one valid
// zlib stream (its Adler-32 checked by compress/zlib) whose pixels are
// those of Image, drawn row by row on one goroutine: for an array in
// memory and for a stream, at every compression level, gray, gray+alpha,
// RGB(A) and an RGB array as it is.
func TestPNGChunksInParallelKeepThePixels(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	const h, w = 701, 1003 // 2.8 MB of <f4: several chunks of rows
	v := make([]float32, h*w)
	for i := range v {
		v[i] = float32(math.Sin(float64(i%w)/50)*100 + r.NormFloat64())
	}
	smooth, _ := ndarray.FromSlice(v, h, w)
	nan := make([]float32, len(v))
	copy(nan, v)
	for i := 0; i < len(nan); i += 997 {
		nan[i] = float32(math.NaN())
	}
	holes, _ := ndarray.FromSlice(nan, h, w)
	rgb := make([]uint8, 600*700*3)
	r.Read(rgb)
	rgbA, _ := ndarray.FromSlice(rgb, 600, 700, 3)
	for _, c := range []struct {
		name string
		a    *ndarray.Array
		o    render.Options
	}{
		{"gray", smooth, render.Options{}},
		{"gray-default", smooth, render.Options{Compression: "default"}},
		{"gray-best", smooth, render.Options{Compression: "best"}},
		{"gray-none", smooth, render.Options{Compression: "none"}},
		{"gray-alpha", holes, render.Options{}},
		{"viridis", smooth, render.Options{Colormap: "viridis"}},
		{"magma-alpha", holes, render.Options{Colormap: "magma", Range: [2]float64{-50, 50}}},
		{"rgb", rgbA, render.Options{}},
	} {
		want, err := render.Image(c.a, c.o)
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range []struct {
			name string
			enc  func(w io.Writer) error
		}{
			{"array", func(w io.Writer) error { return render.EncodePNG(w, c.a, c.o) }},
			{"stream", func(w io.Writer) error { return render.EncodePNGSource(w, streamSource(c.a), c.o) }},
		} {
			var b bytes.Buffer
			if err := src.enc(&b); err != nil {
				t.Fatalf("%s %s: %v", c.name, src.name, err)
			}
			zr, err := zlib.NewReader(bytes.NewReader(idatStream(t, b.Bytes())))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(zr)
			if err != nil {
				t.Fatalf("%s %s: the zlib stream: %v", c.name, src.name, err)
			}
			channels := map[byte]int{0: 1, 4: 2, 2: 3, 6: 4}[b.Bytes()[25]]
			img, err := png.Decode(&b)
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, src.name, err)
			}
			if len(raw) != want.Bounds().Dy()*(1+channels*want.Bounds().Dx()) {
				t.Errorf("%s %s: %d bytes of filtered rows", c.name, src.name, len(raw))
			}
			if d := firstDifference(want, img); d != "" {
				t.Errorf("%s %s: %s", c.name, src.name, d)
			}
		}
	}
}

// firstDifference describes the first pixel where a and b differ, or "".
func firstDifference(a, b image.Image) string {
	if a.Bounds() != b.Bounds() {
		return fmt.Sprintf("bounds %v, want %v", b.Bounds(), a.Bounds())
	}
	for y := range a.Bounds().Dy() {
		for x := range a.Bounds().Dx() {
			r1, g1, b1, a1 := a.At(x, y).RGBA()
			r2, g2, b2, a2 := b.At(x, y).RGBA()
			if [4]uint32{r1, g1, b1, a1} != [4]uint32{r2, g2, b2, a2} {
				return fmt.Sprintf("pixel (%d, %d) is %v, want %v", x, y, b.At(x, y), a.At(x, y))
			}
		}
	}
	return ""
}

// A stream that ends early is an error wrapping ErrTruncated, in either
// pass; a picture larger than MaxSide or MaxPixels is refused before
// anything is read.
func TestPNGSourceRefusals(t *testing.T) {
	opened := 0
	short := render.Source{DType: ndarray.DTypeOf[float32](), Shape: []int{1000, 1000}, Open: func() (io.ReadCloser, error) {
		opened++
		return io.NopCloser(bytes.NewReader(make([]byte, 3_000_000))), nil
	}}
	for _, o := range []render.Options{{}, {Range: [2]float64{0, 1}}} {
		err := render.EncodePNGSource(io.Discard, short, o)
		if !errors.Is(err, ndarray.ErrTruncated) || err.Error() != "render: truncated input: the data ends after 3000000 of its 4000000 bytes" {
			t.Errorf("%v: %v", o, err)
		}
	}
	for _, shape := range [][]int{{1 << 20, 1 << 20}, {1, render.MaxSide + 1}, {65537, 65536}} {
		s := render.Source{DType: ndarray.DTypeOf[uint8](), Shape: shape, Open: func() (io.ReadCloser, error) {
			opened++
			return nil, errors.New("opened")
		}}
		err := render.EncodePNGSource(io.Discard, s, render.Options{})
		if !errors.Is(err, ndarray.ErrTooLarge) || !strings.HasPrefix(err.Error(), "render: too large: shape ") {
			t.Errorf("%v: %v", shape, err)
		}
	}
	if opened != 2 {
		t.Errorf("opened %d times, want 2", opened)
	}
}

func crc32IEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }
