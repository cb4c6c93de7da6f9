package render_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/render"
)

// svgDoc is what the tests read back from an SVG: its polylines' points
// and its texts.
type svgDoc struct {
	width, height float64
	lines         [][][2]float64
	texts         []string
}

// parseSVG reads an SVG with encoding/xml, failing on anything that is not
// well-formed XML.
func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(b))
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range e.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch e.Name.Local {
			case "svg":
				if e.Name.Space != "http://www.w3.org/2000/svg" {
					t.Errorf("root namespace %q", e.Name.Space)
				}
				doc.width, _ = strconv.ParseFloat(attr("width"), 64)
				doc.height, _ = strconv.ParseFloat(attr("height"), 64)
			case "polyline":
				var pts [][2]float64
				for _, p := range strings.Fields(attr("points")) {
					x, y, ok := strings.Cut(p, ",")
					fx, err1 := strconv.ParseFloat(x, 64)
					fy, err2 := strconv.ParseFloat(y, 64)
					if !ok || err1 != nil || err2 != nil {
						t.Fatalf("point %q", p)
					}
					pts = append(pts, [2]float64{fx, fy})
				}
				doc.lines = append(doc.lines, pts)
			case "text":
				inText = true
			}
		case xml.CharData:
			if inText {
				doc.texts = append(doc.texts, string(e))
			}
		case xml.EndElement:
			inText = false
		}
	}
	return doc
}

func points(d svgDoc) int {
	n := 0
	for _, l := range d.lines {
		n += len(l)
	}
	return n
}

func TestSVGOnePointPerElement(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = math.Sin(float64(i) / 50)
	}
	a, _ := ndarray.FromSlice(v, len(v))
	var b bytes.Buffer
	if err := render.EncodeSVG(&b, a, render.Plot{XLabel: "index", YLabel: "sin <x> & co"}); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, b.Bytes())
	if len(d.lines) != 1 || points(d) != 1000 {
		t.Fatalf("%d lines, %d points; want 1 line of 1000", len(d.lines), points(d))
	}
	if d.width != 800 || d.height != 450 {
		t.Errorf("size %gx%g", d.width, d.height)
	}
	// x grows with the index; y falls (SVG's y points down) as the value
	// rises.
	l := d.lines[0]
	for i := 1; i < len(l); i++ {
		if l[i][0] <= l[i-1][0] {
			t.Fatalf("x of point %d is %g, after %g", i, l[i][0], l[i-1][0])
		}
		if (v[i] > v[i-1]) != (l[i][1] < l[i-1][1]) && v[i] != v[i-1] && math.Abs(l[i][1]-l[i-1][1]) > 0.01 {
			t.Fatalf("point %d goes the wrong way", i)
		}
	}
	joined := strings.Join(d.texts, "|")
	for _, want := range []string{"index", "sin <x> & co", "0", "200", "400", "600", "800", "-1.0", "-0.5", "0.5", "1.0"} {
		if !strings.Contains("|"+joined+"|", "|"+want+"|") {
			t.Errorf("no text %q among %s", want, joined)
		}
	}
}

func TestSVGRoundTicks(t *testing.T) {
	v := []float32{0.013, 0.0172, 0.0151}
	a, _ := ndarray.FromSlice(v, 3)
	x, _ := ndarray.FromSlice([]float64{400.5, 500, 712.25}, 3)
	var b bytes.Buffer
	if err := render.EncodeSVG(&b, a, render.Plot{X: x}); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, b.Bytes())
	joined := "|" + strings.Join(d.texts, "|") + "|"
	for _, want := range []string{"|450|", "|500|", "|700|", "|0.014|", "|0.017|"} {
		if !strings.Contains(joined, want) {
			t.Errorf("no tick %s among %s", want, joined)
		}
	}
	if points(d) != 3 {
		t.Errorf("%d points", points(d))
	}
}

func TestSVGGapsAndRows(t *testing.T) {
	nan := math.NaN()
	a, _ := ndarray.FromSlice([]float64{1, 2, nan, 4, 5, 6, math.Inf(1), 8, 0, -1, 2, 3}, 2, 6)
	var b bytes.Buffer
	if err := render.EncodeSVG(&b, a, render.Plot{}); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, b.Bytes())
	// Row 0: [1 2] [4 5 6]; row 1: [8 0 -1 2 3] after the infinity.
	if points(d) != 10 || len(d.lines) != 3 {
		t.Errorf("%d lines, %d points; want 3 lines of 10 finite points", len(d.lines), points(d))
	}
	// On a log axis the values that are not positive leave gaps too.
	b.Reset()
	if err := render.EncodeSVG(&b, a, render.Plot{Log: true}); err != nil {
		t.Fatal(err)
	}
	if d := parseSVG(t, b.Bytes()); points(d) != 8 {
		t.Errorf("log: %d points, want 8", points(d))
	}
}

func TestSVGThinsLongLinesKeepingSpikes(t *testing.T) {
	n := 250_000
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Sin(float64(i) / 1000))
	}
	v[123_457] = 50  // a spike up
	v[200_001] = -30 // and one down
	a, _ := ndarray.FromSlice(v, n)
	var b bytes.Buffer
	if err := render.EncodeSVG(&b, a, render.Plot{Width: 1000, Height: 400}); err != nil {
		t.Fatal(err)
	}
	d := parseSVG(t, b.Bytes())
	if points(d) > 2*1000 || points(d) < 1000 {
		t.Fatalf("%d points for %d values on a 1000-pixel plot", points(d), n)
	}
	top, bottom := math.Inf(1), math.Inf(-1)
	for _, p := range d.lines[0] {
		top, bottom = min(top, p[1]), max(bottom, p[1])
	}
	// The plot area runs from y=16 to y=400-44, the sine's band from
	// about 216 to 224 of it (-34 to 54 with the margins).
	if top > 40 || bottom < 330 {
		t.Errorf("the spikes were lost: the line spans y %g to %g", top, bottom)
	}
	// At the limit nothing is thinned.
	a, _ = ndarray.FromSlice(v[:render.MaxPoints], render.MaxPoints)
	b.Reset()
	if err := render.EncodeSVG(&b, a, render.Plot{}); err != nil {
		t.Fatal(err)
	}
	if got := points(parseSVG(t, b.Bytes())); got != render.MaxPoints {
		t.Errorf("%d points for %d values", got, render.MaxPoints)
	}
}

func TestSVGRefusals(t *testing.T) {
	f8 := func(shape ...int) *ndarray.Array {
		a, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), shape...)
		return a
	}
	x3, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), 3)
	for _, c := range []struct {
		name string
		a    *ndarray.Array
		p    render.Plot
		want error
	}{
		{"0-d", f8(), render.Plot{}, render.ErrUnsupported},
		{"3-d", f8(2, 2, 2), render.Plot{}, render.ErrUnsupported},
		{"empty", f8(0), render.Plot{}, render.ErrUnsupported},
		{"x length", f8(4), render.Plot{X: x3}, render.ErrOptions},
		{"range", f8(4), render.Plot{Range: [2]float64{1, 0}}, render.ErrOptions},
		{"tiny", f8(4), render.Plot{Width: 10, Height: 10}, render.ErrOptions},
	} {
		if err := render.EncodeSVG(io.Discard, c.a, c.p); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if err := render.CheckPlot(c.a.DType, c.a.Shape, c.p); !errors.Is(err, c.want) {
			t.Errorf("%s: CheckPlot: %v, want %v", c.name, err, c.want)
		}
	}
}
