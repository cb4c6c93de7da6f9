package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/remote"
	"github.com/ndpack/ndpack/render"
)

const renderUsage = `Usage: ndpack render [options] IN[:NAME] OUT.png|OUT.svg

Draw an array so you can look at it.

OUT.png: a 2-D array as an image, its width the array's second axis and
its height the first, row 0 at the top. Every numeric dtype is drawn
(bool as 0 and 1, float16 too, complex numbers by their magnitude), in
either byte order and in Fortran order. The default is 8-bit grayscale,
linear from the array's finite minimum (black) to its finite maximum
(white), rounded to nearest; a constant array is all black. NaN and the
infinities are transparent (a gray+alpha PNG when there are any). A uint8
array of shape (height, width, 3) or (height, width, 4) is written as the
RGB or RGBA image it is.

OUT.svg: a 1-D array (a spectrum) as a line plot with axes, ticks at round
numbers and labels, against the index or the x values of --x; with
--lines, a 2-D array as one line per row. Each line has a point per element; a line
of more than 100,000 keeps the lowest and highest point of each pixel
column, so spikes stay visible. NaN leaves a gap.

IN is read as the other commands read it: .npy, an .npz member or a
msgpack array (ext 110, msgpack-numpy or OpenPI) as IN:NAME, an array deep
in a message by its path (msg.msgpack:params/0), "-" or a pipe. OUT is
written whole or not at all; "-" writes to standard output (with --to).

The array is never held: IN is read twice (the range of values, then the
pixels or points), a few rows at a time, so that a picture of a file
larger than memory is drawn in a few megabytes. An .npy from a pipe is
first copied to a temporary file (up to 64 GiB), removed at once. A PNG
is at most 1,000,000 pixels on a side and 2^32 (65536 x 65536) in all.

Options:
  --colormap NAME  gray (default), or viridis, magma, inferno (matplotlib's
                   colormaps) for an RGB PNG
  --range LO,HI    draw LO as the first level and HI as the last; values
                   outside are clipped (for an SVG: the y axis)
  --log            a logarithmic scale; values that are not positive are
                   left out, as NaN is
  --compress LEVEL PNG compression: fast (default), default, best, none
  --lines          SVG: draw each row of a 2-D array as a line
  --rows A:B       draw only rows A to B of an .npy or .npz member (the
                   first axis; Python slice rules, no step), read alone:
                   --rows 3:4 draws frame 3 of a stack
  --x FILE[:NAME]  SVG: the x value of each element, a 1-D array as long
                   as a row (a spectrometer's wavelengths)
  --xlabel TEXT    SVG: the x axis label
  --ylabel TEXT    SVG: the y axis label
  --size WxH       SVG: its size in pixels (default 800x450)
  --member NAME    the array of an .npz or msgpack map IN to draw
  --field NAME     the field NAME of a record array (numpy's a['NAME'])
  --max-header-size N  read .npy headers of up to N bytes (default 10000,
                   numpy's max_header_size): records of thousands of fields
` + remoteHelp + `  --from FMT       the format of IN: npy, npz or msgpack
  --to png|svg     the format of OUT, for standard output

Examples:
  ndpack render frame.npy frame.png
  ndpack render --colormap viridis --range 0,4095 run.npz:image image.png
  ndpack render --x wavelengths.npy --xlabel 'wavelength (nm)' spectrum.npy spectrum.svg
  ndpack render --lines --log traces.npy traces.svg
  ndpack render rpc.msgpack:result/image frame.png
`

// renderFlags are the options of render, parsed and checked before any
// input is read.
type renderFlags struct {
	png       bool
	opts      render.Options
	plot      render.Plot
	rows      bool
	rowRange  *rowRange // --rows START:STOP
	x         string
	from      format
	member    string
	xMember   string
	in, out   string
	flagsSet  map[string]bool
	field     string // --field: a record field
	maxHeader int    // --max-header-size
	remote    remoteFlags
}

