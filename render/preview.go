package render

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/ndpack/ndpack/ndarray"
)

// previewLines is the most terminal lines a 2-D preview takes: a tall
// array is shrunk to fit them.
const previewLines = 40

// Preview draws an array for a terminal from its bytes as they stream
// by, in memory that depends on the terminal's size, not the array's: a
// 2-D array as Unicode upper half blocks ("▀", two pixels a character, in
// 24-bit colour), a 1-D array as a sparkline ("▁▂▃▄▅▆▇█"). Each pixel or
// sparkline column is the mean of the finite values that fall in it;
// pixels holding none are left blank. The scale runs from the lowest to
// the highest of those means, or over Options.Range; a sparkline's bar is
// the nearest of its eight heights.
//
// Feed it the array's data with Write, in storage order, then draw it with
// WriteTo. A Preview is not safe for concurrent use. Make one with
// NewPreview: the zero Preview draws nothing, and its
// Write fails.
type Preview struct {
	o           Options
	conv        *converter
	columnMajor bool
	rows, cols  int64 // of the array; rows is 1 for a 1-D array
	sparkline   bool
	h, w        int // bins down and across
	zoom        int // characters a bin takes across (and pixels down)
	sum         []float64
	count       []int32
	index       int64  // elements seen
	partial     []byte // the bytes of an element cut between writes
	vals        []float64
}

// NewPreview returns a Preview of an array of dtype dt and shape shape
// (1-D or 2-D, non-empty), whose bytes will arrive in row-major order, or
// column-major when columnMajor is set (a Fortran-order .npy), to be drawn
// at most width characters wide.
// It fails with an *ndarray.Error wrapping ErrOptions for invalid options or a width
// below 1, ErrUnsupported for a dtype that cannot be drawn, an empty array
// or one of more than 2 dimensions, and with an *ndarray.Error for an
// invalid shape.
func NewPreview(dt ndarray.DType, shape []int, columnMajor bool, width int, o Options) (*Preview, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	conv, err := newConverter(dt)
	if err != nil {
		return nil, err
	}
	if width < 1 {
		return nil, errorf(ErrOptions, "a preview %d characters wide", width)
	}
	p := &Preview{o: o, conv: conv, columnMajor: columnMajor, zoom: 1}
	n, err := ndarray.NumElements(shape)
	if err != nil {
		return nil, err
	}
	switch {
	case n == 0:
		return nil, errorf(ErrUnsupported, "an array of shape %s has no elements to draw", ndarray.FormatShape(shape))
	case len(shape) == 1:
		p.rows, p.cols, p.sparkline = 1, int64(shape[0]), true
		p.h, p.w = 1, int(min(p.cols, int64(width)))
	case len(shape) == 2:
		p.rows, p.cols = int64(shape[0]), int64(shape[1])
		// Half blocks make square pixels: fit the width and 2*previewLines
		// pixel rows, keeping the aspect; a small array is magnified by a
		// whole factor instead.
		s := math.Min(float64(width)/float64(p.cols), 2*previewLines/float64(p.rows))
		if s >= 1 {
			p.h, p.w, p.zoom = int(p.rows), int(p.cols), int(s)
		} else {
			p.h = max(1, int(math.Round(float64(p.rows)*s)))
			p.w = max(1, int(math.Round(float64(p.cols)*s)))
		}
	default:
		return nil, errorf(ErrUnsupported, "a %d-D array of shape %s: a preview draws 1-D and 2-D arrays", len(shape), ndarray.FormatShape(shape))
	}
	p.sum = make([]float64, p.h*p.w)
	p.count = make([]int32, p.h*p.w)
	return p, nil
}

// Write takes the next bytes of the array's data, in any pieces.
// Its error is nil, every byte taken, but for a Preview not made by
// NewPreview.
func (p *Preview) Write(b []byte) (int, error) {
	if p.conv == nil {
		return 0, errors.New("render: the Preview draws nothing: make one with NewPreview")
	}
	n := len(b)
	size := p.conv.dt.ItemSize
	if len(p.partial) > 0 {
		k := min(size-len(p.partial), len(b))
		p.partial = append(p.partial, b[:k]...)
		b = b[k:]
		if len(p.partial) < size {
			return n, nil
		}
		p.add(p.partial)
		p.partial = p.partial[:0]
	}
	whole := len(b) / size * size
	for len(b[:whole]) > 0 {
		k := min(whole, 4096*size)
		p.add(b[:k])
		b, whole = b[k:], whole-k
	}
	p.partial = append(p.partial, b...)
	return n, nil
}

