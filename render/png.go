package render

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/adler32"
	"hash/crc32"
	"image"
	"io"
	"math"
	"runtime"

	"github.com/ndpack/ndpack/ndarray"
)

// frame is a 2-D array ready to be drawn row by row: its scale has been
// found (one pass over the values), and each row becomes pixels as it is
// written, so that no image the size of the array is ever held.
type frame struct {
	src      Source
	h, w     int
	rowBytes int // bytes of a row of the array
	channels int // bytes a pixel: 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA
	rgb      bool
	dt       ndarray.DType
	sc       scale
	cmap     colormap
}

// painter turns rows of a frame into pixels; each goroutine has its own.
type painter struct {
	f    *frame
	conv converter
	vals []float64 // one row's values
}

func (f *frame) painter() *painter {
	p := &painter{f: f}
	if !f.rgb {
		c, _ := newConverter(f.dt)
		p.conv, p.vals = *c, make([]float64, f.w)
	}
	return p
}

// nativeF32 reports whether the values are float32 in the machine's order.
func (p *painter) nativeF32() bool {
	return p.conv.dt.Kind == 'f' && p.conv.dt.ItemSize == 4 && !p.conv.swap
}

// extentF32 is extentOf for float32 values in the machine's order in raw.
func extentF32(raw []byte) (lo, hi float64, missing bool) {
	l, h := float32(math.Inf(1)), float32(math.Inf(-1))
	for j := 0; j+4 <= len(raw); j += 4 {
		v := math.Float32frombits(binary.NativeEndian.Uint32(raw[j:]))
		if v-v != 0 { // NaN, infinite
			missing = true
			continue
		}
		l, h = min(l, v), max(h, v)
	}
	return float64(l), float64(h), missing
}

// CheckImage reports whether EncodePNG can draw an array of dtype dt and
// shape shape with o, before its data is read: a caller holding only a
// file's header learns that a 4-D or record array will be refused
// without reading gigabytes.
// It fails with an *ndarray.Error wrapping ErrOptions for invalid options or options
// that do not apply to an RGB array, ErrUnsupported for a dtype or shape
// that cannot be drawn, and ndarray.ErrTooLarge for an image over MaxSide or
// MaxPixels.
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
	case len(shape) == 3 && (shape[2] == 3 || shape[2] == 4) && dt.Kind == 'u' && dt.ItemSize == 1 && dt.IsPlain():
		if o.cmap() != gray || o.Range != [2]float64{} || o.Log {
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
	if shape[0] <= 0 || shape[1] <= 0 {
		return 0, errorf(ErrUnsupported, "an array of shape %s has no elements to draw", ndarray.FormatShape(shape))
	}
	if shape[0] > MaxSide || shape[1] > MaxSide || int64(shape[0])*int64(shape[1]) > MaxPixels {
		return 0, errorf(ndarray.ErrTooLarge, "shape %s: a PNG is drawn up to %d pixels on a side and %d in all (65536 x 65536)", ndarray.FormatShape(shape), MaxSide, MaxPixels)
	}
	return rgb, nil
}

// prepare finds the scale s is drawn with: a pass over its values, unless
// o gives the range and no value can lack a level.
func prepare(s Source, o Options) (*frame, error) {
	rgb, err := checkImage(s.DType, s.Shape, o)
	if err != nil {
		return nil, err
	}
	f := &frame{src: s, dt: s.DType, cmap: o.cmap(), h: s.Shape[0], w: s.Shape[1], rgb: rgb > 0, channels: rgb}
	f.rowBytes = f.w * s.DType.ItemSize
	if f.rgb {
		f.rowBytes = f.w * rgb
		return f, nil
	}
	lo, hi, missing, err := f.extent(o)
	if err != nil {
		return nil, err
	}
	f.sc = newScale(lo, hi, o.Log)
	f.channels = 1
	if f.cmap != gray {
		f.channels = 3
	}
	if missing {
		f.channels++
	}
	return f, nil
}

