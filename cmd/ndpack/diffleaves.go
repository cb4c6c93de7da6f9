package main

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/ndpack/ndpack/internal/float16"
	"github.com/ndpack/ndpack/ndarray"
)

// This file is what diff compares: the values two items hold, as numpy
// compares them. A plain array's item is one value; a record's are its
// leaf fields (a nested record's fields, each element of a subarray
// field), matched by name and position as numpy matches the fields of
// two structured dtypes (the same names in the same order, the same
// subarray shapes), so that padding and field offsets never count. Two
// numbers of different dtypes compare after numpy's promotion
// (np.result_type), as np.array_equal and np.isclose compare them.

// leafKind is how the values of a leaf compare.
type leafKind int

const (
	leafNumber    leafKind = iota // bool, integers, floats, complex: by value after promotion
	leafTimedelta                 // counts of one unit; NaT as NaN
	leafDatetime                  // equal or not; NaT as NaN, never within a tolerance
	leafText                      // S or U of any length, by their text
	leafBytes                     // long doubles, plain void: byte for byte
)

// leaf is one value both items hold (every element of it, when it lies in
// subarrays), and what differed in it.
type leaf struct {
	offA, offB int     // its first element's bytes in an item of each side
	levels     []level // the subarrays it lies in, outermost first
	tail       string  // its path after the last of them ("pos.x"; "" for a plain array)
	n          int     // its elements in an item
	a, b       ndarray.DType
	kind       leafKind
	common     ndarray.DType // leafNumber: numpy's result_type of a and b

	// np.isclose's arithmetic for the leaf: x - y at the width of the
	// common float dtype of a and y's (inexact b), the tolerance at y's,
	// with atol and rtol rounded to that width (setTolerance).
	subWidth, tolWidth arith
	atol, rtol         float64

	differ         int64 // items in which it differed
	maxAbs, maxRel float64
}

// level is a subarray a leaf lies in: its own subarray field, or a
// subarray field of records that hold it. Its elements are the same bytes
// apart in every item, so that a leaf costs the same memory whatever its
// element count.
type level struct {
	name             string // its path from the level above ("p", ".x")
	shape            []int
	count            int
	strideA, strideB int
}

// planLeaves lists the leaves two dtypes hold, or says why numpy would
// not compare them.
func planLeaves(da, db ndarray.DType) ([]*leaf, bool) {
	if da.IsRecord() != db.IsRecord() {
		return nil, false
	}
	if !da.IsRecord() {
		l := &leaf{a: da, b: db, n: 1}
		return []*leaf{l}, l.setKind()
	}
	return recordLeaves(da, db, "", 0, 0, nil)
}

// recordLeaves lists the leaves of two records whose fields lie at offA
// and offB in the items, in the subarrays levels, their paths after
// prefix.
func recordLeaves(da, db ndarray.DType, prefix string, offA, offB int, levels []level) ([]*leaf, bool) {
	fa, fb := da.Fields(), db.Fields()
	if len(fa) != len(fb) {
		return nil, false
	}
	var out []*leaf
	for i := range fa {
		ta, shape := leafDType(fa[i])
		tb, shapeB := leafDType(fb[i])
		if fa[i].Name != fb[i].Name || !slices.Equal(shape, shapeB) || ta.IsRecord() != tb.IsRecord() {
			return nil, false
		}
		name := prefix + fa[i].Name
		in, rest := levels, name
		if shape != nil {
			n, _ := ndarray.NumElements(shape)
			in = append(slices.Clone(levels), level{name: name, shape: shape, count: n, strideA: ta.ItemSize, strideB: tb.ItemSize})
			rest = ""
		}
		if ta.IsRecord() {
			sub, ok := recordLeaves(ta, tb, rest+".", offA+fa[i].Offset, offB+fb[i].Offset, in)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
			continue
		}
		l := &leaf{offA: offA + fa[i].Offset, offB: offB + fb[i].Offset, levels: in, tail: rest, n: 1, a: ta, b: tb}
		for _, lv := range in {
			l.n *= lv.count
		}
		if !l.setKind() {
			return nil, false
		}
		out = append(out, l)
	}
	return out, true
}