func runRender(e env, args []string) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	colormap := fs.String("colormap", "gray", "")
	rng := fs.String("range", "", "")
	logScale := fs.Bool("log", false, "")
	compress := fs.String("compress", "fast", "")
	rows := fs.Bool("lines", false, "")
	rowsText := fs.String("rows", "", "")
	x := fs.String("x", "", "")
	xlabel := fs.String("xlabel", "", "")
	ylabel := fs.String("ylabel", "", "")
	size := fs.String("size", "", "")
	member := fs.String("member", "", "")
	from := fs.String("from", "", "")
	to := fs.String("to", "", "")
	field := fs.String("field", "", "")
	maxHeader := addMaxHeaderFlag(fs)
	remoteSet := addRemoteFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := remoteSet.check(); err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError("want IN and OUT, got %d %s", len(pos), plural(int64(len(pos)), "argument"))
	}
	rowRange, err := parseRows(*rowsText)
	if err != nil {
		return err
	}
	r := renderFlags{flagsSet: map[string]bool{}, rowRange: rowRange, field: *field, maxHeader: int(*maxHeader), remote: *remoteSet}
	fs.Visit(func(f *flag.Flag) { r.flagsSet[f.Name] = true })
	r.in, r.member = splitMember(pos[0], *member)
	r.out = pos[1]
	if remote.IsURL(r.out) {
		return usageError("OUT %s: render writes a local file or standard output, not a URL", displayName(r.out))
	}

	// What is drawn, and how: a flag that makes no sense (an unknown
	// colormap, a range the wrong way round, an OUT that is neither .png
	// nor .svg) is a usage error, exit 2, with no output.
	kind := strings.ToLower(strings.TrimPrefix(*to, "."))
	if kind == "" {
		if isStdout(r.out) {
			return usageError("%s needs --to png or --to svg", r.out)
		}
		kind = strings.ToLower(strings.TrimPrefix(filepath.Ext(r.out), "."))
	} else if ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(r.out), ".")); (ext == "png" || ext == "svg") && ext != kind {
		return usageError("--to %s contradicts the extension of %q", *to, r.out)
	}
	switch kind {
	case "png":
		r.png = true
	case "svg":
	default:
		hint := ""
		if strings.Contains(filepath.Base(r.out), ":") {
			hint = " (IN:NAME picks an array of IN; a frame of a stack is --rows N:N+1)"
		}
		return usageError("%s: render writes .png (an image) or .svg (a line plot), not %q%s", r.out, filepath.Ext(r.out), hint)
	}
	r.opts.Colormap = *colormap
	if err := (render.Options{Colormap: *colormap}).Validate(); err != nil {
		return usageError("--colormap %s: %v", *colormap, strings.TrimPrefix(err.Error(), "render: "))
	}
	if *rng != "" {
		lo, hi, ok := strings.Cut(*rng, ",")
		l, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		h, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if !ok || err1 != nil || err2 != nil {
			return usageError("--range %q: want LO,HI, two numbers", *rng)
		}
		r.opts.Range = [2]float64{l, h}
	}
	r.opts.Log = *logScale
	r.opts.Compression = *compress
	if err := (render.Options{Compression: *compress}).Validate(); err != nil {
		return usageError("--compress %q: want fast, default, best or none", *compress)
	}
	if err := r.opts.Validate(); err != nil {
		return usageError("%s", strings.TrimPrefix(err.Error(), "render: "))
	}
	pngOnly, svgOnly := []string{"colormap", "compress"}, []string{"lines", "x", "xlabel", "ylabel", "size"}
	wrong := svgOnly
	if !r.png {
		wrong = pngOnly
	}
	for _, name := range wrong {
		if r.flagsSet[name] {
			return usageError("--%s is for %s output; OUT is .%s", name, map[bool]string{true: "SVG", false: "PNG"}[r.png], kind)
		}
	}
	r.rows, r.x = *rows, *x
	r.plot = render.Plot{XLabel: *xlabel, YLabel: *ylabel, Range: r.opts.Range, Log: r.opts.Log}
	if *size != "" {
		if r.plot.Width, r.plot.Height, err = parsePlotSize(*size); err != nil {
			return err
		}
	}
	if r.from, err = resolveFormat(r.in, *from, "from"); err != nil {
		return err
	}
	if err := refuseSameFile(r.in, r.out); err != nil {
		return err
	}
	if r.x != "" && r.x == r.in && r.in == "-" {
		return usageError("IN and --x cannot both be standard input")
	}
	return r.run(e)
}

// run opens the array and the x values, checks them, and only then opens
// OUT: a refused array leaves nothing behind. An image is drawn from the
// input a few rows at a time (render.EncodePNGSource), in memory that does
// not grow with the array.
func (r *renderFlags) run(e env) error {
	if r.png {
		s, release, err := openSource(e, r.in, r.from, selection{member: r.member, rows: r.rowRange, field: r.field, maxHeader: r.maxHeader, remote: r.remote}, func(src arraySource) error {
			return render.CheckImage(src.dtype, src.shape, r.opts)
		})
		if err != nil {
			return errors.New(describe(r.in, err))
		}
		defer release()
		return r.write(e, func(w io.Writer) error { return render.EncodePNGSource(w, s, r.opts) })
	}
	s, release, err := openSource(e, r.in, r.from, selection{member: r.member, rows: r.rowRange, field: r.field, maxHeader: r.maxHeader, remote: r.remote}, func(src arraySource) error {
		if len(src.shape) == 2 && !r.rows {
			return fmt.Errorf("render: a 2-D array of shape %s plots one line per row with --lines (%d %s); or draw it as an image, .png", ndarray.FormatShape(src.shape), src.shape[0], plural(int64(src.shape[0]), "line"))
		}
		return render.CheckPlot(src.dtype, src.shape, render.Plot{Range: r.plot.Range, Log: r.plot.Log, Width: r.plot.Width, Height: r.plot.Height})
	})
	if err != nil {
		return errors.New(describe(r.in, err))
	}
	defer release()
	var x *render.Source
	if r.x != "" {
		xin, xmember := splitMember(r.x, "")
		xf, err := resolveFormat(xin, "", "from")
		if err != nil {
			return err
		}
		n := s.Shape[len(s.Shape)-1]
		xs, xrelease, err := openSource(e, xin, xf, selection{member: xmember, maxHeader: r.maxHeader, remote: r.remote}, func(src arraySource) error {
			if err := render.CheckPlot(src.dtype, src.shape, render.Plot{}); err != nil {
				return err
			}
			if len(src.shape) != 1 || src.shape[0] != n {
				return fmt.Errorf("render: %w: the x values are of shape %s; the array's rows are %d long", render.ErrOptions, ndarray.FormatShape(src.shape), n)
			}
			return nil
		})
		if err != nil {
			return errors.New(describe(xin, fmt.Errorf("--x: %w", err)))
		}
		defer xrelease()
		x = &xs
	}
	return r.write(e, func(w io.Writer) error { return render.EncodeSVGSource(w, s, x, r.plot) })
}

