package render

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
)

// Plot says how EncodeSVG draws a line plot. The zero value draws an
// 800 x 450 plot against the index, scaled to the data.
type Plot struct {
	// Width and Height are the SVG's size in pixels; zero means 800 by
	// 450.
	Width, Height int
	// X holds the x value of every element (a spectrometer's
	// wavelengths): a 1-D numeric array as long as the plotted array's
	// last axis. Nil plots against the index, 0 to n-1.
	X *ndarray.Array
	// XLabel and YLabel are the axis labels; empty means none.
	XLabel, YLabel string
	// Range, when not the zero value, fixes the y axis from Range[0] to
	// Range[1]; the lines are clipped to it.
	Range [2]float64
	// Log gives a logarithmic y axis; values that are not positive are
	// left out, as NaN is.
	Log bool
}

// MaxPoints is how many points a line holds before EncodeSVG thins it: a
// longer line keeps, for each pixel column, its lowest and highest point
// (in the order they come), so that spikes stay visible.
const MaxPoints = 100_000

// EncodeSVG writes a line plot of a as an SVG document to w: one line for
// a 1-D array, one line per row for a 2-D array, with axes, ticks at round
// numbers and the labels of p. Each line is a polyline with a point per
// element (per pixel column above MaxPoints), broken where a value or its
// x is NaN or infinite.
// It fails with a.Validate's *ndarray.Error for an invalid array, with
// CheckPlot's errors, and with w's write error.
func EncodeSVG(w io.Writer, a *ndarray.Array, p Plot) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if err := CheckPlot(a.DType, a.Shape, p); err != nil {
		return err
	}
	var x *Source
	if p.X != nil {
		xs := ArraySource(p.X)
		x = &xs
	}
	return encodeSVG(w, ArraySource(a), x, p)
}

// EncodeSVGSource is EncodeSVG for an array read from s, and its x values
// (nil: the index) read from x; p.X must be nil. It reads s twice (once
// for the extent of the y axis, unless p.Range gives it, once to draw),
// x once and then again for each line, and holds a few thousand values at
// a time: a line of 10^8 values is drawn, thinned to its pixel columns,
// in a few megabytes.
// It fails as CheckPlot does, with an *ndarray.Error wrapping ErrOptions when p.X is
// set or x does not fit the lines, ndarray.ErrTruncated when s's or x's data ends
// early, and with their read errors or w's write error.
func EncodeSVGSource(w io.Writer, s Source, x *Source, p Plot) error {
	if p.X != nil {
		return errorf(ErrOptions, "EncodeSVGSource takes the x values as a Source, not as Plot.X")
	}
	if err := CheckPlot(s.DType, s.Shape, p); err != nil {
		return err
	}
	if x != nil {
		if err := checkX(x.DType, x.Shape, s.Shape[len(s.Shape)-1]); err != nil {
			return err
		}
	}
	return encodeSVG(w, s, x, p)
}

// svgBlock is how many values a line is read in at a time.
const svgBlock = 8192

// values reads a Source's elements as float64 values, a block at a time.
type values struct {
	rc         io.ReadCloser
	conv       converter
	buf        []byte
	vals       []float64
	read, want int64 // bytes
}

func openValues(s Source) (*values, error) {
	c, err := newConverter(s.DType)
	if err != nil {
		return nil, err
	}
	rc, err := s.Open()
	if err != nil {
		return nil, err
	}
	n := int64(s.DType.ItemSize)
	for _, d := range s.Shape {
		n *= int64(d)
	}
	return &values{rc: rc, conv: *c, buf: make([]byte, svgBlock*s.DType.ItemSize), vals: make([]float64, svgBlock), want: n}, nil
}

// next returns the next k values, k at most svgBlock.
func (v *values) next(k int) ([]float64, error) {
	b := v.buf[:k*v.conv.dt.ItemSize]
	n, err := io.ReadFull(v.rc, b)
	v.read += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			err = truncated(v.read, v.want)
		}
		return nil, err
	}
	v.conv.convert(v.vals[:k], b)
	return v.vals[:k], nil
}

func (v *values) close() { v.rc.Close() }

