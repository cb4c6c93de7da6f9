package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/ndarray"
)

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
	leaves, ok := planLeaves(a.dtype, b.dtype)
	if !ok {
		fmt.Fprintf(w, "%s and %s differ: dtype %s vs %s\n", aName, bName, peertext.Line(shortDType(a.dtype)), peertext.Line(shortDType(b.dtype)))
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
	for _, l := range leaves {
		l.setTolerance(o.atol, o.rtol)
	}
	c := &comparison{o: o, da: a.dtype, db: b.dtype, leaves: leaves, first: -1}
	sa, sb := a.dtype.ItemSize, b.dtype.ItemSize
	items, _ := ndarray.NumElements(a.shape)
	chunk := max(1, (1<<20)/max(sa, sb, 1))
	bufA, bufB := make([]byte, chunk*sa), make([]byte, chunk*sb)
	for done := 0; done < items; {
		n := min(chunk, items-done)
		if _, err := io.ReadFull(ra, bufA[:n*sa]); err != nil {
			return false, fmt.Errorf("%s: %w", aName, err)
		}
		if _, err := io.ReadFull(rb, bufB[:n*sb]); err != nil {
			return false, fmt.Errorf("%s: %w", bName, err)
		}
		if err := c.add(bufA[:n*sa], bufB[:n*sb], n, int64(done)); err != nil {
			return false, err
		}
		done += n
	}
	if c.differ == 0 {
		return true, nil
	}
	c.report(w, aName, bName, a.shape)
	return false, nil
}

// comparison accumulates the differences of two arrays chunk by chunk.
type comparison struct {
	o              diffOptions
	da, db         ndarray.DType
	leaves         []*leaf
	differ, total  int64
	first          int64  // the flat index of the first item that differs
	firstWhere     string // the leaf and element of it that differs ("field pos.x")
	firstA, firstB string
	maxAbs, maxRel float64
}

// add compares one chunk of n items of each side, the first of which is
// item at.
func (c *comparison) add(a, b []byte, n int, at int64) error {
	bad := make([]bool, n)
	for _, l := range c.leaves {
		xa, xb := l.gather(a, c.da.ItemSize, n, true), l.gather(b, c.db.ItemSize, n, false)
		differs, err := c.compareLeaf(l, xa, xb, n*l.n)
		if err != nil {
			return err
		}
		last := -1
		for j, d := range differs {
			if !d {
				continue
			}
			item := j
			if l.n > 1 {
				item = j / l.n
			}
			if item != last {
				l.differ++
				last = item
			}
			bad[item] = true
			if c.first < 0 || at+int64(item) < c.first {
				c.noteFirst(l, at+int64(item), j%l.n, xa[j*l.a.ItemSize:(j+1)*l.a.ItemSize], xb[j*l.b.ItemSize:(j+1)*l.b.ItemSize])
			}
		}
	}
	for _, isBad := range bad {
		if isBad {
			c.differ++
		}
	}
	c.total += int64(n)
	return nil
}

// noteFirst keeps the first difference, earlier than any kept: its item,
// and the leaf element and values that differ there (the earliest leaf of
// the earliest item, as leaves are compared in order).
func (c *comparison) noteFirst(l *leaf, item int64, k int, x, y []byte) {
	c.first, c.firstWhere = item, l.describe(k)
	c.firstA, c.firstB = pyItem(l.a, x), pyItem(l.b, y)
}

// compareLeaf compares m elements of a leaf, x of dtype l.a and y of
// l.b, and says which differ.
func (c *comparison) compareLeaf(l *leaf, x, y []byte, m int) ([]bool, error) {
	out := make([]bool, m)
	sa, sb := l.a.ItemSize, l.b.ItemSize
	switch l.kind {
	case leafNumber:
		return c.compareNumbers(l, x, y, m)
	case leafTimedelta, leafDatetime:
		for j := range out {
			out[j] = !c.closeTimes(l, int64Of(l.a, x[j*sa:]), int64Of(l.b, y[j*sb:]))
		}
	case leafText:
		for j := range out {
			out[j] = !textEqual(x[j*sa:(j+1)*sa], y[j*sb:(j+1)*sb], l.a, l.b)
		}
	case leafBytes:
		for j := range out {
			out[j] = !bytes.Equal(normalized(x[j*sa:(j+1)*sa], l.a), normalized(y[j*sb:(j+1)*sb], l.b))
		}
	}
	return out, nil
}

