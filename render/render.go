// Package render draws arrays so that people can look at them: a 2-D
// array as a PNG image (grayscale, or through matplotlib's viridis, magma
// or inferno colormaps), a 1-D array (or the rows of a 2-D one) as an SVG
// line plot with axes, and either as a preview of Unicode half blocks in
// 24-bit colour for a terminal.
//
// Every numeric dtype is drawn, in either byte order: bools as 0 and 1,
// integers and floats (float16 included) by value, complex numbers by
// their magnitude. A value's level is linear from the array's finite
// minimum (level 0, black) to its finite maximum (level 255, white),
// rounded to nearest, or from Options.Range; NaN and the infinities have
// no level and are drawn transparent. A uint8 array of shape (height,
// width, 3) or (height, width, 4) is an RGB or RGBA image already and is
// written as it is.
//
// The colormaps are matplotlib's 256-entry tables rounded to 8 bits, held
// as constants that gencolormaps.go generated from an installed matplotlib
// (go generate); the tests compare them with matplotlib where it is
// installed.
//
// The package depends on package ndarray and the standard library only.
package render

//go:generate go run gencolormaps.go

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors: every error the package returns wraps one of them.
var (
	// ErrUnsupported: an array that cannot be drawn (a record, string or
	// datetime dtype, float128, a shape of the wrong rank, no elements).
	ErrUnsupported = errors.New("cannot draw")
	// ErrOptions: options that contradict themselves or the array (a range
	// whose low end is not below its high end, an unknown colormap).
	ErrOptions = errors.New("invalid options")
)

func errorf(class error, format string, args ...any) error {
	return &ndarray.Error{Pkg: "render", Offset: -1, Err: class, Detail: fmt.Sprintf(format, args...)}
}

// colormap is how levels become colours: gray keeps the level as a gray
// value; the others are matplotlib's perceptually uniform colormaps, their
// 256 entries rounded to 8 bits.
type colormap int

const (
	gray colormap = iota
	viridis
	magma
	inferno
)

var colormapNames = [...]string{gray: "gray", viridis: "viridis", magma: "magma", inferno: "inferno"}

func (c colormap) String() string { return colormapNames[c] }

// lookup returns the index of name in names, ignoring case; "" is the
// first.
func lookup(names []string, name string) (int, bool) {
	if name == "" {
		return 0, true
	}
	for i, n := range names {
		if strings.EqualFold(n, name) {
			return i, true
		}
	}
	return 0, false
}

// rgb returns the colour of x, a position between 0 and 1 (clipped to
// them): for gray the level x*255 rounded to nearest; for the others
// matplotlib's entry floor(x*256), the last for x = 1, as matplotlib's
// colormaps pick it.
func (c colormap) rgb(x float64) (r, g, b uint8) {
	if !(x > 0) {
		x = 0
	}
	x = min(x, 1)
	if c == gray {
		l := uint8(x*255 + 0.5)
		return l, l, l
	}
	return c.entry(min(int(x*256), 255))
}

// entry returns the colormap's entry i, 0 to 255.
func (c colormap) entry(i int) (r, g, b uint8) {
	var t string
	switch c {
	case viridis:
		t = viridisRGB
	case magma:
		t = magmaRGB
	case inferno:
		t = infernoRGB
	default:
		return uint8(i), uint8(i), uint8(i)
	}
	return t[3*i], t[3*i+1], t[3*i+2]
}

// Options says how values become levels and colours.
type Options struct {
	// Colormap colours the levels: "gray" ("" too) writes a grayscale
	// PNG; "viridis", "magma" and "inferno", matplotlib's perceptually
	// uniform colormaps (their 256 entries rounded to 8 bits), an RGB one
	// (RGBA when some values are transparent). Case is ignored.
	Colormap string
	// Range, when not the zero value, is the value drawn at level 0 and
	// the value drawn at level 255; values outside are clipped to them.
	// The zero value draws from the array's finite minimum to its finite
	// maximum (positive minimum, with Log).
	Range [2]float64
	// Log draws the base-10 logarithm of the values, for data spanning
	// decades. Values that are not positive have none and are drawn
	// transparent, as NaN is.
	Log bool
	// Compression is how hard the PNG encoder compresses, as image/png's
	// levels of the same names: "fast" ("" too, the default: an array is
	// drawn to be looked at, at once), "default", "best" or "none".
	Compression string
}

// compression is the zlib effort of a PNG.
type compression int

const (
	bestSpeed compression = iota
	defaultCompression
	bestCompression
	noCompression
)