// add bins whole elements.
func (p *Preview) add(b []byte) {
	k := len(b) / p.conv.dt.ItemSize
	if cap(p.vals) < k {
		p.vals = make([]float64, k)
	}
	vals := p.vals[:k]
	p.conv.convert(vals, b)
	total := p.rows * p.cols
	for _, v := range vals {
		if p.index >= total {
			return // more bytes than the shape holds: ignored
		}
		var i, j int64
		if p.columnMajor {
			i, j = p.index%p.rows, p.index/p.rows
		} else {
			i, j = p.index/p.cols, p.index%p.cols
		}
		p.index++
		if p.o.Log {
			if !(v > 0) {
				continue
			}
			v = math.Log10(v)
		}
		if !finite(v) {
			continue
		}
		bin := int(i*int64(p.h)/p.rows)*p.w + int(j*int64(p.w)/p.cols)
		p.sum[bin] += v
		p.count[bin]++
	}
}

// WriteTo draws the preview: lines ending in "\n", each at most the width
// asked for.
// Its error is w's write error.
func (p *Preview) WriteTo(w io.Writer) (int64, error) {
	sc := p.scale()
	cw := &countWriter{w: bufio.NewWriter(w)}
	level := func(bin int) (float64, bool) {
		if p.count[bin] == 0 {
			return 0, false
		}
		x, ok := sc.at(p.sum[bin] / float64(p.count[bin]))
		return x, ok
	}
	if p.sparkline {
		const bars = "▁▂▃▄▅▆▇█"
		for j := range p.w {
			x, ok := level(j)
			if !ok {
				cw.WriteString(" ")
				continue
			}
			k := int(x*7 + 0.5)
			cw.WriteString(bars[3*k : 3*k+3])
		}
		cw.WriteString("\n")
		return cw.done()
	}
	cmap := p.o.cmap()
	color := func(bin int) (c [3]uint8, ok bool) {
		if bin < 0 {
			return c, false
		}
		x, ok := level(bin)
		if !ok {
			return c, false
		}
		c[0], c[1], c[2] = cmap.rgb(x)
		return c, true
	}
	pixelRows := p.h * p.zoom
	for y := 0; y < pixelRows; y += 2 {
		top, bottom := y/p.zoom, (y+1)/p.zoom
		for x := range p.w * p.zoom {
			tb := top*p.w + x/p.zoom
			bb := -1
			if y+1 < pixelRows {
				bb = bottom*p.w + x/p.zoom
			}
			tc, tok := color(tb)
			bc, bok := color(bb)
			switch {
			case tok && bok:
				fmt.Fprintf(cw, "\x1b[38;2;%d;%d;%dm\x1b[48;2;%d;%d;%dm▀", tc[0], tc[1], tc[2], bc[0], bc[1], bc[2])
			case tok:
				fmt.Fprintf(cw, "\x1b[49m\x1b[38;2;%d;%d;%dm▀", tc[0], tc[1], tc[2])
			case bok:
				fmt.Fprintf(cw, "\x1b[49m\x1b[38;2;%d;%d;%dm▄", bc[0], bc[1], bc[2])
			default:
				cw.WriteString("\x1b[0m ")
			}
		}
		cw.WriteString("\x1b[0m\n")
	}
	return cw.done()
}

// scale is Options.Range, or the extent of the bins' means.
func (p *Preview) scale() scale {
	if p.o.Range != [2]float64{} {
		lo, hi := p.o.Range[0], p.o.Range[1]
		if p.o.Log {
			lo, hi = math.Log10(lo), math.Log10(hi)
		}
		return newScale(lo, hi, false)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, c := range p.count {
		if c > 0 {
			m := p.sum[i] / float64(c)
			lo, hi = min(lo, m), max(hi, m)
		}
	}
	if lo > hi {
		lo, hi = 0, 0
	}
	return newScale(lo, hi, false) // the bins hold logarithms already
}

// countWriter counts what it writes and keeps the first error.
type countWriter struct {
	w   *bufio.Writer
	n   int64
	err error
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	if c.err == nil {
		c.err = err
	}
	return n, err
}

func (c *countWriter) WriteString(s string) { c.Write([]byte(s)) }

func (c *countWriter) done() (int64, error) {
	if err := c.w.Flush(); c.err == nil {
		c.err = err
	}
	return c.n, c.err
}