// extent finds the ends of the scale (as logarithms with o.Log) and
// whether any value has no level.
func (f *frame) extent(o Options) (lo, hi float64, missing bool, err error) {
	lo, hi = math.Inf(1), math.Inf(-1)
	canMiss := o.Log || f.dt.Kind == 'f' || f.dt.Kind == 'c'
	if o.Range != [2]float64{} && !canMiss {
		lo, hi = o.Range[0], o.Range[1]
		if o.Log {
			lo, hi = math.Log10(lo), math.Log10(hi)
		}
		return lo, hi, false, nil
	}
	painters := make([]*painter, max(1, runtime.GOMAXPROCS(0)))
	err = pipeline(f.src, f.h, f.rowBytes, chunkRows(f.rowBytes), len(painters), false, func(w int, c *chunk) {
		if painters[w] == nil {
			painters[w] = f.painter()
		}
		p := painters[w]
		c.lo, c.hi, c.missing = math.Inf(1), math.Inf(-1), false
		if p.nativeF32() && !o.Log {
			// The common camera frame, without converting it first.
			l, h, m := extentF32(c.raw[:c.n*f.rowBytes])
			c.lo, c.hi, c.missing = l, h, m
			return
		}
		for i := range c.n {
			p.conv.convert(p.vals, c.raw[i*f.rowBytes:])
			l, h, m := extentOf(p.vals, o.Log)
			c.lo, c.hi, c.missing = min(c.lo, l), max(c.hi, h), c.missing || m
		}
	}, func(c *chunk) error {
		lo, hi, missing = min(lo, c.lo), max(hi, c.hi), missing || c.missing
		return nil
	})
	if err != nil {
		return 0, 0, false, err
	}
	if o.Range != [2]float64{} {
		lo, hi = o.Range[0], o.Range[1]
	} else if lo > hi { // nothing has a level
		lo, hi = 0, 0
	}
	if o.Log && lo <= hi && lo > 0 {
		lo, hi = math.Log10(lo), math.Log10(hi)
	}
	return lo, hi, missing, nil
}

