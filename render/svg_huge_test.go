package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/render"
)

// Values spanning -1.7e308 to 1.7e308, on either axis, are drawn where
// they belong: the spans (beyond the largest float64) are scaled in halves.
// Before, every point was "NaN" and the y ticks ran to "+Inf".
func TestSVGSpanBeyondFloat64(t *testing.T) {
	y, _ := ndarray.FromSlice([]float64{-1.7e308, 0, 1.7e308, 1e308}, 4)
	x, _ := ndarray.FromSlice([]float64{-1.7e308, -1, 1, 1.7e308}, 4)
	yTicks := []string{
		`<text x="64" y="148.41">-1.5e+308</text>`, `<text x="64" y="128.94">-1e+308</text>`,
		`<text x="64" y="109.47">-5e+307</text>`, `<text x="64" y="90">0</text>`,
		`<text x="64" y="70.53">5e+307</text>`, `<text x="64" y="51.06">1e+308</text>`,
		`<text x="64" y="31.59">1.5e+308</text>`,
	}
	for _, c := range []struct {
		name  string
		plot  render.Plot
		line  string
		texts []string
	}{
		{"against the index", render.Plot{Width: 300, Height: 200},
			`<polyline stroke="#3b528b" points="72.00,152.20 142.67,86.00 213.33,19.80 284.00,47.06"/>`,
			append([]string{`<text x="72" y="174">0</text>`, `<text x="284" y="174">3.0</text>`}, yTicks...)},
		{"against x", render.Plot{Width: 300, Height: 200, X: x},
			`<polyline stroke="#3b528b" points="72.00,152.20 178.00,86.00 178.00,19.80 284.00,47.06"/>`,
			append([]string{`<text x="84.47" y="174">-1.5e+308</text>`, `<text x="178" y="174">0</text>`, `<text x="271.53" y="174">1.5e+308</text>`}, yTicks...)},
	} {
		var b bytes.Buffer
		if err := render.EncodeSVG(&b, y, c.plot); err != nil {
			t.Fatal(err)
		}
		s := b.String()
		if strings.Contains(s, "NaN") || strings.Contains(s, "Inf") {
			t.Errorf("%s: NaN or Inf in the SVG:\n%s", c.name, s)
		}
		for _, want := range append([]string{c.line}, c.texts...) {
			if !strings.Contains(s, want+"\n") {
				t.Errorf("%s: no %s in\n%s", c.name, want, s)
			}
		}
		if n := strings.Count(s, "<text"); n != 14 { // 7 ticks on each axis
			t.Errorf("%s: %d texts", c.name, n)
		}
		parseSVG(t, b.Bytes())
	}
}