// eachValue calls fn with every value of a line of n from ys and its x
// from xs (the index when xs is nil), a block at a time.
func eachValue(ys, xs *values, n int, fn func(x, y []float64, first int)) error {
	var index []float64
	if xs == nil {
		index = make([]float64, svgBlock)
	}
	for first := 0; first < n; first += svgBlock {
		k := min(svgBlock, n-first)
		y, err := ys.next(k)
		if err != nil {
			return err
		}
		var x []float64
		if xs != nil {
			if x, err = xs.next(k); err != nil {
				return err
			}
		} else {
			x = index[:k]
			for i := range x {
				x[i] = float64(first + i)
			}
		}
		fn(x, y, first)
	}
	return nil
}

// axis maps values between lo and hi to positions between 0 and 1 without
// overflow, even when hi - lo is beyond the largest float64.
type axis struct {
	lo, hi float64
	half   bool // hi - lo overflows: work with halves
}

func newAxis(lo, hi float64) axis {
	return axis{lo: lo, hi: hi, half: math.IsInf(hi-lo, 0)}
}

// pos is (v - lo) / (hi - lo).
func (a axis) pos(v float64) float64 {
	if a.half {
		return (v/2 - a.lo/2) / (a.hi/2 - a.lo/2)
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// clampFloat keeps v within the finite float64 values.
func clampFloat(v float64) float64 { return max(-math.MaxFloat64, min(v, math.MaxFloat64)) }

// svgPlot is one plot being drawn: its sources, its axes and the plot
// area inside the margins.
type svgPlot struct {
	p                  Plot
	ysrc               Source
	xsrc               *Source
	rows, n            int
	xlo, xhi, ylo, yhi float64
	xa, ya             axis
	left, top, pw, ph  float64
}

func encodeSVG(w io.Writer, ysrc Source, xsrc *Source, p Plot) error {
	sp := &svgPlot{p: p, ysrc: ysrc, xsrc: xsrc, rows: 1, n: ysrc.Shape[0]}
	if len(ysrc.Shape) == 2 {
		sp.rows, sp.n = ysrc.Shape[0], ysrc.Shape[1]
	}
	if sp.p.Width == 0 && sp.p.Height == 0 {
		sp.p.Width, sp.p.Height = 800, 450
	}
	if err := sp.extent(); err != nil {
		return err
	}
	sp.layout()
	bw := bufio.NewWriterSize(w, 64<<10)
	sp.writeFrame(bw)
	if err := sp.writeLines(bw); err != nil {
		return err
	}
	bw.WriteString("</g>\n</svg>\n")
	return bw.Flush()
}

func (sp *svgPlot) openX() (*values, error) {
	if sp.xsrc == nil {
		return nil, nil
	}
	return openValues(*sp.xsrc)
}

// extent finds the extent of both axes, over the values that are drawn.
func (sp *svgPlot) extent() error {
	p, n := sp.p, sp.n
	xlo, xhi := 0.0, float64(n-1)
	if sp.xsrc != nil {
		xs, err := sp.openX()
		if err != nil {
			return err
		}
		xlo, xhi = math.Inf(1), math.Inf(-1)
		err = eachValue(xs, nil, n, func(_, x []float64, _ int) {
			l, h := extent(x, false)
			xlo, xhi = min(xlo, l), max(xhi, h)
		})
		xs.close()
		if err != nil {
			return err
		}
	}
	fixed := p.Range != [2]float64{}
	ylo, yhi := math.Inf(1), math.Inf(-1)
	if fixed {
		ylo, yhi = p.Range[0], p.Range[1]
	} else {
		ys, err := openValues(sp.ysrc)
		if err != nil {
			return err
		}
		for range sp.rows {
			xs, err := sp.openX()
			if err == nil {
				err = eachValue(ys, xs, n, func(x, y []float64, _ int) {
					for i, v := range y {
						if finite(x[i]) && finite(v) && (!p.Log || v > 0) {
							ylo, yhi = min(ylo, v), max(yhi, v)
						}
					}
				})
				if xs != nil {
					xs.close()
				}
			}
			if err != nil {
				ys.close()
				return err
			}
		}
		ys.close()
	}
	if p.Log && ylo <= yhi {
		ylo, yhi = math.Log10(ylo), math.Log10(yhi)
	}
	xlo, xhi = widen(xlo, xhi)
	ylo, yhi = widen(ylo, yhi)
	if !fixed {
		// A margin of 5% keeps the extremes off the frame, as matplotlib's.
		m := (yhi - ylo) / 20
		if math.IsInf(m, 0) {
			m = (yhi/2 - ylo/2) / 10
		}
		ylo, yhi = clampFloat(ylo-m), clampFloat(yhi+m)
	}
	sp.xlo, sp.xhi, sp.ylo, sp.yhi = xlo, xhi, ylo, yhi
	sp.xa, sp.ya = newAxis(xlo, xhi), newAxis(ylo, yhi)
	return nil
}

// layout places the plot area inside margins for the tick labels and
// axis labels.
func (sp *svgPlot) layout() {
	left, right, top, bottom := 72.0, 16.0, 16.0, 44.0
	if sp.p.YLabel != "" {
		left += 18
	}
	if sp.p.XLabel != "" {
		bottom += 18
	}
	sp.left, sp.top = left, top
	sp.pw, sp.ph = float64(sp.p.Width)-left-right, float64(sp.p.Height)-top-bottom
}

func (sp *svgPlot) px(x float64) float64 { return sp.left + sp.xa.pos(x)*sp.pw }

func (sp *svgPlot) py(y float64) float64 {
	v := sp.top + sp.ph - sp.ya.pos(y)*sp.ph
	return min(max(v, sp.top-4*sp.ph), sp.top+5*sp.ph) // far outside the clip is as good as infinitely
}

// writeFrame writes the SVG's head, the frame, ticks and labels.
func (sp *svgPlot) writeFrame(bw *bufio.Writer) {
	p, left, top, pw, ph := sp.p, sp.left, sp.top, sp.pw, sp.ph
	fmt.Fprintf(bw, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">
<rect width="100%%" height="100%%" fill="white"/>
<defs><clipPath id="plot-area"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath></defs>
`, p.Width, p.Height, p.Width, p.Height, num(left), num(top), num(pw), num(ph))

	// Axes and ticks.
	fmt.Fprintf(bw, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="black"/>`+"\n", num(left), num(top), num(pw), num(ph))
	bw.WriteString(`<g stroke="black">` + "\n")
	xt, yt := ticks(sp.xlo, sp.xhi, false), ticks(sp.ylo, sp.yhi, p.Log)
	for _, t := range xt {
		x := sp.px(t.v)
		fmt.Fprintf(bw, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(x), num(top+ph), num(x), num(top+ph+5))
	}
	for _, t := range yt {
		y := top + ph - sp.ya.pos(t.v)*ph
		fmt.Fprintf(bw, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`+"\n", num(left-5), num(y), num(left), num(y))
	}
	bw.WriteString("</g>\n<g text-anchor=\"middle\">\n")
	for _, t := range xt {
		fmt.Fprintf(bw, `<text x="%s" y="%s">%s</text>`+"\n", num(sp.px(t.v)), num(top+ph+18), escape(t.label))
	}
	bw.WriteString("</g>\n<g text-anchor=\"end\">\n")
	for _, t := range yt {
		y := top + ph - sp.ya.pos(t.v)*ph
		fmt.Fprintf(bw, `<text x="%s" y="%s">%s</text>`+"\n", num(left-8), num(y+4), escape(t.label))
	}
	bw.WriteString("</g>\n")
	if p.XLabel != "" {
		fmt.Fprintf(bw, `<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(left+pw/2), num(float64(p.Height)-10), escape(p.XLabel))
	}
	if p.YLabel != "" {
		fmt.Fprintf(bw, `<text transform="translate(16 %s) rotate(-90)" text-anchor="middle">%s</text>`+"\n", num(top+ph/2), escape(p.YLabel))
	}
}

// writeLines writes one polyline per row (more where values are missing),
// thinned to the min and max of each pixel column when there are more
// values than MaxPoints.
func (sp *svgPlot) writeLines(bw *bufio.Writer) error {
	bw.WriteString(`<g clip-path="url(#plot-area)" fill="none" stroke-width="1.2" stroke-linejoin="round">` + "\n")
	ys, err := openValues(sp.ysrc)
	if err != nil {
		return err
	}
	defer ys.close()
	var pts []byte
	for r := range sp.rows {
		color := lineColor(r, sp.rows)
		open := false
		emit := func(x, y float64) {
			if !open {
				fmt.Fprintf(bw, `<polyline stroke="%s" points="`, color)
				open, pts = true, pts[:0]
			} else {
				pts = append(pts, ' ')
			}
			pts = strconv.AppendFloat(pts, sp.px(x), 'f', 2, 64)
			pts = append(pts, ',')
			pts = strconv.AppendFloat(pts, sp.py(y), 'f', 2, 64)
			if len(pts) > 32<<10 {
				bw.Write(pts)
				pts = pts[:0]
			}
		}
		end := func() {
			if open {
				bw.Write(pts)
				bw.WriteString("\"/>\n")
				open = false
			}
		}
		if err := sp.eachPoint(ys, emit, end); err != nil {
			return err
		}
	}
	return nil
}

// eachPoint hands the next row's points to emit, thinned, calling end
// where a line breaks (a value that cannot be drawn) and at the row's end.
func (sp *svgPlot) eachPoint(ys *values, emit func(x, y float64), end func()) error {
	thin := sp.n > MaxPoints
	var col columnBucket
	xs, err := sp.openX()
	if err != nil {
		return err
	}
	err = eachValue(ys, xs, sp.n, func(xv, yv []float64, _ int) {
		for i, y := range yv {
			x := xv[i]
			if sp.p.Log {
				if y > 0 {
					y = math.Log10(y)
				} else {
					y = math.NaN()
				}
			}
			if !finite(x) || !finite(y) {
				col.flush(emit)
				end()
				continue
			}
			if !thin {
				emit(x, y)
				continue
			}
			c := int(math.Floor(sp.px(x)))
			if col.n > 0 && c != col.column {
				col.flush(emit)
			}
			col.add(c, x, y)
		}
	})
	if xs != nil {
		xs.close()
	}
	if err != nil {
		return err
	}
	col.flush(emit)
	end()
	return nil
}

// CheckPlot reports whether EncodeSVG can draw an array of dtype dt and
// shape shape with p, before its data is read.
// It fails with an *ndarray.Error wrapping ErrUnsupported for a dtype or shape that
// cannot be drawn, ErrOptions for an invalid range, size or X, and with
// p.X.Validate's *ndarray.Error for an invalid X.
func CheckPlot(dt ndarray.DType, shape []int, p Plot) error {
	if _, err := newConverter(dt); err != nil {
		return err
	}
	n := 0
	switch len(shape) {
	case 1:
		n = shape[0]
	case 2:
		n = shape[1]
	default:
		return errorf(ErrUnsupported, "a %d-D array of shape %s (%s): a line plot is drawn from a 1-D array, or the rows of a 2-D one", len(shape), ndarray.FormatShape(shape), dt)
	}
	if shape[0] == 0 || n == 0 {
		return errorf(ErrUnsupported, "an array of shape %s has no elements to draw", ndarray.FormatShape(shape))
	}
	if err := (Options{Range: p.Range, Log: p.Log}).Validate(); err != nil {
		return err
	}
	if p.Width != 0 || p.Height != 0 {
		if p.Width < 200 || p.Height < 120 || p.Width > 1<<16 || p.Height > 1<<16 {
			return errorf(ErrOptions, "a plot of %d x %d pixels: want 200 x 120 to 65536 x 65536", p.Width, p.Height)
		}
	}
	if p.X != nil {
		if err := p.X.Validate(); err != nil {
			return err
		}
		return checkX(p.X.DType, p.X.Shape, n)
	}
	return nil
}

// checkX reports whether x values of dtype dt and shape shape can be
// drawn against lines of n values.
func checkX(dt ndarray.DType, shape []int, n int) error {
	if len(shape) != 1 || shape[0] != n {
		return errorf(ErrOptions, "the x values are of shape %s; the array's rows are %d long", ndarray.FormatShape(shape), n)
	}
	if _, err := newConverter(dt); err != nil {
		return errorf(ErrOptions, "the x values: %s", err.(*ndarray.Error).Detail)
	}
	return nil
}

// columnBucket gathers the points of a thinned line that fall in one pixel
// column, and gives back its lowest and highest in the order they came.
type columnBucket struct {
	column         int
	n              int
	loX, loY       float64
	hiX, hiY       float64
	loIndex, hiIdx int
}

func (b *columnBucket) add(column int, x, y float64) {
	if b.n == 0 {
		*b = columnBucket{column: column, loX: x, loY: y, hiX: x, hiY: y}
	}
	if y < b.loY {
		b.loX, b.loY, b.loIndex = x, y, b.n
	}
	if y > b.hiY {
		b.hiX, b.hiY, b.hiIdx = x, y, b.n
	}
	b.n++
}

func (b *columnBucket) flush(emit func(x, y float64)) {
	switch {
	case b.n == 0:
		return
	case b.n == 1 || b.loIndex == b.hiIdx:
		emit(b.loX, b.loY)
	case b.loIndex < b.hiIdx:
		emit(b.loX, b.loY)
		emit(b.hiX, b.hiY)
	default:
		emit(b.hiX, b.hiY)
		emit(b.loX, b.loY)
	}
	b.n = 0
}

func finite(v float64) bool { return v-v == 0 }

// extent returns the finite minimum and maximum of vs (+Inf, -Inf if none).
func extent(vs []float64, positive bool) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if finite(v) && (!positive || v > 0) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return lo, hi
}

// widen makes an axis of some length from an extent: nothing drawn gives
// 0 to 1, a single value the unit around it.
func widen(lo, hi float64) (float64, float64) {
	switch {
	case lo > hi:
		return 0, 1
	case lo == hi:
		d := max(math.Abs(lo)/2, 0.5)
		return clampFloat(lo - d), clampFloat(hi + d)
	}
	return lo, hi
}

type tick struct {
	v     float64
	label string
}

// ticks returns about five ticks at round numbers (1, 2 or 5 times a power
// of ten) between lo and hi; on a log axis (lo and hi are logarithms) at
// the powers of ten when the axis spans at least one.
func ticks(lo, hi float64, log bool) []tick {
	if log && math.Floor(hi) >= math.Ceil(lo) {
		step := math.Max(1, math.Ceil((math.Floor(hi)-math.Ceil(lo)+1)/8))
		var ts []tick
		for e := math.Ceil(lo); e <= hi; e += step {
			ts = append(ts, tick{e, "1e" + strconv.Itoa(int(e))})
		}
		return ts
	}
	raw := (hi - lo) / 5
	if math.IsInf(raw, 0) {
		raw = hi/5 - lo/5
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{2, 5, 10} {
		if raw/mag >= m*0.75 {
			step = m * mag
		}
	}
	decimals := max(0, -int(math.Floor(math.Log10(step))))
	var ts []tick
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9 && !math.IsInf(k*step, 0) && len(ts) < 20; k++ {
		v := k * step
		if log {
			ts = append(ts, tick{v, strconv.FormatFloat(math.Pow(10, v), 'g', 3, 64)})
			continue
		}
		ts = append(ts, tick{v, tickLabel(v, decimals)})
	}
	return ts
}

// tickLabel writes v with the decimals the tick step needs, or in
// exponent form when it is very large or small.
func tickLabel(v float64, decimals int) string {
	if v == 0 {
		return "0"
	}
	if a := math.Abs(v); a >= 1e6 || decimals > 5 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// lineColor picks row r's colour of rows from viridis, its dark end to its
// yellow-green, so that neighbouring rows look alike.
func lineColor(r, rows int) string {
	x := 0.25
	if rows > 1 {
		x = 0.85 * float64(r) / float64(rows-1)
	}
	cr, cg, cb := viridis.rgb(x)
	return fmt.Sprintf("#%02x%02x%02x", cr, cg, cb)
}

// num writes a coordinate with two decimals at most.
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}

func escape(s string) string {
	var b strings.Builder
	xml.EscapeText(&b, []byte(s))
	return b.String()
}