// gather is the bytes of the leaf's n elements in each of m items of
// itemSize (side A's or B's), contiguous: the items themselves when the
// leaf is the whole item.
func (l *leaf) gather(items []byte, itemSize, m int, sideA bool) []byte {
	off, size := l.offB, l.b.ItemSize
	if sideA {
		off, size = l.offA, l.a.ItemSize
	}
	stride := func(lv level) int {
		if sideA {
			return lv.strideA
		}
		return lv.strideB
	}
	contiguous := len(l.levels) == 0 || len(l.levels) == 1 && stride(l.levels[0]) == size
	if contiguous && off == 0 && size*l.n == itemSize {
		return items[:m*itemSize]
	}
	out := make([]byte, 0, m*l.n*size)
	digits := make([]int, len(l.levels))
	for i := range m {
		base := i*itemSize + off
		if contiguous {
			out = append(out, items[base:base+size*l.n]...)
			continue
		}
		clear(digits)
		for range l.n {
			at := base
			for d, lv := range l.levels {
				at += digits[d] * stride(lv)
			}
			out = append(out, items[at:at+size]...)
			for d := len(digits) - 1; d >= 0; d-- { // the next element, row-major
				if digits[d]++; digits[d] < l.levels[d].count {
					break
				}
				digits[d] = 0
			}
		}
	}
	return out
}

// name is the leaf's path without indexes: "p.x", what the report lists.
func (l *leaf) name() string {
	var b strings.Builder
	for _, lv := range l.levels {
		b.WriteString(lv.name)
	}
	return b.String() + l.tail
}

// setKind decides how the leaf's values compare; false when numpy would
// not compare them.
func (l *leaf) setKind() bool {
	a, b := l.a, l.b
	switch {
	case computable(a) && computable(b):
		l.kind, l.common = leafNumber, promote(a, b)
		return true
	case a.Kind == 'm' && b.Kind == 'm' && a.Unit == b.Unit:
		l.kind = leafTimedelta
	case a.Kind == 'M' && b.Kind == 'M' && a.Unit == b.Unit:
		l.kind = leafDatetime
	case (a.Kind == 'U' || a.Kind == 'S') && a.Kind == b.Kind:
		l.kind = leafText
	case a.Kind == b.Kind && a.ItemSize == b.ItemSize && (a.Kind == 'V' || a.Kind == 'f' || a.Kind == 'c'):
		l.kind = leafBytes // long doubles, which Go cannot compute with
	default:
		return false
	}
	return true
}

// setTolerance fixes the widths np.isclose computes at for the leaf's
// dtypes, and the tolerances as numpy rounds them to y's width.
func (l *leaf) setTolerance(atol, rtol float64) {
	if l.kind != leafNumber {
		return
	}
	yt := inexact(l.b)
	l.subWidth, l.tolWidth = arith(realBits(promote(l.a, yt))), arith(realBits(yt))
	l.atol, l.rtol = roundTo(int(l.tolWidth), atol), roundTo(int(l.tolWidth), rtol)
}

// computable reports whether dt is a number ndpack computes with: bool,
// integers, floats of up to 8 bytes, complex of up to 16.
func computable(dt ndarray.DType) bool {
	switch dt.Kind {
	case 'b', 'i', 'u':
		return true
	case 'f':
		return dt.ItemSize <= 8
	case 'c':
		return dt.ItemSize <= 16
	}
	return false
}

// promote is numpy's np.result_type of two numeric dtypes, little-endian.
func promote(a, b ndarray.DType) ndarray.DType {
	if a.Kind == 'b' {
		a = b
	}
	if b.Kind == 'b' {
		b = a
	}
	mk := func(kind byte, size int) ndarray.DType {
		order := byte('<')
		if size == 1 {
			order = '|'
		}
		return ndarray.DType{Order: order, Kind: kind, ItemSize: size}
	}
	ka, kb := a.Kind, b.Kind
	switch {
	case ka == 'b':
		return mk('b', 1)
	case ka == kb:
		return mk(ka, max(a.ItemSize, b.ItemSize))
	case (ka == 'i' || ka == 'u') && (kb == 'i' || kb == 'u'):
		s, u := a, b
		if ka == 'u' {
			s, u = b, a
		}
		switch {
		case s.ItemSize > u.ItemSize:
			return mk('i', s.ItemSize)
		case u.ItemSize < 8:
			return mk('i', 2*u.ItemSize)
		}
		return mk('f', 8)
	}
	// One is a float or complex: the smallest float that holds the
	// other's values, complex if either is.
	floatSize := func(dt ndarray.DType) int {
		switch dt.Kind {
		case 'i', 'u':
			return map[int]int{1: 2, 2: 4, 4: 8, 8: 8}[dt.ItemSize]
		case 'c':
			return dt.ItemSize / 2
		}
		return dt.ItemSize
	}
	size := max(floatSize(a), floatSize(b))
	if ka == 'c' || kb == 'c' {
		return mk('c', 2*max(size, 4))
	}
	return mk('f', size)
}

