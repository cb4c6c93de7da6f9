package ndarray

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file is numpy's np.dtype of Python objects, those of a literal
// spec: _convert_from_any and what it calls for tuples, lists and dicts.

// convAny is numpy's _convert_from_any for a literal value.
func convAny(v pyValue, depth int) (DType, error) {
	if depth > maxSpecDepth {
		return DType{}, notHeld("nested more deeply than ndpack follows")
	}
	switch v.kind {
	case pyStr:
		return convStr(v.s, depth+1)
	case pyBytes:
		if !utf8.ValidString(v.s) {
			return DType{}, refused("numpy cannot decode the bytes %s as UTF-8", v.repr())
		}
		return convStr(v.s, depth+1)
	case pyNone:
		return DType{Order: nativeOrder, Kind: 'f', ItemSize: 8}, nil // np.dtype(None) is float64
	case pyTuple:
		return convTuple(v.items, depth+1)
	case pyList:
		return convList(v.items, depth+1)
	case pyDict:
		return convDict(v, depth+1)
	}
	return DType{}, refused("numpy cannot interpret %s as a data type", v.repr())
}

// unsized is numpy's PyDataType_ISUNSIZED: S, U or V of no size, without
// fields.
func unsized(dt DType) bool {
	return dt.ItemSize == 0 && dt.IsPlain() && (dt.Kind == 'S' || dt.Kind == 'U' || dt.Kind == 'V')
}

// cInt returns v as numpy's PyArray_PyIntAsInt takes it: a Python int
// (not a bool) that fits a C int.
func cInt(v pyValue) (int, bool) {
	if v.kind != pyInt || v.big || v.i < math.MinInt32 || v.i > math.MaxInt32 {
		return 0, false
	}
	return int(v.i), true
}

// convTuple is numpy's _convert_from_tuple: (dtype, shape), (flexible
// dtype, size), or (dtype, dtype) for one dtype seen as another.
func convTuple(items []pyValue, depth int) (DType, error) {
	if len(items) != 2 {
		return DType{}, refused("a tuple of %d items: numpy takes (dtype, shape) or (dtype, size)", len(items))
	}
	base, err := convAny(items[0], depth)
	if err != nil {
		return DType{}, err
	}
	val := items[1]
	if !isIntLike(val) && !(val.kind == pyTuple && allIntLike(val.items)) {
		as, err := convAny(val, depth)
		switch {
		case err == nil:
			return inheritDType(base, as)
		case isNotHeld(err):
			return DType{}, err
		}
	}
	if unsized(base) {
		n, ok := cInt(val)
		switch {
		case !ok:
			return DType{}, refused("the size of %s must be an int, not %s", base, val.repr())
		case n < 0:
			return DType{}, notHeld("numpy makes a broken dtype of the negative size %d", n)
		case n >= maxItemSize/4:
			return DType{}, notHeld("an item size of %d, more than ndpack holds", n)
		}
		if base.Kind == 'U' {
			n *= 4
		}
		base.ItemSize = n
		return base, nil
	}
	if base.IsSubarray() && base.ItemSize == 0 {
		return DType{}, notHeld("numpy takes a subarray of no elements as a flexible dtype here, and makes a broken dtype")
	}
	return subarrayOf(base, val)
}

func isIntLike(v pyValue) bool { return v.kind == pyInt || v.kind == pyBool }

func allIntLike(vs []pyValue) bool {
	for _, v := range vs {
		if !isIntLike(v) {
			return false
		}
	}
	return true
}

// subarrayOf is the rest of numpy's _convert_from_tuple: val is a shape.
func subarrayOf(base DType, val pyValue) (DType, error) {
	var dims []pyValue
	switch val.kind {
	case pyInt:
		dims = []pyValue{val}
	case pyTuple, pyList:
		dims = val.items
	default:
		return DType{}, refused("numpy takes no shape from %s (\"invalid shape in fixed-type tuple\")", val.repr())
	}
	if len(dims) > MaxDims {
		return DType{}, refused("a shape of %d dimensions, more than numpy's %d", len(dims), MaxDims)
	}
	shape := make([]int, len(dims))
	items := int64(1)
	for i, d := range dims {
		if d.kind != pyInt || d.big {
			return DType{}, refused("numpy takes no shape from %s (\"invalid shape in fixed-type tuple\")", val.repr())
		}
		if d.i < 0 || d.i > math.MaxInt32 {
			return DType{}, refused("a dimension of %d: numpy wants one from 0 to %d", d.i, math.MaxInt32)
		}
		shape[i] = int(d.i)
		if items *= d.i; items > math.MaxInt32 {
			return DType{}, refused("a subarray of more than %d elements, which numpy refuses", math.MaxInt32)
		}
	}
	switch {
	case len(shape) == 0 && val.kind == pyTuple:
		return base, nil
	case len(shape) == 0:
		return DType{}, notHeld("numpy makes a subarray of shape () from a list, which ndpack does not tell from its base")
	case len(shape) == 1 && shape[0] == 1 && val.kind == pyInt:
		return base, nil // numpy 1.24: (dtype, 1) is dtype, with a FutureWarning
	case items*int64(base.ItemSize) > math.MaxInt32:
		return DType{}, refused("a subarray of more than %d bytes, which numpy refuses", math.MaxInt32)
	}
	dt, err := NewSubarray(base, shape)
	return dt, detail(err)
}