// write opens OUT, draws into it, and commits it only if draw succeeds.
func (r *renderFlags) write(e env, draw func(w io.Writer) error) error {
	dst, err := openOutput(e, r.out)
	if err != nil {
		return err
	}
	defer dst.abort()
	if err := draw(dst.w); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return err
		}
		return errors.New(describe(r.in, err))
	}
	return dst.commit()
}

// isImageSave reports whether yaq's --save names a PNG: FILE.png, or
// FILE.png:FIELD to pick one field of the result.
func isImageSave(spec string) bool {
	name, _ := splitImageSave(spec)
	return isPictureExt(name)
}

// isPictureExt says whether name is a picture's: .png, or .svg for a plot.
func isPictureExt(name string) bool {
	ext := filepath.Ext(name)
	return strings.EqualFold(ext, ".png") || strings.EqualFold(ext, ".svg")
}

func splitImageSave(spec string) (name, field string) {
	if i := strings.LastIndexByte(spec, ':'); i > 0 && isPictureExt(spec[:i]) {
		return spec[:i], spec[i+1:]
	}
	return spec, ""
}

// saveImage writes the picture of a yaq result to spec (FILE.png or
// FILE.png:FIELD, FILE.svg or FILE.svg:FIELD): the result itself if it is
// an array, else the field named, else the one field that can be drawn (a
// PNG: 2-D, or RGB/RGBA uint8; an SVG: a 1-D line plot, a spectrum).
// The file is replaced atomically, so that a viewer reloading it on change
// while --watch rewrites it never sees half an image.
func saveImage(spec, method string, result any) error {
	name, field := splitImageSave(spec)
	var a *ndarray.Array
	switch x := result.(type) {
	case *ndarray.Array:
		a = x
	case map[string]any:
		if field != "" {
			v, ok := x[field]
			if a, _ = v.(*ndarray.Array); !ok || a == nil {
				return fmt.Errorf("%s answered no array %q to save as an image", method, field)
			}
			break
		}
		var images []string
		for k, v := range x {
			if arr, ok := v.(*ndarray.Array); ok && drawable(name, arr) {
				images, a = append(images, k), arr
			}
		}
		sort.Strings(images)
		if len(images) > 1 {
			return fmt.Errorf("%s answered %d images (%s): pick one as --save %s:NAME", method, len(images), strings.Join(images, ", "), name)
		}
	}
	if a == nil && isSVG(name) {
		return fmt.Errorf("%s answered no 1-D array to save as a plot", method)
	}
	if a == nil {
		return fmt.Errorf("%s answered no 2-D array to save as an image", method)
	}
	f, err := atomicfile.Create(name, 0o666)
	if err != nil {
		return err
	}
	encode := func() error { return render.EncodePNG(f.File, a, render.Options{}) }
	if isSVG(name) {
		encode = func() error { return render.EncodeSVG(f.File, a, render.Plot{}) }
	}
	if err := encode(); err != nil {
		f.Abort()
		var pe *os.PathError
		if errors.As(err, &pe) {
			return err
		}
		return fmt.Errorf("--save %s: %s: %w", name, method, err)
	}
	return f.Commit()
}

func isSVG(name string) bool { return strings.EqualFold(filepath.Ext(name), ".svg") }

// drawable says whether a can be drawn as the picture name asks for.
func drawable(name string, a *ndarray.Array) bool {
	if isSVG(name) {
		return len(a.Shape) == 1 && render.CheckPlot(a.DType, a.Shape, render.Plot{}) == nil
	}
	return render.CheckImage(a.DType, a.Shape, render.Options{}) == nil
}

// parsePlotSize reads --size WxH. render takes 0x0 for its default size;
// on the command line it is a size like any other, and too small.
func parsePlotSize(size string) (int, int, error) {
	w, h, ok := strings.Cut(strings.ToLower(size), "x")
	wi, err1 := strconv.Atoi(w)
	hi, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, usageError("--size %q: want WIDTHxHEIGHT in pixels, as 800x450", size)
	}
	if wi < 200 || hi < 120 || wi > 1<<16 || hi > 1<<16 {
		return 0, 0, usageError("--size %s: a plot of %d x %d pixels; want 200x120 to 65536x65536", size, wi, hi)
	}
	return wi, hi, nil
}