// closeTimes compares two datetime64 or timedelta64 values as
// np.array_equal does (NaT equals nothing, but NaT with --equal-nan), or
// two timedelta64 with tolerances as np.isclose compares them: |x - y|
// <= atol + rtol * |y| in counts of the unit, rtol * |y| cut to a whole
// count as numpy's timedelta64 * float is. A datetime64 has no
// tolerance: np.isclose refuses them.
func (c *comparison) closeTimes(l *leaf, x, y int64) bool {
	if x == nat || y == nat {
		return c.o.equalNaN && x == nat && y == nat
	}
	if x == y {
		return true
	}
	c.note(l, math.Abs(float64(x)-float64(y)), math.Abs(float64(y)))
	d := x - y // wraps as numpy's does
	if !c.o.tolerant || l.kind == leafDatetime || d == nat {
		return false
	}
	ad, ay := d, y
	if ad < 0 {
		ad = -ad
	}
	if ay < 0 {
		ay = -ay
	}
	rel, invalid := castToInt64(c.o.rtol * float64(ay))
	if invalid {
		return false // numpy's NaT, which is close to nothing
	}
	if c.o.atol >= 1<<62 {
		return true // atol past every difference two counts can have
	}
	tol := int64(c.o.atol) + rel // only atol's whole counts matter: |x - y| and rel are counts
	return tol >= rel && ad <= tol
}

// castToInt64 is C's (and numpy's) conversion of a double to int64 on
// x86-64: truncated toward zero, and INT64_MIN, invalid, when NaN or out
// of range.
func castToInt64(f float64) (int64, bool) {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64, true
	}
	return int64(f), false
}

// compareNumbers compares m numbers of a leaf as np.array_equal does, or
// np.isclose with tolerances, after numpy's promotion of their dtypes.
func (c *comparison) compareNumbers(l *leaf, x, y []byte, m int) ([]bool, error) {
	out := make([]bool, m)
	if !c.o.tolerant && (l.common.Kind == 'i' || l.common.Kind == 'u' || l.common.Kind == 'b') {
		return c.compareIntegers(l, x, y, m)
	}
	if l.a.Kind == 'c' || l.b.Kind == 'c' {
		cx, err := asValues[complex128](x, l.a, m)
		if err != nil {
			return nil, err
		}
		cy, err := asValues[complex128](y, l.b, m)
		if err != nil {
			return nil, err
		}
		for j := range out {
			out[j] = !c.closeComplex(l, cx[j], cy[j])
		}
		return out, nil
	}
	// Each real value is exact as a float64, and a comparison's common
	// float dtype (np.result_type) holds both exactly, but an int64 or
	// uint64 beside a float64, which numpy rounds as float64 does.
	fx, err := asValues[float64](x, l.a, m)
	if err != nil {
		return nil, err
	}
	fy, err := asValues[float64](y, l.b, m)
	if err != nil {
		return nil, err
	}
	for j := range out {
		out[j] = !c.close(l, fx[j], fy[j])
	}
	return out, nil
}

// compareIntegers compares integers (and bools) exactly, past 2^53: in
// the bytes of their common dtype.
func (c *comparison) compareIntegers(l *leaf, x, y []byte, m int) ([]bool, error) {
	out := make([]bool, m)
	cx, err := convertTo(x, l.a, l.common, m)
	if err != nil {
		return nil, err
	}
	cy, err := convertTo(y, l.b, l.common, m)
	if err != nil {
		return nil, err
	}
	fx, err := asValues[float64](x, l.a, m)
	if err != nil {
		return nil, err
	}
	fy, err := asValues[float64](y, l.b, m)
	if err != nil {
		return nil, err
	}
	size := l.common.ItemSize
	for j := range out {
		if out[j] = !bytes.Equal(cx[j*size:(j+1)*size], cy[j*size:(j+1)*size]); out[j] {
			c.note(l, math.Abs(fx[j]-fy[j]), math.Abs(fy[j]))
		}
	}
	return out, nil
}

// convertTo converts m items of dtype from to dtype to.
func convertTo(b []byte, from, to ndarray.DType, m int) ([]byte, error) {
	if from == to {
		return b, nil
	}
	arr, err := ndarray.Unsafe.AsType(&ndarray.Array{DType: from, Shape: []int{m}, Data: b}, to)
	if err != nil {
		return nil, err
	}
	return arr.Data, nil
}