// inheritDType is numpy's _try_convert_from_inherit_tuple: (base, as) is
// base with as's size, if base has none, and as's fields.
func inheritDType(base, as DType) (DType, error) {
	switch {
	case unsized(base):
		if base.Kind == 'U' && as.ItemSize%4 != 0 {
			return DType{}, notHeld("numpy makes a broken str dtype of %d bytes", as.ItemSize)
		}
		base.ItemSize = as.ItemSize
	case base.ItemSize != as.ItemSize:
		return DType{}, refused("%s and %s differ in size (numpy: \"mismatch in size of old and new data-descriptor\")", base, as)
	}
	if !as.IsRecord() {
		return base, nil
	}
	if base.Kind != 'V' || base.IsSubarray() {
		return DType{}, notHeld("numpy's union of %s with the fields of %s, a view ndpack does not hold: fields are a record's", base, as)
	}
	return as, nil
}

// convList is numpy's _convert_from_array_descr: [(name, dtype[, shape]),
// ...], a field's name possibly (title, name).
func convList(items []pyValue, depth int) (DType, error) {
	if len(items) > MaxRecordFields {
		return DType{}, notHeld("%d fields, more than the %d ndpack holds", len(items), MaxRecordFields)
	}
	fields := make([]Field, 0, len(items))
	names := map[string]bool{}
	off := 0
	for i, it := range items {
		if it.kind != pyTuple || len(it.items) < 2 || len(it.items) > 3 {
			return DType{}, refused("field %d is %s: numpy wants a tuple (name, dtype) or (name, dtype, shape)", i, it.repr())
		}
		f, err := listField(it.items, i, depth)
		if err != nil {
			return DType{}, err
		}
		for _, n := range []string{f.Name, f.Title} {
			if n != "" && names[n] {
				return DType{}, refused("field %d: the name %s is used twice", i, pyReprShort(n))
			}
			names[n] = true
		}
		f.Offset = off
		fields = append(fields, f)
		if off += f.DType.ItemSize; off >= maxItemSize/4 {
			return DType{}, notHeld("records of more than %d bytes", maxItemSize/4-1)
		}
	}
	dt, err := NewRecord(fields, off)
	return dt, detail(err)
}

// listField reads one (name, dtype[, shape]) of a list spec.
func listField(t []pyValue, i, depth int) (Field, error) {
	var f Field
	name, title, titled := t[0], pyValue{}, false
	if name.kind == pyTuple && len(name.items) == 2 {
		title, name, titled = name.items[0], name.items[1], true
	}
	if name.kind != pyStr {
		return f, refused("field %d: its name is %s; numpy wants a str or a (title, name) tuple", i, name.repr())
	}
	f.Name = name.s
	if titled {
		if title.kind == pyNone {
			return f, notHeld("field %d: the title None, which numpy keeps in the field (its descr shows it) and ndpack does not tell from no title", i)
		}
		var err error
		if f.Title, err = fieldTitle(title, i); err != nil {
			return f, err
		}
	}
	if f.Name == "" {
		switch {
		case !titled:
			f.Name = "f" + strconv.Itoa(i)
		case title.kind == pyStr && title.s != "":
			f.Name = title.s // numpy then finds the title taken by the name
			return f, refused("field %d: a title without a name (numpy: \"title already used as a name or title\")", i)
		default:
			return f, refused("field %d: no name and no title (numpy: \"Field titles must be non-empty strings\")", i)
		}
	}
	var err error
	if len(t) == 2 {
		f.DType, err = convAny(t[1], depth)
	} else {
		f.DType, err = convTuple(t[1:], depth)
	}
	if err != nil {
		return f, prefixErr(err, "field "+pyReprShort(f.Name)+": ")
	}
	return f, nil
}

