package ndarray

import (
	"fmt"
	"strconv"
	"strings"
)

// Casting is one of NumPy's casting rules, the casting argument of
// np.can_cast and astype: which conversions between dtypes it allows.
// Allows asks the rule, as np.can_cast does; AsType converts.
type Casting int

const (
	// SameKind allows safe conversions and those that stay within a kind
	// or go up the order bool, unsigned, signed, float, complex: f8 to f4,
	// i8 to i2, u8 to i1, i8 to f4. It refuses float to integer, complex to
	// float, signed to unsigned and anything to bool. NumPy's
	// casting="same_kind"; the default of AsType and ValuesAs.
	SameKind Casting = iota
	// Safe allows only conversions that keep every value exactly (by
	// NumPy's judgement, which counts i8 to f8 as safe): i2 to i4, u1 to
	// f2, f4 to c8. NumPy's casting="safe".
	Safe
	// Unsafe allows every conversion between numeric kinds, as C casts
	// do: float to integer truncates toward zero, complex to real drops
	// the imaginary part, a number to bool tests it against zero. NumPy's
	// casting="unsafe", the default of its astype.
	Unsafe
	// No allows no conversion: the dtype must be the same, byte order
	// included. NumPy's casting="no".
	No
	// Equiv allows only a change of byte order. NumPy's casting="equiv".
	Equiv
)

// castings are the rules by name, strictest first.
var castings = []Casting{No, Equiv, Safe, SameKind, Unsafe}

// String returns NumPy's name of the rule: "no", "equiv", "safe",
// "same_kind", "unsafe".
func (c Casting) String() string {
	switch c {
	case No:
		return "no"
	case Equiv:
		return "equiv"
	case SameKind:
		return "same_kind"
	case Safe:
		return "safe"
	case Unsafe:
		return "unsafe"
	}
	return fmt.Sprintf("Casting(%d)", int(c))
}

// ParseCasting returns the rule NumPy names s: "no", "equiv", "safe",
// "same_kind" or "unsafe". Any other s fails with an error matching
// ErrType that lists them.
func ParseCasting(s string) (Casting, error) {
	var names []string
	for _, c := range castings {
		if c.String() == s {
			return c, nil
		}
		names = append(names, c.String())
	}
	return 0, newError(ErrType, fmt.Sprintf("casting %s: want one of %s", strconv.Quote(s), strings.Join(names, ", ")))
}

// level is NumPy's NPY_CASTING value of the rule: the least safe cast it
// allows, No 0 to Unsafe 4.
func (c Casting) level() int {
	for i, r := range castings {
		if r == c {
			return i
		}
	}
	return -1
}

// Casting levels, as NumPy numbers them.
const (
	castNo = iota
	castEquiv
	castSafe
	castSameKind
	castUnsafe
	castNone = -1 // no cast exists, not even an unsafe one
)

// Allows reports whether c allows converting from one dtype to another,
// as NumPy 1.24's np.can_cast(from, to, casting=c) does, for every pair
// of dtypes ndpack holds: numbers (f16 and c32 included), strings,
// datetimes and timedeltas by their units, void, records field by field
// and subarrays. An S, U or V of no size as to stands for the kind
// whatever its size, as in NumPy (np.can_cast("i4", "S0") is true).
//
// That NumPy allows a conversion does not make AsType compute it: AsType
// converts numbers (to 8-byte floats and 16-byte complex) and changes
// byte order, and refuses the rest.
func (c Casting) Allows(from, to DType) bool {
	want := c.level()
	if want < 0 || from.Validate() != nil || to.Validate() != nil {
		return false
	}
	var got int
	if unsized(to) {
		got = castToKind(from, to.Kind)
	} else {
		got = castLevel(from, to)
	}
	return got != castNone && got <= want
}

// castToKind is numpy's cast safety to a flexible kind without a size
// (S, U, V): the cast to the dtype of that kind numpy picks for from.
func castToKind(from DType, kind byte) int {
	if kind == 'V' {
		if from.Kind == 'V' && !from.IsSubarray() {
			return castNo
		}
		return castSafe
	}
	to := DType{Order: '|', Kind: kind}
	if kind == 'U' {
		to.Order = nativeOrder
	}
	switch {
	case from.Kind == 'S' || from.Kind == 'U':
		to.ItemSize = from.ItemSize / charBytes(from.Kind) * charBytes(kind)
	case isNumber(from):
		to.ItemSize = stringLength(from) * charBytes(kind)
	}
	return castLevel(from, to)
}

func charBytes(kind byte) int {
	if kind == 'U' {
		return 4
	}
	return 1
}

func isNumber(dt DType) bool { return dt.IsPlain() && strings.IndexByte("biufc", dt.Kind) >= 0 }