// close compares two real values (each exact, as float64) as
// np.array_equal does, or np.isclose with tolerances: |x - y| <= atol +
// rtol * |y| computed at the widths numpy computes them (x - y in the
// two's common float dtype, the tolerance in y's), and values that are
// not finite equal only when equal; it keeps the largest differences.
func (c *comparison) close(l *leaf, x, y float64) bool {
	if math.IsNaN(x) || math.IsNaN(y) {
		return c.o.equalNaN && math.IsNaN(x) && math.IsNaN(y)
	}
	if x == y {
		return true // infinities of one sign included
	}
	c.note(l, math.Abs(x-y), math.Abs(y))
	if !c.o.tolerant || math.IsInf(x, 0) || math.IsInf(y, 0) {
		return false
	}
	w, r := l.subWidth, l.tolWidth
	return math.Abs(w.sub(x, y)) <= r.add(l.atol, r.mul(l.rtol, math.Abs(y)))
}

// closeComplex is close for complex values, numpy's |z| its hypot.
func (c *comparison) closeComplex(l *leaf, x, y complex128) bool {
	if isNaNc(x) || isNaNc(y) {
		return c.o.equalNaN && isNaNc(x) && isNaNc(y)
	}
	if x == y {
		return true
	}
	c.note(l, cmplxAbs(x-y), cmplxAbs(y))
	if !c.o.tolerant || isInfc(x) || isInfc(y) {
		return false
	}
	w, r := l.subWidth, l.tolWidth
	d := w.hypot(w.sub(real(x), real(y)), w.sub(imag(x), imag(y)))
	return d <= r.add(l.atol, r.mul(l.rtol, r.hypot(real(y), imag(y))))
}

// note keeps the largest absolute and relative differences, over the
// whole array and the leaf's.
func (c *comparison) note(l *leaf, d, ref float64) {
	if math.IsInf(d, 0) || math.IsNaN(d) {
		return
	}
	rel := 0.0
	if ref > 0 {
		rel = d / ref
	} else if d > 0 {
		rel = math.Inf(1)
	}
	c.maxAbs, c.maxRel = max(c.maxAbs, d), max(c.maxRel, rel)
	l.maxAbs, l.maxRel = max(l.maxAbs, d), max(l.maxRel, rel)
}

func isNaNc(z complex128) bool { return math.IsNaN(real(z)) || math.IsNaN(imag(z)) }

func isInfc(z complex128) bool { return math.IsInf(real(z), 0) || math.IsInf(imag(z), 0) }

func cmplxAbs(z complex128) float64 { return math.Hypot(real(z), imag(z)) }

// maxFieldLines bounds the fields diff's report lists, one a line.
const maxFieldLines = 20

// report prints the short report of a difference: how many items differ,
// the first (and the field of a record that differs in it), how dtypes
// that differ were compared, the largest differences, and for records
// each field that differs.
func (c *comparison) report(w io.Writer, aName, bName string, shape []int) {
	pct := 100 * float64(c.differ) / float64(max(c.total, 1))
	noun := "element"
	if c.da.IsRecord() {
		noun = "record"
	}
	fmt.Fprintf(w, "%s and %s differ: %d of %d %s (%.3g%%)\n", aName, bName, c.differ, c.total, plural(c.total, noun), pct)
	where := ""
	if c.firstWhere != "" {
		where = ", " + peertext.Line(c.firstWhere)
	}
	fmt.Fprintf(w, "  first at %s%s: %s vs %s\n", indexText(c.first, shape), where, c.firstA, c.firstB)
	if line := dtypesLine(c.da, c.db, c.leaves); line != "" {
		fmt.Fprintln(w, peertext.Line(line))
	}
	if !c.da.IsRecord() {
		if c.maxAbs > 0 || c.maxRel > 0 {
			fmt.Fprintf(w, "  max absolute difference %s, max relative difference %s\n", gText(c.maxAbs), gText(c.maxRel))
		}
		return
	}
	shown := 0
	for _, l := range c.leaves {
		if l.differ == 0 {
			continue
		}
		if shown == maxFieldLines {
			fmt.Fprintln(w, "  ... and more fields")
			break
		}
		shown++
		line := fmt.Sprintf("  field %s: %d %s", peertext.Line(l.name()), l.differ, plural(l.differ, "record"))
		if l.maxAbs > 0 || l.maxRel > 0 {
			line += fmt.Sprintf(", max absolute difference %s, max relative difference %s", gText(l.maxAbs), gText(l.maxRel))
		}
		fmt.Fprintln(w, line)
	}
}

func gText(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }
