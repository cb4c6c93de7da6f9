package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

const diffUsage = `Usage: ndpack diff [--rtol R] [--atol A] [--equal-nan] A B

Compare the arrays of A and B, in any two formats (.npy, .npz, msgpack;
IN:NAME picks an npz member or a msgpack path, as convert takes it):
exit 0 when their dtypes, shapes and values are equal, 1 with a short
report when not (the first index that differs, how many do, the largest
absolute and relative differences), 2 on errors, as cmp and diff do.
Archives and maps are compared member by member, by name.

Values are equal as numpy.array_equal compares them (0.0 equals -0.0, NaN
equals nothing); with --rtol or --atol, as numpy.allclose does:
|a - b| <= atol + rtol * |b|. Byte order does not matter; the dtype's
kind and size do.

Options:
  --rtol R      relative tolerance (numpy.allclose's default: 1e-05 when
                --atol is given alone)
  --atol A      absolute tolerance (1e-08 when --rtol is given alone)
  --equal-nan   NaN equals NaN (at the same place)
  --max-header-size N  read .npy headers of up to N bytes (default 10000,
                numpy's max_header_size)
` + remoteHelp + `  --max-size SIZE  the largest array read into memory whole (a
                Fortran-order one; default half the memory the process
                may use; 512M, 2G ...)

Examples:
  ndpack diff a.npy b.msgpack
  ndpack diff --rtol 1e-6 run.npz:image other.npz:image
  ndpack diff before.npz after.npz && echo same
`

// errTrouble marks the errors of a command whose exit status 1 already
// means something else (diff: the inputs differ): they exit 2.
var errTrouble = errors.New("trouble")

type troubleError struct{ err error }

func (e troubleError) Error() string   { return e.err.Error() }
func (e troubleError) Unwrap() []error { return []error{e.err, errTrouble} }

// diffOptions are how values are compared.
type diffOptions struct {
	tolerant   bool
	rtol, atol float64
	equalNaN   bool
	maxHeader  int   // --max-header-size
	maxSize    int64 // --max-size
	remote     remoteFlags
}

func runDiff(e env, args []string) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	rtol := fs.String("rtol", "", "")
	atol := fs.String("atol", "", "")
	equalNaN := fs.Bool("equal-nan", false, "")
	maxHeader := addMaxHeaderFlag(fs)
	maxSize := addMaxSizeFlag(fs)
	remoteSet := addRemoteFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := remoteSet.check(); err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError("want A and B, got %d %s", len(pos), plural(int64(len(pos)), "argument"))
	}
	o := diffOptions{equalNaN: *equalNaN, rtol: 1e-5, atol: 1e-8, maxHeader: int(*maxHeader), maxSize: int64(*maxSize), remote: *remoteSet}
	for _, t := range []struct {
		flag, text string
		v          *float64
	}{{"rtol", *rtol, &o.rtol}, {"atol", *atol, &o.atol}} {
		if t.text == "" {
			continue
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil || f < 0 || math.IsNaN(f) {
			return usageError("--%s %s: want a tolerance of 0 or more", t.flag, t.text)
		}
		*t.v, o.tolerant = f, true
	}
	if pos[0] == "-" && pos[1] == "-" {
		return usageError("only one of A and B can be standard input")
	}
	same, err := o.diff(e, pos[0], pos[1])
	if err != nil {
		return troubleError{err}
	}
	if !same {
		return errReported
	}
	return nil
}

// diffInput is one side: its arrays, the ones asked for.
type diffInput struct {
	name   string // FILE[:NAME] as messages show it (shownName)
	fa     *fileArrays
	arrays []arraySource
}

// openDiffInput opens the arrays spec names (FILE or FILE:NAME), only the
// rows of rows if it is not nil.
func openDiffInput(e env, spec string, rows *rowRange, o inputOptions) (*diffInput, error) {
	path, member := splitMember(spec, "")
	fa, err := openInputArrays(path, e.stdin, formatOf(path), o)
	if err != nil {
		return nil, errors.New(describe(path, err))
	}
	fa.withRows(rows)
	arrays, err := convertOptions{member: member}.pickFrom(fa)
	if err != nil {
		fa.close()
		return nil, errors.New(describe(path, err))
	}
	return &diffInput{name: shownName(path, member), fa: fa, arrays: arrays}, nil
}

