package render

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
	"io"
	"math"

	"github.com/ndpack/ndpack/ndarray"
)

// frame is a 2-D array ready to be drawn row by row: its scale has been
// found (one pass over the values), and each row becomes pixels as it is
// written, so that no image the size of the array is ever held.
type frame struct {
	a        *ndarray.Array
	h, w     int
	channels int // bytes a pixel: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
	rgb      bool
	conv     *converter
	sc       scale
	cmap     Colormap
	vals     []float64 // one row's values
}

// CheckImage reports whether EncodePNG can draw an array of dtype dt and
// shape shape with o, before its data is read: a caller holding only a
// file's header learns that a 4-D or record array will be refused
// without reading gigabytes.
func CheckImage(dt ndarray.DType, shape []int, o Options) error {
	_, err := checkImage(dt, shape, o)
	return err
}

// checkImage returns the channels of the image an array draws: 0 when
// they depend on its values (gray or a colormap, with alpha if some value
// has no level), 3 or 4 for an RGB or RGBA array.
func checkImage(dt ndarray.DType, shape []int, o Options) (rgb int, err error) {
	if err := o.Validate(); err != nil {
		return 0, err
	}
	if _, err := newConverter(dt); err != nil {
		return 0, err // a record, string or datetime, whatever its shape
	}
	switch {
	case len(shape) == 3 && (shape[2] == 3 || shape[2] == 4) && dt.Kind == ndarray.KindUint && dt.ItemSize == 1 && dt.IsPlain():
		if o.Colormap != Gray || o.Range != [2]float64{} || o.Log {
			return 0, errorf(ErrOptions, "a uint8 array of shape %s is an %s image, written as it is: a colormap, range or log scale does not apply", ndarray.FormatShape(shape), map[int]string{3: "RGB", 4: "RGBA"}[shape[2]])
		}
		rgb = shape[2]
	case len(shape) != 2:
		more := ""
		if len(shape) == 3 {
			more = ", or 3-D uint8 with 3 or 4 channels (RGB, RGBA)"
		}
		return 0, errorf(ErrUnsupported, "a %d-D array of shape %s (%s): an image is drawn from a 2-D array%s", len(shape), ndarray.FormatShape(shape), dt, more)
	}
	if shape[0] == 0 || shape[1] == 0 {
		return 0, errorf(ErrUnsupported, "an array of shape %s has no elements to draw", ndarray.FormatShape(shape))
	}
	if shape[0] > math.MaxInt32 || shape[1] > math.MaxInt32 {
		return 0, errorf(ErrUnsupported, "shape %s: a PNG is at most %d pixels on a side", ndarray.FormatShape(shape), math.MaxInt32)
	}
	return rgb, nil
}

// prepare finds the scale a is drawn with.
func prepare(a *ndarray.Array, o Options) (*frame, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	rgb, err := checkImage(a.DType, a.Shape, o)
	if err != nil {
		return nil, err
	}
	f := &frame{a: a, cmap: o.Colormap, h: a.Shape[0], w: a.Shape[1], rgb: rgb > 0, channels: rgb}
	if f.rgb {
		return f, nil
	}
	conv, err := newConverter(a.DType)
	if err != nil {
		return nil, err
	}
	f.conv, f.vals = conv, make([]float64, f.w)
	lo, hi, missing := f.extent(o)
	f.sc = newScale(lo, hi, o.Log)
	f.channels = 1
	if o.Colormap != Gray {
		f.channels = 3
	}
	if missing {
		f.channels++
	}
	return f, nil
}

