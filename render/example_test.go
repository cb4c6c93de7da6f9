package render_test

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"log"
	"math"
	"os"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/render"
)

// A 2-D array becomes a PNG whose rows are the array's rows, the lowest
// value black and the highest white.
func ExampleEncodePNG() {
	a, err := ndarray.FromRows([][]float32{{0, 1, 2}, {3, 4, 5}})
	if err != nil {
		log.Fatal(err)
	}
	var b bytes.Buffer
	if err := render.EncodePNG(&b, a, render.Options{}); err != nil {
		log.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(img.Bounds().Dx(), "x", img.Bounds().Dy())
	for y := range 2 {
		var row []uint32
		for x := range 3 {
			r, _, _, _ := img.At(x, y).RGBA()
			row = append(row, r>>8)
		}
		fmt.Println(row)
	}
	// Output:
	// 3 x 2
	// [0 51 102]
	// [153 204 255]
}

// With a colormap and a fixed range; NaN is transparent.
func ExampleImage() {
	a, err := ndarray.FromRows([][]float64{{-1, 0.5, math.NaN(), 7}})
	if err != nil {
		log.Fatal(err)
	}
	img, err := render.Image(a, render.Options{Colormap: "viridis", Range: [2]float64{0, 1}})
	if err != nil {
		log.Fatal(err)
	}
	for x := range 4 {
		fmt.Println(img.At(x, 0))
	}
	// Output:
	// {68 1 84 255}
	// {33 145 140 255}
	// {0 0 0 0}
	// {253 231 37 255}
}

// A spectrum as a line plot: one polyline, one point per element.
func ExampleEncodeSVG() {
	wavelengths, err := ndarray.FromSlice([]float64{400, 500, 600, 700}, 4)
	if err != nil {
		log.Fatal(err)
	}
	counts, err := ndarray.FromSlice([]uint16{10, 250, 90, 30}, 4)
	if err != nil {
		log.Fatal(err)
	}
	var b strings.Builder
	err = render.EncodeSVG(&b, counts, render.Plot{X: wavelengths, XLabel: "wavelength (nm)", YLabel: "counts"})
	if err != nil {
		log.Fatal(err)
	}
	svg := b.String()
	_, points, _ := strings.Cut(svg, `points="`)
	points, _, _ = strings.Cut(points, `"`)
	fmt.Println(len(strings.Fields(points)), "points;", strings.Contains(svg, ">wavelength (nm)</text>"))
	// Output:
	// 4 points; true
}

// A 1-D array previews as a sparkline.
func ExampleNewPreview() {
	a, err := ndarray.FromSlice([]float64{1, 2, 4, 8, 16, 8, 4, 2, 1}, 9)
	if err != nil {
		log.Fatal(err)
	}
	p, err := render.NewPreview(a.DType, a.Shape, false, 80, render.Options{Log: true})
	if err != nil {
		log.Fatal(err)
	}
	p.Write(a.Data) // as the data arrives
	if _, err := p.WriteTo(os.Stdout); err != nil {
		log.Fatal(err)
	}
	// Output:
	// ▁▃▅▆█▆▅▃▁
}

// An image too large to hold is drawn from a Source, which opens a new
// read of its data (row-major, here from a file section) each time the
// encoder asks: once for the range of values, once for the pixels.
func ExampleEncodePNGSource() {
	f, err := os.CreateTemp("", "frame-*.u2")
	if err != nil {
		log.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	// A 2 x 3 <u2 frame, as a camera would write it.
	if _, err := f.Write([]byte{0, 0, 100, 0, 200, 0, 44, 1, 144, 1, 244, 1}); err != nil {
		log.Fatal(err)
	}
	src := render.Source{
		DType: ndarray.MustParseDType("<u2"),
		Shape: []int{2, 3},
		Open: func() (io.ReadCloser, error) {
			return io.NopCloser(io.NewSectionReader(f, 0, 12)), nil
		},
	}
	var b bytes.Buffer
	if err := render.EncodePNGSource(&b, src, render.Options{}); err != nil {
		log.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		log.Fatal(err)
	}
	for y := range 2 {
		var row []uint32
		for x := range 3 {
			r, _, _, _ := img.At(x, y).RGBA()
			row = append(row, r>>8)
		}
		fmt.Println(row)
	}
	// Output:
	// [0 51 102]
	// [153 204 255]
}