// diff compares a and b, printing what differs; it reports whether they
// are the same.
func (o diffOptions) diff(e env, a, b string) (bool, error) {
	A, err := openDiffInput(e, a, nil, inputOptions{maxHeader: o.maxHeader, maxSize: o.maxSize, stderr: e.stderr, remote: o.remote})
	if err != nil {
		return false, err
	}
	defer A.fa.close()
	B, err := openDiffInput(e, b, nil, inputOptions{maxHeader: o.maxHeader, maxSize: o.maxSize, stderr: e.stderr, remote: o.remote})
	if err != nil {
		return false, err
	}
	defer B.fa.close()
	if len(A.arrays) == 1 && len(B.arrays) == 1 {
		return o.compare(e.stdout, A.name, B.name, A.arrays[0], B.arrays[0])
	}
	same := true
	byName := map[string]arraySource{}
	for _, x := range B.arrays {
		byName[x.name] = x
	}
	for _, x := range A.arrays {
		y, ok := byName[x.name]
		if !ok {
			fmt.Fprintf(e.stdout, "%s: only in %s\n", peertext.Line(x.name), peertext.Line(A.name))
			same = false
			continue
		}
		delete(byName, x.name)
		eq, err := o.compare(e.stdout, A.name+":"+x.name, B.name+":"+y.name, x, y)
		if err != nil {
			return false, err
		}
		same = same && eq
	}
	for _, y := range B.arrays {
		if _, left := byName[y.name]; left {
			fmt.Fprintf(e.stdout, "%s: only in %s\n", peertext.Line(y.name), peertext.Line(B.name))
			same = false
		}
	}
	return same, nil
}

// compare compares two arrays, streaming their data in chunks unless one
// is in Fortran order (read whole, row-major). aName and bName are how
// the report names them (shownName, and a member's name).
func (o diffOptions) compare(w io.Writer, aName, bName string, a, b arraySource) (bool, error) {
	aName, bName = peertext.Line(aName), peertext.Line(bName)
	for _, s := range []arraySource{a, b} {
		if s.err != nil {
			return false, s.err
		}
	}
	if !sameKind(a.dtype, b.dtype) {
		fmt.Fprintf(w, "%s and %s differ: dtype %s vs %s\n", aName, bName, a.dtype, b.dtype)
		return false, nil
	}
	if !slices.Equal(a.shape, b.shape) {
		fmt.Fprintf(w, "%s and %s differ: shape %s vs %s\n", aName, bName, ndarray.FormatShape(a.shape), ndarray.FormatShape(b.shape))
		return false, nil
	}
	ra, closeA, err := rowMajor(a)
	if err != nil {
		return false, err
	}
	defer closeA()
	rb, closeB, err := rowMajor(b)
	if err != nil {
		return false, err
	}
	defer closeB()
	c := newComparison(o, a.dtype, b.dtype)
	size := a.dtype.ItemSize
	chunk := max(1, (1<<20)/max(size, 1)) * size
	bufA, bufB := make([]byte, chunk), make([]byte, chunk)
	for done := int64(0); done < a.size; {
		n := int(min(int64(chunk), a.size-done))
		if _, err := io.ReadFull(ra, bufA[:n]); err != nil {
			return false, fmt.Errorf("%s: %w", aName, err)
		}
		if _, err := io.ReadFull(rb, bufB[:n]); err != nil {
			return false, fmt.Errorf("%s: %w", bName, err)
		}
		if err := c.add(bufA[:n], bufB[:n], done/int64(max(size, 1))); err != nil {
			return false, err
		}
		done += int64(n)
	}
	if c.differ == 0 {
		return true, nil
	}
	c.report(w, aName, bName, a.shape)
	return false, nil
}

// sameKind says whether values of the two dtypes compare: the same dtype
// but for byte order.
func sameKind(a, b ndarray.DType) bool {
	return a.WithOrder('<') == b.WithOrder('<')
}

// rowMajor returns a reader of an array's data in row-major order.
func rowMajor(s arraySource) (io.Reader, func(), error) {
	if s.fortran {
		arr, err := readArray(s)
		if err != nil {
			return nil, nil, err
		}
		return bytes.NewReader(arr.Data), func() {}, nil
	}
	rc, err := s.open()
	if err != nil {
		return nil, nil, err
	}
	return rc, func() { rc.Close() }, nil
}

// comparison accumulates the differences of two arrays chunk by chunk.
type comparison struct {
	o              diffOptions
	da, db         ndarray.DType
	differ, total  int64
	first          int64 // the flat index of the first difference
	firstA, firstB string
	maxAbs, maxRel float64
}

func newComparison(o diffOptions, da, db ndarray.DType) *comparison {
	return &comparison{o: o, da: da, db: db, first: -1}
}

// add compares one chunk of items, the first of which is item at.
func (c *comparison) add(a, b []byte, at int64) error {
	size := c.da.ItemSize
	n := len(a) / max(size, 1)
	var fa, fb []float64
	var ca, cb []complex128
	switch c.da.Kind {
	case 'f', 'i', 'u', 'b':
		var err error
		if fa, err = asValues[float64](a, c.da, n); err != nil {
			return err
		}
		if fb, err = asValues[float64](b, c.db, n); err != nil {
			return err
		}
	case 'c':
		var err error
		if ca, err = asValues[complex128](a, c.da, n); err != nil {
			return err
		}
		if cb, err = asValues[complex128](b, c.db, n); err != nil {
			return err
		}
	}
	for i := 0; i < n; i++ {
		x, y := a[i*size:(i+1)*size], b[i*size:(i+1)*size]
		var equal bool
		switch {
		case fa != nil && (c.da.Kind == 'i' || c.da.Kind == 'u') && !c.o.tolerant:
			equal = string(normalized(x, c.da)) == string(normalized(y, c.db)) // exactly, past 2^53
		case fa != nil:
			equal = c.close(fa[i], fb[i])
		case ca != nil:
			equal = c.closeComplex(ca[i], cb[i])
		default:
			equal = string(normalized(x, c.da)) == string(normalized(y, c.db))
		}
		c.total++
		if equal {
			continue
		}
		if c.differ == 0 {
			c.first = at + int64(i)
			c.firstA, c.firstB = pyItem(c.da, x), pyItem(c.db, y)
		}
		c.differ++
	}
	return nil
}