// stringLength is the characters numpy counts on to print a number.
func stringLength(dt DType) int {
	digits := [...]int{1: 3, 2: 5, 4: 10, 8: 20}[min(dt.ItemSize, 8)]
	switch {
	case dt.Kind == 'b':
		return 5
	case dt.Kind == 'u':
		return digits
	case dt.Kind == 'i':
		return digits + 1
	case dt.Kind == 'f' && dt.ItemSize < 16:
		return 32
	case dt.Kind == 'f':
		return 48
	case dt.Kind == 'c' && dt.ItemSize < 32:
		return 64
	}
	return 96
}

// castLevel is the least safe casting level numpy's cast from one dtype
// to another needs, or castNone where it has no cast.
func castLevel(from, to DType) int {
	fv, tv := from.Kind == 'V', to.Kind == 'V'
	switch {
	case fv && tv:
		return voidToVoid(from, to)
	case fv:
		return structuredToPlain(from, to)
	case tv:
		return plainToStructured(from, to)
	}
	if from.Kind == to.Kind && from.ItemSize == to.ItemSize && from.Unit == to.Unit {
		if from.Order == to.Order {
			return castNo
		}
		return castEquiv
	}
	switch {
	case isNumber(from) && isNumber(to):
		switch {
		case safeCast(from, to):
			return castSafe
		case kindRank(from.Kind) <= kindRank(to.Kind):
			return castSameKind
		}
		return castUnsafe
	case isNumber(from) && (to.Kind == 'S' || to.Kind == 'U'):
		if to.ItemSize/charBytes(to.Kind) >= stringLength(from) {
			return castSafe
		}
		return castSameKind
	case (from.Kind == 'S' || from.Kind == 'U') && (to.Kind == 'S' || to.Kind == 'U'):
		if from.Kind == 'U' && to.Kind == 'S' {
			return castUnsafe
		}
		if to.ItemSize/charBytes(to.Kind) >= from.ItemSize/charBytes(from.Kind) {
			return castSafe
		}
		return castSameKind
	case from.Kind == to.Kind && (from.Kind == 'M' || from.Kind == 'm'):
		return datetimeCast(from, to)
	case to.Kind == 'm' && (from.Kind == 'b' || from.Kind == 'i' || from.Kind == 'u'):
		if from.Kind == 'u' && from.ItemSize == 8 {
			return castSameKind
		}
		return castSafe
	}
	return castUnsafe
}

// voidToVoid is numpy's void_to_void_resolve_descriptors: records field
// by field, plain voids by size, subarrays by shape and base.
func voidToVoid(from, to DType) int {
	switch {
	case from.IsRecord() && to.IsRecord():
		return fieldsCast(from, to)
	case from.IsRecord():
		return structuredToPlain(from, to)
	case to.IsRecord():
		return plainToStructured(from, to)
	case from.IsPlain() && to.IsPlain():
		switch {
		case from.ItemSize == to.ItemSize:
			return castNo
		case from.ItemSize < to.ItemSize:
			return castSafe
		}
		return castSameKind
	}
	level := castUnsafe
	fromBase, fromShape, _ := from.Subarray()
	toBase, toShape, _ := to.Subarray()
	if from.IsSubarray() && to.IsSubarray() && FormatShape(fromShape) == FormatShape(toShape) {
		level = castNo
	}
	if !from.IsSubarray() {
		fromBase = from
	}
	if !to.IsSubarray() {
		toBase = to
	}
	return maxLevel(level, castLevel(fromBase, toBase))
}

// structuredToPlain is numpy's structured_to_nonstructured: always
// unsafe, from a record of one field only.
func structuredToPlain(from, to DType) int {
	switch {
	case from.IsSubarray():
		base, _, _ := from.Subarray()
		return maxLevel(castUnsafe, castLevel(base, to))
	case from.IsRecord():
		if from.NumFields() != 1 {
			return castNone
		}
		return maxLevel(castUnsafe, castLevel(fieldDType(from.layout.fields[0]), to))
	}
	return castUnsafe
}

// plainToStructured is numpy's nonstructured_to_structured.
func plainToStructured(from, to DType) int {
	switch {
	case to.IsSubarray():
		base, _, _ := to.Subarray()
		return maxLevel(castSafe, castLevel(from, base))
	case to.IsRecord():
		level := castUnsafe
		for _, f := range to.layout.fields {
			level = maxLevel(level, castLevel(from, fieldDType(f)))
		}
		return level
	case from.ItemSize <= to.ItemSize:
		return castSafe
	}
	return castUnsafe
}

// fieldsCast is numpy's can_cast_fields_safety: fields by position, at
// most safe when names or titles differ, at most equiv when the layout
// does.
func fieldsCast(from, to DType) int {
	ff, tf := from.layout.fields, to.layout.fields
	if len(ff) != len(tf) {
		return castNone
	}
	level := castNo
	for i, a := range ff {
		b := tf[i]
		if a.Name != b.Name || titleOrName(a) != titleOrName(b) {
			level = maxLevel(level, castSafe)
		}
		level = maxLevel(level, castLevel(fieldDType(a), fieldDType(b)))
		if a.Offset != b.Offset {
			level = maxLevel(level, castEquiv)
		}
	}
	if from.ItemSize != to.ItemSize {
		level = maxLevel(level, castEquiv)
	}
	return level
}