var compressionNames = [...]string{bestSpeed: "fast", defaultCompression: "default", bestCompression: "best", noCompression: "none"}

// cmap and level are the options' colormap and compression, which
// Validate has checked.
func (o Options) cmap() colormap {
	i, _ := lookup(colormapNames[:], o.Colormap)
	return colormap(i)
}

func (o Options) level() compression {
	i, _ := lookup(compressionNames[:], o.Compression)
	return compression(i)
}

// Validate reports options that contradict themselves: a range whose low
// end is not below its high end or is not finite, a logarithmic range that
// does not start above 0, an unknown colormap or compression.
// Its error is an *ndarray.Error wrapping ErrOptions.
func (o Options) Validate() error {
	if _, ok := lookup(colormapNames[:], o.Colormap); !ok {
		return errorf(ErrOptions, "unknown colormap %q (want %s)", o.Colormap, strings.Join(colormapNames[:], ", "))
	}
	if _, ok := lookup(compressionNames[:], o.Compression); !ok {
		return errorf(ErrOptions, "unknown compression %q (want %s)", o.Compression, strings.Join(compressionNames[:], ", "))
	}
	if o.Range == [2]float64{} {
		return nil
	}
	lo, hi := o.Range[0], o.Range[1]
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return errorf(ErrOptions, "range %g,%g: both ends must be finite", lo, hi)
	case lo >= hi:
		return errorf(ErrOptions, "range %g,%g: the low end must be below the high end", lo, hi)
	case o.Log && lo <= 0:
		return errorf(ErrOptions, "range %g,%g: a logarithmic scale needs a positive low end", lo, hi)
	}
	return nil
}

// scale maps values to positions between 0 and 1.
type scale struct {
	lo, k float64 // position = (v - lo) * k
	half  bool    // hi - lo overflows: position = (v/2 - lo/2) * k
	log   bool
}

// newScale returns the scale from lo to hi (already logarithms when log).
// A constant array (lo == hi) draws every value at position 0.
func newScale(lo, hi float64, log bool) scale {
	s := scale{lo: lo, log: log}
	switch d := hi - lo; {
	case d > 0 && !math.IsInf(d, 0):
		s.k = 1 / d
	case d > 0:
		s.half, s.k = true, 1/(hi/2-lo/2)
	}
	return s
}

// at returns v's position between 0 and 1, clipped, and false when v has
// none (NaN, an infinity, with log a value that is not positive).
func (s *scale) at(v float64) (float64, bool) {
	if s.log {
		if !(v > 0) {
			return 0, false
		}
		v = math.Log10(v)
	}
	if v-v != 0 { // NaN or an infinity
		return 0, false
	}
	var x float64
	if s.half {
		x = (v/2 - s.lo/2) * s.k
	} else {
		x = (v - s.lo) * s.k
	}
	if !(x > 0) {
		return 0, true
	}
	return min(x, 1), true
}

// converter turns the bytes of n elements into n float64 values.
type converter struct {
	dt      ndarray.DType
	swap    bool   // the bytes are in the other order than the machine's
	scratch []byte // for swapped bytes
}

// newConverter returns a converter for dt, or an error naming what cannot
// be drawn.
func newConverter(dt ndarray.DType) (*converter, error) {
	ok := dt.IsPlain()
	if ok {
		switch dt.Kind {
		case 'b':
		case 'i', 'u':
		case 'f':
			ok = dt.ItemSize <= 8
		case 'c':
			ok = dt.ItemSize <= 16
		default:
			ok = false
		}
	}
	if !ok {
		what := dt.String()
		if dt.IsRecord() {
			what = "a record dtype " + what
		}
		return nil, errorf(ErrUnsupported, "%s: not a number (bool, int, uint, float up to 64 bits, complex up to 128 bits)", what)
	}
	return &converter{dt: dt, swap: dt.ItemSize > 1 && dt.Order != '|' && dt.Order != ndarray.NativeOrder()}, nil
}

// convert fills dst with the values of the len(dst) elements in src.
func (c *converter) convert(dst []float64, src []byte) {
	n := len(dst)
	size := c.dt.ItemSize
	src = src[:n*size]
	if c.swap {
		if cap(c.scratch) < len(src) {
			c.scratch = make([]byte, len(src))
		}
		c.scratch = c.scratch[:len(src)]
		copy(c.scratch, src)
		ndarray.SwapBytes(c.scratch, c.dt)
		src = c.scratch
	}
	convertNative(dst, src, c.dt.Kind, size)
}