// close compares two real values as array_equal, or allclose with
// tolerances, and keeps the largest differences.
func (c *comparison) close(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return c.o.equalNaN && math.IsNaN(a) && math.IsNaN(b)
	}
	if a == b {
		return true // infinities of one sign included
	}
	d := math.Abs(a - b)
	c.note(d, math.Abs(b))
	return c.o.tolerant && !math.IsInf(d, 0) && d <= c.o.atol+c.o.rtol*math.Abs(b)
}

func (c *comparison) closeComplex(a, b complex128) bool {
	if isNaNc(a) || isNaNc(b) {
		return c.o.equalNaN && isNaNc(a) && isNaNc(b)
	}
	if a == b {
		return true
	}
	d := cmplxAbs(a - b)
	c.note(d, cmplxAbs(b))
	return c.o.tolerant && !math.IsInf(d, 0) && d <= c.o.atol+c.o.rtol*cmplxAbs(b)
}

func (c *comparison) note(d, ref float64) {
	if !math.IsInf(d, 0) && !math.IsNaN(d) {
		c.maxAbs = max(c.maxAbs, d)
		if ref > 0 {
			c.maxRel = max(c.maxRel, d/ref)
		} else if d > 0 {
			c.maxRel = math.Inf(1)
		}
	}
}

func isNaNc(z complex128) bool { return math.IsNaN(real(z)) || math.IsNaN(imag(z)) }

func cmplxAbs(z complex128) float64 { return math.Hypot(real(z), imag(z)) }

// report prints the short report of a difference.
func (c *comparison) report(w io.Writer, aName, bName string, shape []int) {
	pct := 100 * float64(c.differ) / float64(max(c.total, 1))
	fmt.Fprintf(w, "%s and %s differ: %d of %d %s (%.3g%%)\n", aName, bName, c.differ, c.total, plural(c.total, "element"), pct)
	fmt.Fprintf(w, "  first at %s: %s vs %s\n", indexText(c.first, shape), c.firstA, c.firstB)
	if c.maxAbs > 0 || c.maxRel > 0 {
		fmt.Fprintf(w, "  max absolute difference %s, max relative difference %s\n",
			strconv.FormatFloat(c.maxAbs, 'g', 6, 64), strconv.FormatFloat(c.maxRel, 'g', 6, 64))
	}
}

// indexText is a flat row-major index as numpy's index tuple: (2, 0, 5).
func indexText(flat int64, shape []int) string {
	if len(shape) == 0 {
		return "()"
	}
	idx := make([]string, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		n := int64(max(shape[d], 1))
		idx[d] = strconv.FormatInt(flat%n, 10)
		flat /= n
	}
	if len(idx) == 1 {
		return "(" + idx[0] + ",)"
	}
	return "(" + strings.Join(idx, ", ") + ")"
}

// plural is noun for n things: "1 element", "2 elements", "3 entries",
// pluralised as the codecs' messages are (codecerr.Plural).
func plural(n int64, noun string) string {
	if n == 1 {
		return noun
	}
	return codecerr.Plural(noun)
}

// asValues converts n items of dt to T's dtype (float64 for real items,
// complex128 for complex ones).
func asValues[T ndarray.Element](b []byte, dt ndarray.DType, n int) ([]T, error) {
	arr, err := ndarray.New(dt, []int{n}, b)
	if err != nil {
		return nil, err
	}
	conv, err := ndarray.Unsafe.AsType(arr, ndarray.DTypeOf[T]())
	if err != nil {
		return nil, err
	}
	return ndarray.Values[T](conv)
}

// normalized is an item's bytes in little-endian order, so that items of
// the two byte orders of one dtype compare.
func normalized(item []byte, dt ndarray.DType) []byte {
	if dt.Order != '>' {
		return item
	}
	out := slices.Clone(item)
	unit := dt.ItemSize
	switch dt.Kind {
	case 'c':
		unit /= 2
	case 'U':
		unit = 4
	}
	for i := 0; i+unit <= len(out); i += unit {
		slices.Reverse(out[i : i+unit])
	}
	return out
}

// pyItem is an item as Python prints it: a float keeps its ".0".
func pyItem(dt ndarray.DType, item []byte) string {
	s := formatItem(dt, item).text()
	if dt.Kind == 'f' && !strings.ContainsAny(s, ".eEnIN") {
		s += ".0"
	}
	return s
}
