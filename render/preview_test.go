package render_test

import (
	"bytes"
	"errors"
	"math"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/render"
)

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// cells returns each line of a preview as the characters it shows.
func cells(out string) []string {
	return strings.Split(strings.TrimSuffix(sgr.ReplaceAllString(out, ""), "\n"), "\n")
}

func preview(t *testing.T, a *ndarray.Array, width int, o render.Options) string {
	t.Helper()
	var b bytes.Buffer
	p, err := render.NewPreview(a.DType, a.Shape, false, width, o)
	if err != nil {
		t.Fatal(err)
	}
	p.Write(a.Data)
	if _, err := p.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPreviewFitsTheWidth(t *testing.T) {
	for _, c := range []struct {
		shape       []int
		width       int
		cols, lines int
	}{
		{[]int{4, 6}, 80, 78, 26},       // magnified 13 times
		{[]int{100, 300}, 10, 10, 2},    // shrunk to 10 x 3 pixels
		{[]int{1000, 10}, 80, 1, 40},    // tall: 80 pixel rows, one column
		{[]int{2, 2}, 1, 1, 1},          // one cell, both halves
		{[]int{480, 640}, 100, 100, 38}, // a camera frame: 100 x 75 pixels
	} {
		a, _ := ndarray.Zeros(ndarray.MustParseDType("<u2"), c.shape...)
		v, _ := ndarray.Values[uint16](a)
		for i := range v {
			v[i] = uint16(i)
		}
		lines := cells(preview(t, a, c.width, render.Options{}))
		if len(lines) != c.lines {
			t.Errorf("%v at width %d: %d lines, want %d", c.shape, c.width, len(lines), c.lines)
		}
		for i, l := range lines {
			if n := utf8.RuneCountInString(l); n != c.cols || n > c.width {
				t.Errorf("%v at width %d: line %d is %d characters, want %d", c.shape, c.width, i, n, c.cols)
				break
			}
		}
	}
}

func TestPreviewColoursAndBlanks(t *testing.T) {
	nan := math.NaN()
	// Two pixel rows: top [0, NaN], bottom [1, NaN].
	a, _ := ndarray.FromSlice([]float64{0, nan, 1, nan}, 2, 2)
	out := preview(t, a, 2, render.Options{Colormap: "viridis"})
	want := "\x1b[38;2;68;1;84m\x1b[48;2;253;231;37m▀\x1b[0m \x1b[0m\n"
	if out != want {
		t.Errorf("got %q\nwant %q", out, want)
	}
	// An odd row count leaves the last half blank below.
	a, _ = ndarray.FromSlice([]float64{0, 1, 2}, 3, 1)
	lines := cells(preview(t, a, 1, render.Options{}))
	if strings.Join(lines, "/") != "▀/▀" {
		t.Errorf("3 x 1: %q", lines)
	}
}

func TestPreviewSparkline(t *testing.T) {
	a, _ := ndarray.FromSlice([]int8{0, 1, 2, 3, 4, 5, 6, 7}, 8)
	if got := preview(t, a, 80, render.Options{}); got != "▁▂▃▄▅▆▇█\n" {
		t.Errorf("ramp: %q", got)
	}
	v := make([]float32, 1000)
	for i := range v {
		v[i] = float32(math.Sin(float64(i) / 100))
	}
	v[500] = float32(math.NaN())
	a, _ = ndarray.FromSlice(v, len(v))
	got := strings.TrimSuffix(preview(t, a, 50, render.Options{}), "\n")
	if utf8.RuneCountInString(got) != 50 || !strings.Contains(got, "█") || !strings.Contains(got, "▁") {
		t.Errorf("sine at width 50: %q", got)
	}
}

// Bytes fed one at a time, in column-major order and big-endian, draw
// what the C-order native array draws.
func TestPreviewStreams(t *testing.T) {
	v := make([]float64, 37*23)
	for i := range v {
		v[i] = math.Sin(float64(i)/17) * float64(i%23)
	}
	a, _ := ndarray.FromSlice(v, 37, 23)
	want := preview(t, a, 20, render.Options{Colormap: "magma"})
	big, _ := a.ToOrder('>')
	f, _ := big.ColumnMajorData()
	p, err := render.NewPreview(big.DType, big.Shape, true, 20, render.Options{Colormap: "magma"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range f {
		p.Write(f[i : i+1])
	}
	var b bytes.Buffer
	if _, err := p.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != want {
		t.Error("the streamed Fortran-order big-endian twin previews differently")
	}
}

func TestPreviewRefusals(t *testing.T) {
	for _, c := range []struct {
		dt    string
		shape []int
		width int
		want  error
	}{
		{"<f8", nil, 80, render.ErrUnsupported},
		{"<f8", []int{2, 2, 2}, 80, render.ErrUnsupported},
		{"<f8", []int{0, 3}, 80, render.ErrUnsupported},
		{"|S3", []int{3}, 80, render.ErrUnsupported},
		{"<f8", []int{3}, 0, render.ErrOptions},
	} {
		if _, err := render.NewPreview(ndarray.MustParseDType(c.dt), c.shape, false, c.width, render.Options{}); !errors.Is(err, c.want) {
			t.Errorf("%s %v width %d: %v, want %v", c.dt, c.shape, c.width, err, c.want)
		}
	}
}