// extent finds the ends of the scale (as logarithms with o.Log) and
// whether any value has no level.
func (f *frame) extent(o Options) (lo, hi float64, missing bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	rowBytes := f.w * f.a.DType.ItemSize
	canMiss := o.Log || f.a.DType.Kind == ndarray.KindFloat || f.a.DType.Kind == ndarray.KindComplex
	if o.Range != [2]float64{} && !canMiss {
		lo, hi = o.Range[0], o.Range[1]
		if o.Log {
			lo, hi = math.Log10(lo), math.Log10(hi)
		}
		return lo, hi, false
	}
	for i := range f.h {
		f.conv.convert(f.vals, f.a.Data[i*rowBytes:])
		for _, v := range f.vals {
			switch {
			case v-v != 0, o.Log && !(v > 0): // NaN, infinite, no logarithm
				missing = true
			default:
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if o.Range != [2]float64{} {
		lo, hi = o.Range[0], o.Range[1]
	} else if lo > hi { // nothing has a level
		lo, hi = 0, 0
	}
	if o.Log && lo <= hi && lo > 0 {
		lo, hi = math.Log10(lo), math.Log10(hi)
	}
	return lo, hi, missing
}

// row fills dst (w*channels bytes) with the pixels of row i.
func (f *frame) row(i int, dst []byte) {
	if f.rgb {
		n := f.w * f.channels
		copy(dst, f.a.Data[i*n:(i+1)*n])
		return
	}
	f.conv.convert(f.vals, f.a.Data[i*f.w*f.a.DType.ItemSize:])
	switch {
	case f.channels == 1 && !f.sc.log && !f.sc.half:
		// The common case, kept free of calls: opaque gray.
		lo, k := f.sc.lo, f.sc.k*255
		dst = dst[:len(f.vals)]
		for j, v := range f.vals {
			x := (v - lo) * k
			if !(x > 0) {
				x = 0
			}
			dst[j] = uint8(min(x, 255) + 0.5)
		}
	case f.channels <= 2:
		for j, v := range f.vals {
			x, ok := f.sc.at(v)
			l := uint8(x*255 + 0.5)
			if f.channels == 1 {
				dst[j] = l
			} else if ok {
				dst[2*j], dst[2*j+1] = l, 255
			} else {
				dst[2*j], dst[2*j+1] = 0, 0
			}
		}
	default:
		c := f.channels
		for j, v := range f.vals {
			x, ok := f.sc.at(v)
			p := dst[c*j : c*j+c]
			if !ok {
				clear(p)
				continue
			}
			p[0], p[1], p[2] = f.cmap.entry(min(int(x*256), 255))
			if c == 4 {
				p[3] = 255
			}
		}
	}
}

// EncodePNG writes a as a PNG image to w: a 2-D array as an image whose
// width is the array's second axis and height its first, row 0 at the
// top, gray (gray and alpha when some values are transparent) or, with a
// colormap, RGB (RGBA); a uint8 array of shape (h, w, 3) or (h, w, 4) as
// the RGB or RGBA image it is. The pixels are made and compressed one row
// at a time: memory beyond a is a few rows and the compressor's state.
func EncodePNG(w io.Writer, a *ndarray.Array, o Options) error {
	f, err := prepare(a, o)
	if err != nil {
		return err
	}
	return f.encode(w, o.Compression)
}

// Image returns a drawn as an image.Image: an *image.Gray for an opaque
// grayscale image, an *image.NRGBA otherwise. EncodePNG writes the same
// pixels without holding them all.
func Image(a *ndarray.Array, o Options) (image.Image, error) {
	f, err := prepare(a, o)
	if err != nil {
		return nil, err
	}
	r := image.Rect(0, 0, f.w, f.h)
	if f.channels == 1 {
		img := image.NewGray(r)
		for i := range f.h {
			f.row(i, img.Pix[i*img.Stride:])
		}
		return img, nil
	}
	img := image.NewNRGBA(r)
	buf := make([]byte, f.w*f.channels)
	for i := range f.h {
		f.row(i, buf)
		out := img.Pix[i*img.Stride:]
		for j := range f.w {
			p, q := buf[j*f.channels:(j+1)*f.channels], out[4*j:4*j+4]
			switch f.channels {
			case 2:
				q[0], q[1], q[2], q[3] = p[0], p[0], p[0], p[1]
			case 3:
				q[0], q[1], q[2], q[3] = p[0], p[1], p[2], 255
			case 4:
				copy(q, p)
			}
		}
	}
	return img, nil
}

// PNG's colour types by channel count.
var colorTypes = [5]byte{1: 0, 2: 4, 3: 2, 4: 6}

var zlibLevels = [...]int{BestSpeed: zlib.BestSpeed, DefaultCompression: zlib.DefaultCompression,
	BestCompression: zlib.BestCompression, NoCompression: zlib.NoCompression}

// encode writes the PNG: signature, IHDR, the rows filtered and deflated
// into IDAT chunks, IEND.
func (f *frame) encode(w io.Writer, c Compression) error {
	cw := &chunkWriter{w: w}
	cw.buf = append(cw.buf, "\x89PNG\r\n\x1a\n"...)
	var ihdr [13]byte
	binary.BigEndian.PutUint32(ihdr[0:], uint32(f.w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(f.h))
	ihdr[8], ihdr[9] = 8, colorTypes[f.channels] // 8 bits a sample; compression, filter and interlace 0
	cw.chunk("IHDR", ihdr[:])
	if err := cw.flush(); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(idatWriter{cw}, 256<<10)
	zw, err := zlib.NewWriterLevel(bw, zlibLevels[c])
	if err != nil {
		return err
	}
	n := f.w * f.channels
	cur, prev, out := make([]byte, n), make([]byte, n), make([]byte, n+1)
	for i := range f.h {
		f.row(i, cur)
		filterRow(out, cur, prev, f.channels, c)
		if _, err := zw.Write(out); err != nil {
			return err
		}
		cur, prev = prev, cur
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	cw.chunk("IEND", nil)
	return cw.flush()
}

// filterRow writes into out the filter type byte and the row cur filtered
// against prev (the row above, zeros for the first). Without compression
// nothing is filtered; otherwise each row takes whichever of Up, Sub and
// Paeth makes its bytes smallest as signed values (libpng's heuristic;
// Average and None rarely win): smooth images then deflate to a fraction.
func filterRow(out, cur, prev []byte, bpp int, c Compression) {
	if c == NoCompression {
		out[0] = 0
		copy(out[1:], cur)
		return
	}
	dst := out[1:]
	dst = dst[:len(cur)]
	prev = prev[:len(cur)]
	// The first pixel has nothing to its left: Sub keeps it, Paeth and Up
	// both predict it from above.
	var up, sub, paeth int
	for j := 0; j < bpp && j < len(cur); j++ {
		u := absSigned(cur[j] - prev[j])
		up += u
		sub += absSigned(cur[j])
		paeth += u
	}
	for j := bpp; j < len(cur); j++ {
		x, a, b, cc := cur[j], cur[j-bpp], prev[j], prev[j-bpp]
		up += absSigned(x - b)
		sub += absSigned(x - a)
		paeth += absSigned(x - paethPredict(a, b, cc))
	}
	switch {
	case up <= sub && up <= paeth:
		out[0] = 2
		for j := range cur {
			dst[j] = cur[j] - prev[j]
		}
	case sub <= paeth:
		out[0] = 1
		copy(dst[:bpp], cur)
		for j := bpp; j < len(cur); j++ {
			dst[j] = cur[j] - cur[j-bpp]
		}
	default:
		out[0] = 4
		for j := 0; j < bpp && j < len(cur); j++ {
			dst[j] = cur[j] - prev[j]
		}
		for j := bpp; j < len(cur); j++ {
			dst[j] = cur[j] - paethPredict(cur[j-bpp], prev[j], prev[j-bpp])
		}
	}
}

// absSigned is |b| for b read as a signed byte.
func absSigned(b byte) int {
	s := int(int8(b))
	m := s >> 63
	return (s ^ m) - m
}

// paethPredict is the PNG specification's Paeth predictor of a pixel from
// the one left (a), above (b) and above-left (c).
func paethPredict(a, b, c byte) byte {
	pa := abs(int(b) - int(c))            // |p - a| where p = a + b - c
	pb := abs(int(a) - int(c))            // |p - b|
	pc := abs(int(a) + int(b) - 2*int(c)) // |p - c|
	if pa <= pb && pa <= pc {
		return a
	}
	if pb <= pc {
		return b
	}
	return c
}

func abs(x int) int {
	m := x >> 63
	return (x ^ m) - m
}

// chunkWriter frames PNG chunks (length, type, data, CRC) into buf.
type chunkWriter struct {
	w   io.Writer
	buf []byte
}

func (cw *chunkWriter) chunk(typ string, data []byte) {
	cw.buf = binary.BigEndian.AppendUint32(cw.buf, uint32(len(data)))
	start := len(cw.buf)
	cw.buf = append(cw.buf, typ...)
	cw.buf = append(cw.buf, data...)
	cw.buf = binary.BigEndian.AppendUint32(cw.buf, crc32.ChecksumIEEE(cw.buf[start:]))
}

func (cw *chunkWriter) flush() error {
	_, err := cw.w.Write(cw.buf)
	cw.buf = cw.buf[:0]
	return err
}

// idatWriter writes each buffer it is given as one IDAT chunk.
type idatWriter struct{ cw *chunkWriter }

func (iw idatWriter) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	iw.cw.chunk("IDAT", p)
	if err := iw.cw.flush(); err != nil {
		return 0, err
	}
	return len(p), nil
}
