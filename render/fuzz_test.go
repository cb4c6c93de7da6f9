package render_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/render"
)

// FuzzRender: any bytes as the data of any dtype and small shape draw
// without a panic, as a PNG image/png reads back at the array's size, as
// an SVG, and as a preview fed in pieces; or are refused with an Error.
// Seeded with the conformance corpus's numpy arrays.
func FuzzRender(f *testing.F) {
	files, _ := filepath.Glob("../conformance/testdata/valid/*.npy")
	for _, p := range files {
		a, err := npybridge.ReadFile(p)
		if err != nil || len(a.Shape) == 0 || len(a.Data) > 1<<12 {
			continue
		}
		rows, cols := 1, a.Shape[0]
		if len(a.Shape) > 1 {
			rows, cols = a.Shape[0], a.Shape[1]
		}
		f.Add(a.DType.String(), uint8(rows), uint8(cols), uint8(len(a.Shape)), a.Data)
	}
	nan := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))
	f.Add("<f8", uint8(1), uint8(2), uint8(0x0e), append(nan, nan...))
	f.Add("|u1", uint8(2), uint8(2), uint8(3), []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Fuzz(func(t *testing.T, typestr string, rows, cols, opts uint8, data []byte) {
		dt, err := ndarray.ParseDType(typestr)
		if err != nil {
			return
		}
		shape := []int{int(rows), int(cols)}
		switch opts & 3 {
		case 1:
			shape = shape[:1]
		case 3:
			shape = append(shape, 3)
		}
		n, err := ndarray.ByteSize(dt, shape)
		if err != nil || n > 1<<16 {
			return
		}
		buf := make([]byte, n)
		copy(buf, data)
		a, err := ndarray.New(dt, shape, buf)
		if err != nil {
			return
		}
		o := render.Options{Colormap: [...]string{"gray", "viridis", "magma", "inferno"}[opts>>2&3], Log: opts&0x10 != 0}
		if opts&0x20 != 0 && len(data) >= 16 {
			o.Range = [2]float64{math.Float64frombits(binary.LittleEndian.Uint64(data)), math.Float64frombits(binary.LittleEndian.Uint64(data[8:]))}
		}
		var b, sb bytes.Buffer
		err = render.EncodePNG(&b, a, o)
		// The same array from a stream draws the same bytes, and one cut
		// short is an error, not a picture.
		stream := func(data []byte) render.Source {
			return render.Source{DType: dt, Shape: shape, Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
		}
		if serr := render.EncodePNGSource(&sb, stream(buf), o); (serr == nil) != (err == nil) || !bytes.Equal(sb.Bytes(), b.Bytes()) {
			t.Fatalf("from a stream: %v, %d bytes; in memory: %v, %d bytes", serr, sb.Len(), err, b.Len())
		}
		if len(buf) > 0 && err == nil {
			if serr := render.EncodePNGSource(io.Discard, stream(buf[:len(buf)-1]), o); !errors.Is(serr, ndarray.ErrTruncated) {
				t.Fatalf("a stream a byte short: %v", serr)
			}
		}
		if err == nil {
			img, err := png.Decode(&b)
			if err != nil {
				t.Fatalf("image/png cannot read what EncodePNG wrote: %v", err)
			}
			if img.Bounds().Dx() != a.Shape[1] || img.Bounds().Dy() != a.Shape[0] {
				t.Fatalf("a %v array drew a %v image", a.Shape, img.Bounds())
			}
		} else if _, ok := err.(*ndarray.Error); !ok {
			t.Fatalf("not a ndarray.Error: %v", err)
		}
		render.EncodeSVG(io.Discard, a, render.Plot{Range: o.Range, Log: o.Log})
		p, err := render.NewPreview(dt, shape, opts&0x40 != 0, 1+int(opts)%100, o)
		if err != nil {
			return
		}
		for rest := buf; len(rest) > 0; {
			k := min(len(rest), 1+int(opts)%7)
			p.Write(rest[:k])
			rest = rest[k:]
		}
		p.WriteTo(io.Discard)
	})
}