// extentOf returns the least and greatest of vs that have a level, and
// whether some have none.
func extentOf(vs []float64, log bool) (lo, hi float64, missing bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	if !log {
		for _, v := range vs {
			if v-v != 0 { // NaN, infinite
				missing = true
				continue
			}
			lo, hi = min(lo, v), max(hi, v)
		}
		return lo, hi, missing
	}
	for _, v := range vs {
		switch {
		case v-v != 0, !(v > 0): // NaN, infinite, no logarithm
			missing = true
		default:
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return lo, hi, missing
}

// row fills dst (w*channels bytes) with the pixels of the row whose bytes
// are raw.
func (p *painter) row(raw []byte, dst []byte) {
	f := p.f
	if f.rgb {
		copy(dst, raw[:f.w*f.channels])
		return
	}
	if f.channels == 1 && !f.sc.log && !f.sc.half && p.nativeF32() {
		// The common camera frame, without converting it first.
		lo, k := f.sc.lo, f.sc.k*255
		dst = dst[:f.w]
		raw = raw[:4*f.w]
		for j := range dst {
			x := (float64(math.Float32frombits(binary.NativeEndian.Uint32(raw[4*j:]))) - lo) * k
			if !(x > 0) {
				x = 0
			}
			dst[j] = uint8(min(x, 255) + 0.5)
		}
		return
	}
	p.conv.convert(p.vals, raw)
	switch {
	case f.channels == 1 && !f.sc.log && !f.sc.half:
		// The common case, kept free of calls: opaque gray.
		lo, k := f.sc.lo, f.sc.k*255
		dst = dst[:len(p.vals)]
		for j, v := range p.vals {
			x := (v - lo) * k
			if !(x > 0) {
				x = 0
			}
			dst[j] = uint8(min(x, 255) + 0.5)
		}
	case f.channels <= 2:
		for j, v := range p.vals {
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
		for j, v := range p.vals {
			x, ok := f.sc.at(v)
			px := dst[c*j : c*j+c]
			if !ok {
				clear(px)
				continue
			}
			px[0], px[1], px[2] = f.cmap.entry(min(int(x*256), 255))
			if c == 4 {
				px[3] = 255
			}
		}
	}
}

// EncodePNG writes a as a PNG image to w: a 2-D array as an image whose
// width is the array's second axis and height its first, row 0 at the
// top, gray (gray and alpha when some values are transparent) or, with a
// colormap, RGB (RGBA); a uint8 array of shape (h, w, 3) or (h, w, 4) as
// the RGB or RGBA image it is. The pixels are made and compressed a few
// rows at a time, on every core: memory beyond a is a few hundred
// kilobytes a core.
// It fails with a.Validate's *ndarray.Error for an invalid array, with
// CheckImage's errors, and with w's write error.
func EncodePNG(w io.Writer, a *ndarray.Array, o Options) error {
	if err := a.Validate(); err != nil {
		return err
	}
	return EncodePNGSource(w, ArraySource(a), o)
}

// EncodePNGSource is EncodePNG for an array read from s: once to find the
// range of its values (unless o.Range gives it and no value can lack a
// level), once to draw them. Memory is a few chunks of rows a core (about
// 512 KiB each, or one row), however large the array.
// It fails with CheckImage's errors, with an *ndarray.Error wrapping ndarray.ErrTruncated
// when s's data ends early, with s's read error, and with w's write error.
func EncodePNGSource(w io.Writer, s Source, o Options) error {
	f, err := prepare(s, o)
	if err != nil {
		return err
	}
	return f.encode(w, o.level())
}

// Image returns a drawn as an image.Image: an *image.Gray for an opaque
// grayscale image, an *image.NRGBA otherwise. EncodePNG writes the same
// pixels without holding them all.
// It fails as EncodePNG does, but never with a write error.
func Image(a *ndarray.Array, o Options) (image.Image, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	f, err := prepare(ArraySource(a), o)
	if err != nil {
		return nil, err
	}
	p := f.painter()
	r := image.Rect(0, 0, f.w, f.h)
	if f.channels == 1 {
		img := image.NewGray(r)
		for i := range f.h {
			p.row(a.Data[i*f.rowBytes:], img.Pix[i*img.Stride:])
		}
		return img, nil
	}
	img := image.NewNRGBA(r)
	buf := make([]byte, f.w*f.channels)
	for i := range f.h {
		p.row(a.Data[i*f.rowBytes:], buf)
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

var flateLevels = [...]int{bestSpeed: flate.BestSpeed, defaultCompression: flate.DefaultCompression,
	bestCompression: flate.BestCompression, noCompression: flate.NoCompression}

// zlibHeaders are the two bytes that start a zlib stream of each level, as
// compress/zlib writes them.
var zlibHeaders = [...][2]byte{bestSpeed: {0x78, 0x01}, defaultCompression: {0x78, 0x9c},
	bestCompression: {0x78, 0xda}, noCompression: {0x78, 0x01}}

// encoder is one worker's state: its painter, its rows, its compressor.
type encoder struct {
	p               *painter
	prev, cur, filt []byte
	sub, paeth      []byte
	raw             bytes.Buffer // the filtered rows of a chunk
	zw              *flate.Writer
	out             bytes.Buffer
}

// encode writes the PNG: signature, IHDR, the rows filtered and deflated
// into IDAT chunks, IEND. Chunks of rows are filtered and compressed in
// parallel, as pigz does: each into deflate blocks of its own that end on
// a byte (a sync flush), the last with the final block, joined in order
// into one zlib stream whose Adler-32 is combined from theirs.
func (f *frame) encode(w io.Writer, c compression) error {
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
	n := f.w * f.channels
	encs := make([]*encoder, max(1, runtime.GOMAXPROCS(0)))
	sum := uint32(1)
	head := zlibHeaders[c][:]
	err := pipeline(f.src, f.h, f.rowBytes, chunkRows(max(f.rowBytes, n)), len(encs), true, func(wk int, ch *chunk) {
		e := encs[wk]
		if e == nil {
			zw, _ := flate.NewWriter(nil, flateLevels[c])
			e = &encoder{p: f.painter(), prev: make([]byte, n), cur: make([]byte, n), filt: make([]byte, n+1),
				sub: make([]byte, n), paeth: make([]byte, n), zw: zw}
			encs[wk] = e
		}
		if ch.above != nil {
			e.p.row(ch.above, e.prev)
		} else {
			clear(e.prev)
		}
		e.raw.Reset()
		for i := range ch.n {
			e.p.row(ch.raw[i*f.rowBytes:], e.cur)
			filterRow(e.filt, e.cur, e.prev, f.channels, c, e.sub, e.paeth)
			e.raw.Write(e.filt)
			e.prev, e.cur = e.cur, e.prev
		}
		e.out.Reset()
		e.zw.Reset(&e.out)
		e.zw.Write(e.raw.Bytes())
		if ch.first+ch.n == f.h {
			e.zw.Close()
		} else {
			e.zw.Flush()
		}
		ch.sum, ch.sumLen = adler32.Checksum(e.raw.Bytes()), e.raw.Len()
		ch.out = append(ch.out[:0], e.out.Bytes()...)
	}, func(ch *chunk) error {
		data := ch.out
		if head != nil {
			data = append(head, data...)
			head = nil
		}
		sum = adler32Combine(sum, ch.sum, ch.sumLen)
		if ch.first+ch.n == f.h {
			data = binary.BigEndian.AppendUint32(data, sum)
		}
		cw.chunk("IDAT", data)
		return cw.flush()
	})
	if err != nil {
		return err
	}
	cw.chunk("IEND", nil)
	return cw.flush()
}

// adler32Combine returns the Adler-32 of the bytes whose checksum is a
// followed by len2 bytes whose checksum is b, as zlib's adler32_combine.
func adler32Combine(a, b uint32, len2 int) uint32 {
	const mod = 65521
	rem := uint32(len2 % mod)
	s1 := a & 0xffff
	s2 := (rem * s1) % mod
	s1 += (b & 0xffff) + mod - 1
	s2 += (a >> 16) + (b >> 16) + mod - rem
	if s1 >= mod {
		s1 -= mod
	}
	if s1 >= mod {
		s1 -= mod
	}
	if s2 >= mod<<1 {
		s2 -= mod << 1
	}
	if s2 >= mod {
		s2 -= mod
	}
	return s2<<16 | s1
}

// filterRow writes into out the filter type byte and the row cur filtered
// against prev (the row above, zeros for the first). Without compression
// nothing is filtered; otherwise each row takes whichever of Up, Sub and
// Paeth makes its bytes smallest as signed values (libpng's heuristic;
// Average and None rarely win): smooth images then deflate to a fraction.
// The three are made in one pass, Up into out, Sub and Paeth into sub and
// paeth (as long as cur).
func filterRow(out, cur, prev []byte, bpp int, c compression, sub, paeth []byte) {
	if c == noCompression {
		out[0] = 0
		copy(out[1:], cur)
		return
	}
	n := len(cur)
	up := out[1 : 1+n]
	prev, sub, paeth = prev[:n], sub[:n], paeth[:n]
	// The first pixel has nothing to its left: Sub keeps it, Paeth and Up
	// both predict it from above.
	var su, ss, sp int
	for j := 0; j < bpp && j < n; j++ {
		x, d := cur[j], cur[j]-prev[j]
		up[j], paeth[j], sub[j] = d, d, x
		su += absSigned(d)
		sp += absSigned(d)
		ss += absSigned(x)
	}
	for j := bpp; j < n; j++ {
		x, a, b, cc := cur[j], cur[j-bpp], prev[j], prev[j-bpp]
		// paethPredict(a, b, cc), by hand: the compiler does not inline it.
		dp, dq := int(b)-int(cc), int(a)-int(cc)
		pa, pb, pc := abs(dp), abs(dq), abs(dp+dq)
		bc := b ^ ((b ^ cc) & byte((pc-pb)>>63))
		pred := a ^ ((a ^ bc) & byte(((pb-pa)|(pc-pa))>>63))
		u, s, p := x-b, x-a, x-pred
		up[j], sub[j], paeth[j] = u, s, p
		su += absSigned(u)
		ss += absSigned(s)
		sp += absSigned(p)
	}
	switch {
	case su <= ss && su <= sp:
		out[0] = 2
	case ss <= sp:
		out[0] = 1
		copy(up, sub)
	default:
		out[0] = 4
		copy(up, paeth)
	}
}

// absSigned is |b| for b read as a signed byte.
func absSigned(b byte) int {
	s := int(int8(b))
	m := s >> 63
	return (s ^ m) - m
}

// paethPredict is the PNG specification's Paeth predictor of a pixel from
// the one left (a), above (b) and above-left (c): a if |p - a| is least
// (p = a + b - c), else b if |p - b| is, else c; without branches.
func paethPredict(a, b, c byte) byte {
	p, q := int(b)-int(c), int(a)-int(c)
	pa, pb, pc := abs(p), abs(q), abs(p+q)      // |p - a|, |p - b|, |p - c|
	notA := byte(((pb - pa) | (pc - pa)) >> 63) // 0xff when pb or pc is below pa
	bc := b ^ ((b ^ c) & byte((pc-pb)>>63))     // c when pc is below pb
	return a ^ ((a ^ bc) & notA)
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