func titleOrName(f Field) string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}

// fieldDType is the dtype numpy keeps for a field: a subarray dtype for a
// field with a shape.
func fieldDType(f Field) DType {
	if f.Shape == nil {
		return f.DType
	}
	dt, err := NewSubarray(f.DType, f.Shape)
	if err != nil {
		return f.DType // unreachable: the record holds it
	}
	return dt
}

// maxLevel is numpy's PyArray_MinCastSafety: the less safe of two levels,
// castNone if either is.
func maxLevel(a, b int) int {
	if a == castNone || b == castNone {
		return castNone
	}
	return max(a, b)
}

func kindRank(k byte) int { return strings.IndexByte("buifc", k) }

// safeCast is NumPy's can_cast(from, to, "safe") for the numeric dtypes.
func safeCast(from, to DType) bool {
	fs, ts := from.ItemSize, to.ItemSize
	switch {
	case from.Kind == 'b':
		return true
	case from.Kind == to.Kind:
		return ts >= fs
	case from.Kind == 'u' && to.Kind == 'i':
		return ts > fs
	case (from.Kind == 'i' || from.Kind == 'u') && to.Kind == 'f':
		// An integer of at most half the float's size, by NumPy's table,
		// which lets every integer into f8 and f16.
		return ts >= 8 || fs <= ts/2
	case (from.Kind == 'i' || from.Kind == 'u') && to.Kind == 'c':
		return ts >= 16 || fs <= ts/4
	case from.Kind == 'f' && to.Kind == 'c':
		return fs <= ts/2
	}
	return false
}

// datetimeCast is numpy's time_to_time_resolve_descriptors, for two
// datetimes or two timedeltas of different units.
func datetimeCast(from, to DType) int {
	fn, fb := unitOf(from.Unit)
	tn, tb := unitOf(to.Unit)
	// numpy takes a count of 1000, 10^6 or 10^9 of a unit finer than the
	// second (by integer division of the counts) for the same unit.
	if steps := fb - tb; tb >= 6 && steps >= 1 && steps <= 3 && fn/tn == [4]uint64{0, 1e3, 1e6, 1e9}[steps] {
		if from.Order == to.Order {
			return castNo
		}
		return castEquiv
	}
	delta := from.Kind == 'm'
	sameGroup := (fb <= 1) == (tb <= 1) // years and months apart from the rest, for timedeltas
	var safe, sameKind bool
	switch {
	case fb < 0 || tb < 0:
		safe, sameKind = fb < 0, fb < 0
	case delta:
		safe, sameKind = fb <= tb && sameGroup, sameGroup
	default:
		safe, sameKind = fb <= tb, true
	}
	switch {
	case safe && unitDivides(fn, fb, tn, tb, delta):
		return castSafe
	case sameKind:
		return castSameKind
	}
	return castUnsafe
}

// unitOf splits a unit into its count and its base, an index of
// dateUnits, -1 for generic.
func unitOf(u string) (uint64, int) {
	if u == "" {
		return 1, -1
	}
	i := 0
	for i < len(u) && isDigit(u[i]) {
		i++
	}
	n := uint64(1)
	if i > 0 {
		n, _ = strconv.ParseUint(u[:i], 10, 32)
	}
	return n, indexString(dateUnits, u[i:])
}

// unitDivides is numpy's datetime_metadata_divides: whether every value of
// the first unit is a whole number of the second. Years and months divide
// only each other (strict), or are taken to divide anything (not strict).
func unitDivides(n1 uint64, b1 int, n2 uint64, b2 int, strict bool) bool {
	const top = 0xff00000000000000
	switch {
	case b1 < 0:
		return true
	case b2 < 0:
		return false
	}
	if b1 != b2 {
		switch {
		case b1 == 0 && b2 == 1:
			n1 *= 12
		case b2 == 0 && b1 == 1:
			n2 *= 12
		case b1 <= 1 || b2 <= 1:
			return !strict
		case b1 > b2:
			if n2 *= unitFactor(b2, b1); n2 == 0 {
				return false
			}
		default:
			if n1 *= unitFactor(b1, b2); n1 == 0 {
				return false
			}
		}
	}
	if n1&top != 0 || n2&top != 0 {
		return false
	}
	return n1%n2 == 0
}

// unitFactor is numpy's get_datetime_units_factor: how many of the finer
// unit little one of the coarser unit big holds, 0 on overflow.
func unitFactor(big, little int) uint64 {
	f := uint64(1)
	for u := big; u < little; u++ {
		if f *= unitFactors[u]; f&0xff00000000000000 != 0 {
			return 0
		}
	}
	return f
}