// inexact is numpy's result_type(y, 1.0): the dtype np.isclose gives its
// second argument, a float for bool and integers.
func inexact(dt ndarray.DType) ndarray.DType {
	if dt.Kind == 'f' || dt.Kind == 'c' {
		return dt
	}
	return ndarray.DType{Order: '<', Kind: 'f', ItemSize: 8}
}

// realBits is the width of a float dtype's, or a complex one's parts,
// values.
func realBits(dt ndarray.DType) int {
	if dt.Kind == 'c' {
		return 4 * dt.ItemSize
	}
	return 8 * dt.ItemSize
}

// roundTo rounds v to a float of bits (16, 32 or 64), as storing it in
// such a float does.
func roundTo(bits int, v float64) float64 {
	switch bits {
	case 16:
		return float16.ToFloat64(float16.FromFloat64(v))
	case 32:
		return float64(float32(v))
	}
	return v
}

// arith is one numpy ufunc's arithmetic at a float width: float32's for
// float32, float32's rounded to half for float16 (numpy's half loops),
// float64's for float64. Explicit conversions keep Go from fusing a
// multiply and an add.
type arith int

func (w arith) sub(x, y float64) float64 {
	if w == 64 {
		return float64(x - y)
	}
	return roundTo(int(w), float64(float32(x)-float32(y)))
}

func (w arith) add(x, y float64) float64 {
	if w == 64 {
		return float64(x + y)
	}
	return roundTo(int(w), float64(float32(x)+float32(y)))
}

func (w arith) mul(x, y float64) float64 {
	if w == 64 {
		return float64(x * y)
	}
	return roundTo(int(w), float64(float32(x)*float32(y)))
}

// hypot is |re + im j| at the width: C's hypot for complex128, hypotf
// (computed in double and rounded) for complex64.
func (w arith) hypot(re, im float64) float64 {
	if w == 64 {
		return math.Hypot(re, im)
	}
	return roundTo(int(w), math.Sqrt(re*re+im*im))
}

// textEqual compares two S or U items by their text: the bytes before
// their trailing NULs (a U item's in units of 4, in either byte order).
func textEqual(x, y []byte, a, b ndarray.DType) bool {
	trim := func(s []byte, dt ndarray.DType) []byte {
		s = normalized(s, dt)
		unit := 1
		if dt.Kind == 'U' {
			unit = 4
		}
		for len(s) >= unit && bytes.Equal(s[len(s)-unit:], make([]byte, unit)) {
			s = s[:len(s)-unit]
		}
		return s
	}
	return bytes.Equal(trim(x, a), trim(y, b))
}

// describe names a leaf and one of its elements for the report: "",
// "field pos.x", "field v[2]", "field p[1].x[0]".
func (l *leaf) describe(k int) string {
	if len(l.levels) == 0 && l.tail == "" {
		return ""
	}
	digits := make([]int, len(l.levels))
	for d := len(l.levels) - 1; d >= 0; d-- {
		c := max(l.levels[d].count, 1)
		digits[d], k = k%c, k/c
	}
	var b strings.Builder
	for d, lv := range l.levels {
		b.WriteString(lv.name + elementIndex(digits[d], lv.shape))
	}
	return "field " + b.String() + l.tail
}

// dtypesLine says how two dtypes that differ were compared.
func dtypesLine(da, db ndarray.DType, leaves []*leaf) string {
	if sameDType(da.WithOrder('<'), db.WithOrder('<')) {
		return ""
	}
	var as []string
	for _, l := range leaves {
		if l.kind == leafNumber && (l.a.WithOrder('<') != l.common || l.b.WithOrder('<') != l.common) {
			what := l.common.String()
			if name := l.name(); name != "" {
				what = name + " as " + what
			}
			as = append(as, what)
		}
	}
	line := fmt.Sprintf("  dtypes %s and %s", shortDType(da), shortDType(db))
	if len(as) > 0 {
		line += " compared as " + strings.Join(as, ", ") + " (numpy's promotion)"
	}
	return line
}