// fieldTitle checks a dict spec's title: None is none (numpy keeps no
// title then), a non-empty str is one.
func fieldTitle(title pyValue, i int) (string, error) {
	switch {
	case title.kind == pyNone:
		return "", nil
	case title.kind != pyStr:
		return "", notHeld("field %d: the title %s, which numpy keeps as data and ndpack does not (a title is a str)", i, title.repr())
	case title.s == "":
		return "", notHeld("field %d: an empty title, which numpy keeps and ndpack does not tell from none", i)
	}
	return title.s, nil
}

// prefixErr puts where before err's message, keeping its kind.
func prefixErr(err error, where string) error {
	if e, ok := err.(*specError); ok {
		return &specError{msg: where + e.msg, hold: e.hold}
	}
	return refused("%s%v", where, err)
}

// dictField is one field of a dict spec, on its way to NewRecord.
type dictField struct {
	name, title pyValue
	format      DType
	offset      int
	hasOffset   bool
}

// convDict is numpy's _convert_from_dict: {'names': [...], 'formats':
// [...], 'offsets': [...], 'titles': [...], 'itemsize': n}, or, without
// names and formats, numpy's field dict.
func convDict(v pyValue, depth int) (DType, error) {
	names, ok1 := v.dictGet("names")
	formats, ok2 := v.dictGet("formats")
	if !ok1 || !ok2 {
		return convFieldDict(v, depth)
	}
	n, ok := names.seqLen()
	if !ok {
		return DType{}, refused("'names' is %s, not a sequence", names.repr())
	}
	if n > MaxRecordFields {
		return DType{}, notHeld("%d fields, more than the %d ndpack holds", n, MaxRecordFields)
	}
	lists := map[string]pyValue{"formats": formats}
	for _, key := range []string{"formats", "offsets", "titles"} {
		l, ok := v.dictGet(key)
		if !ok {
			continue
		}
		if m, ok := l.seqLen(); !ok || m < n {
			return DType{}, refused("'%s' is shorter than 'names' or not a sequence (numpy: \"... dict entries must have the same length\")", key)
		}
		lists[key] = l
	}
	if err := dictFlags(v); err != nil {
		return DType{}, err
	}
	fields := make([]dictField, n)
	for i := range fields {
		f := &fields[i]
		f.name = names.seqItem(i)
		var err error
		if f.format, err = convAny(formats.seqItem(i), depth); err != nil {
			return DType{}, prefixErr(err, "format "+strconv.Itoa(i)+": ")
		}
		if offsets, ok := lists["offsets"]; ok {
			o := offsets.seqItem(i)
			if f.offset, ok = cInt(o); !ok || f.offset < 0 {
				return DType{}, refused("offset %d is %s: numpy wants an int, 0 or more", i, o.repr())
			}
			f.hasOffset = true
		}
		if titles, ok := lists["titles"]; ok {
			f.title = titles.seqItem(i)
		}
	}
	return recordOfDict(fields, v)
}

// dictFlags refuses the keys of a dict spec ndpack does not keep.
func dictFlags(v pyValue) error {
	if a, ok := v.dictGet("aligned"); ok {
		switch {
		case a.kind == pyBool && a.i == 1:
			return notHeld("an aligned struct ('aligned': True), a flag ndpack does not keep; give the offsets and itemsize it makes")
		case a.kind != pyBool:
			return refused("'aligned' is %s; numpy wants True or False", a.repr())
		}
	}
	if _, ok := v.dictGet("metadata"); ok {
		return notHeld("metadata, which ndpack does not keep")
	}
	return nil
}

// recordOfDict lays out a dict spec's fields as numpy does.
func recordOfDict(fields []dictField, v pyValue) (DType, error) {
	out := make([]Field, len(fields))
	names := map[string]bool{}
	total := 0
	for i, f := range fields {
		if !f.hasOffset {
			f.offset = total
		}
		if end := f.offset + f.format.ItemSize; end > total {
			total = end
		}
		if total >= maxItemSize/4 {
			return DType{}, notHeld("records of more than %d bytes", maxItemSize/4-1)
		}
		if f.name.kind != pyStr {
			return DType{}, refused("field name %s is not a str (numpy: \"field names must be strings\")", f.name.repr())
		}
		title, err := fieldTitle(f.title, i)
		if err != nil {
			return DType{}, err
		}
		for _, n := range []string{f.name.s, title} {
			if n != "" && names[n] {
				return DType{}, refused("field %d: the name %s is used twice (numpy: \"name already used as a name or title\")", i, pyReprShort(n))
			}
			names[n] = true
		}
		out[i] = Field{Name: f.name.s, Title: title, DType: f.format, Offset: f.offset}
	}
	itemSize := total
	if is, ok := v.dictGet("itemsize"); ok {
		n, ok := cInt(is)
		switch {
		case !ok:
			return DType{}, refused("'itemsize' is %s, not an int", is.repr())
		case n < total:
			return DType{}, refused("'itemsize' %d is less than the %d bytes the fields need", n, total)
		case n >= maxItemSize/4:
			return DType{}, notHeld("an itemsize of %d, more than ndpack holds", n)
		}
		itemSize = n
	}
	dt, err := NewRecord(out, itemSize)
	return dt, detail(err)
}

// convFieldDict is numpy's _usefields: {name: (dtype, offset[, title]),
// ...}, the fields sorted by offset, or in the order of the list under
// the key -1.
func convFieldDict(v pyValue, depth int) (DType, error) {
	var fields []dictField
	if order, ok := v.dictGetValue(pyValue{kind: pyInt, i: -1}); ok {
		n, ok := order.seqLen()
		if !ok {
			return DType{}, refused("the key -1 holds %s, not a list of names", order.repr())
		}
		for i := 0; i < n; i++ {
			name := order.seqItem(i)
			entry, ok := v.dictGetValue(name)
			if !ok || (entry.kind != pyTuple && entry.kind != pyList) || len(entry.items) < 2 {
				return DType{}, refused("field %s has no (dtype, offset) entry", name.repr())
			}
			f, err := fieldDictEntry(name, entry, depth)
			if err != nil {
				return DType{}, err
			}
			if len(entry.items) > 2 {
				f.title = entry.items[2]
			}
			fields = append(fields, f)
		}
		return recordOfDict(fields, pyValue{})
	}
	for i := 0; i+1 < len(v.items); i += 2 {
		name, entry := v.items[i], v.items[i+1]
		if entry.kind != pyTuple || len(entry.items) < 2 || len(entry.items) > 3 {
			return DType{}, refused("field %s is %s; numpy wants (dtype, offset) or (dtype, offset, title) (\"entry not a 2- or 3- tuple\")", name.repr(), entry.repr())
		}
		if len(entry.items) == 3 && pyEqual(entry.items[2], name) {
			continue // numpy skips a field whose title is its name
		}
		f, err := fieldDictEntry(name, entry, depth)
		if err != nil {
			return DType{}, err
		}
		if len(entry.items) == 3 {
			f.title = entry.items[2]
		}
		fields = append(fields, f)
	}
	slices.SortStableFunc(fields, func(a, b dictField) int { return a.offset - b.offset })
	return recordOfDict(fields, pyValue{})
}

// fieldDictEntry reads (dtype, offset) of a field dict; the offset as
// Python's int() reads it.
func fieldDictEntry(name, entry pyValue, depth int) (dictField, error) {
	f := dictField{name: name, title: pyValue{kind: pyNone}, hasOffset: true}
	o := entry.items[1]
	switch {
	case o.kind == pyInt || o.kind == pyBool:
		if o.big || o.i > math.MaxInt32 {
			return f, refused("field %s: the offset is too large", name.repr())
		}
		f.offset = int(o.i)
	case o.kind == pyFloat && !math.IsNaN(o.f) && !math.IsInf(o.f, 0) && math.Abs(o.f) < math.MaxInt32:
		f.offset = int(o.f)
	case o.kind == pyStr:
		t := strings.TrimFunc(o.s, pyIsSpace)
		digits := strings.TrimLeft(t, "+-")
		n, err := strconv.ParseInt(strings.ReplaceAll(digits, "_", ""), 10, 32)
		if err != nil || len(t)-len(digits) > 1 || !pyDigitGroups(digits) || digits == "" || !isDigit(digits[0]) {
			return f, refused("field %s: the offset %s is not an int", name.repr(), o.repr())
		}
		f.offset = int(n)
		if t[0] == '-' {
			f.offset = -f.offset
		}
	default:
		return f, refused("field %s: the offset %s is not an int", name.repr(), o.repr())
	}
	if f.offset < 0 {
		return f, refused("field %s: a negative offset (numpy: \"invalid offset.\")", name.repr())
	}
	var err error
	f.format, err = convAny(entry.items[0], depth)
	if err != nil {
		return f, prefixErr(err, "field "+name.repr()+": ")
	}
	return f, nil
}
