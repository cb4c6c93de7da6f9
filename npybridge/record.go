package npybridge

import (
	"unicode/utf8"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// A record (structured) dtype travels in the header as numpy's
// dtype.descr: a list of (name, format) and (name, format, shape) tuples,
// a name being 'x' or ('title', 'x'), a format a typestr, a nested list
// (a record field) or a (format, shape) tuple (a subarray), and padding
// entries ('', '|V4') between fields. np.load rebuilds the dtype with
// numpy.lib.format.descr_to_dtype, whose rules are followed here, quirks
// included, so that ndpack reads what np.load reads and refuses what it
// refuses:
//
//   - A field is any sequence of 2 or 3 items: a tuple, a list, a two-letter
//     str ('ab' is the field 'a' of type 'b'); a dict stands for its keys.
//     A dict of {'names': ..., 'formats': ...} (numpy's str of a padded
//     dtype) is therefore no descr: its keys are fields of 5 and 7 items.
//   - An entry named '' (not ('t', '')) whose type is void without fields,
//     a subarray included, is padding: skipped, its bytes kept as a gap.
//   - A shape is an int (n means (n,), but 1 means no subarray, numpy 1.24's
//     deprecated reading), a tuple of ints (() means no subarray) or a
//     non-empty list of ints; each dimension fits in a C int.
//   - A title is a str or None; numpy also allows other objects, which
//     ndpack does not hold.
//
// Objects anywhere inside are pickles and refused, as np.load refuses them
// without allow_pickle.

// objectError is the refusal of a pickled object array.
func objectError(at int64, descr string) error {
	return errAt(ErrUnsupported, at, "descr %q is an object array (pickle), which is never read", descr)
}

// descrParser turns a header's descr literal into a dtype; base is the
// header text's offset in the file, for errors.
type descrParser struct {
	base int64
}

func (d descrParser) fail(v *pyValue, format string, args ...any) error {
	return errAt(errHeader, d.base+int64(v.at), format, args...)
}

// dtype is descr_to_dtype for any descr: a str, a (format, shape) tuple,
// or a sequence of fields.
func (d descrParser) dtype(v *pyValue) (ndarray.DType, error) {
	switch v.kind {
	case pyStr:
		if isObjectDescr(v.s) {
			return ndarray.DType{}, objectError(d.base+int64(v.at), v.s)
		}
		dt, err := parseDescr(v.s)
		if err != nil {
			return ndarray.DType{}, wrapAt(errHeader, d.base+int64(v.at), err)
		}
		return dt, nil
	case pyTuple:
		if len(v.items) < 2 {
			return ndarray.DType{}, d.fail(v, "a subarray format is a (format, shape) tuple, this one has %s", codecerr.Count(len(v.items), "item"))
		}
		dt, err := d.dtype(&v.items[0])
		if err != nil {
			return ndarray.DType{}, err
		}
		return d.subarray(dt, &v.items[1])
	case pyList, pyDict:
		return d.record(v)
	}
	return ndarray.DType{}, d.fail(v, "a format is %s, not a str, a list of fields or a (format, shape) tuple", v.kind)
}

// sequence returns what Python gets by iterating v: a tuple's or list's
// items, a dict's keys, a str's characters, and their count; ok is false
// for the others. A str of more than 3 characters, never a field, gives
// its count only.
func sequence(v *pyValue) (items []pyValue, n int, ok bool) {
	switch v.kind {
	case pyTuple, pyList:
		return v.items, len(v.items), true
	case pyDict:
		keys := make([]pyValue, 0, len(v.items)/2)
		for i := 0; i < len(v.items); i += 2 {
			keys = append(keys, v.items[i])
		}
		return keys, len(keys), true
	case pyStr:
		if n := utf8.RuneCountInString(v.s); n > 3 {
			return nil, n, true
		}
		for _, r := range v.s {
			items = append(items, pyValue{kind: pyStr, at: v.at, s: string(r)})
		}
		return items, len(items), true
	}
	return nil, 0, false
}

// record is descr_to_dtype's loop over the fields of a descr list.
func (d descrParser) record(v *pyValue) (ndarray.DType, error) {
	entries, _, _ := sequence(v)
	if len(entries) > ndarray.MaxRecordFields {
		return ndarray.DType{}, d.fail(v, "%d fields, more than the %d ndpack holds (ndarray.MaxRecordFields)", len(entries), ndarray.MaxRecordFields)
	}
	fields := make([]ndarray.Field, 0, len(entries))
	off := 0
	for i := range entries {
		e := &entries[i]
		parts, n, ok := sequence(e)
		if !ok {
			return ndarray.DType{}, d.fail(e, "field %d is %s, not a (name, format) or (name, format, shape) tuple", i, e.kind)
		}
		if n != 2 && n != 3 {
			return ndarray.DType{}, d.fail(e, "field %d has %s, not (name, format) or (name, format, shape)", i, codecerr.Count(n, "item"))
		}
		var f ndarray.Field
		name := &parts[0]
		switch {
		case name.kind == pyStr:
			f.Name = name.s
		case name.kind == pyTuple && len(name.items) == 2 && name.items[1].kind == pyStr:
			f.Name = name.items[1].s
			switch t := &name.items[0]; t.kind {
			case pyNone:
			case pyStr:
				if t.s == "" {
					return ndarray.DType{}, errAt(ErrUnsupported, d.base+int64(t.at), "field %d has the empty title, which ndpack does not hold apart from no title", i)
				}
				f.Title = t.s
			default:
				return ndarray.DType{}, errAt(ErrUnsupported, d.base+int64(t.at), "field %d has a title that is %s: ndpack holds only str titles", i, t.kind)
			}
		case name.kind == pyTuple && len(name.items) != 2:
			return ndarray.DType{}, d.fail(name, "field %d: a titled name is ('title', 'name'), this tuple has %s", i, codecerr.Count(len(name.items), "item"))
		default:
			return ndarray.DType{}, d.fail(name, "field %d: field names must be strings, this one is %s", i, name.kind)
		}
		dt, err := d.dtype(&parts[1])
		if err != nil {
			return ndarray.DType{}, err
		}
		if n == 3 {
			if dt, err = d.subarray(dt, &parts[2]); err != nil {
				return ndarray.DType{}, err
			}
		}
		if dt.ItemSize > 1<<31-1-off {
			return ndarray.DType{}, d.fail(e, "field %d ends beyond the largest item numpy holds", i)
		}
		// Padding: named '' (a titled ('t', '') or (None, '') is a
		// field), void without fields; skipped, its bytes a gap.
		if !(name.kind == pyStr && f.Name == "" && dt.Kind == 'V' && !dt.IsRecord()) {
			f.DType, f.Offset = dt, off
			fields = append(fields, f)
		}
		off += dt.ItemSize
	}
	dt, err := ndarray.NewRecord(fields, off)
	if err != nil {
		return ndarray.DType{}, wrapAt(errHeader, d.base+int64(v.at), err)
	}
	return dt, nil
}

// subarray is numpy's np.dtype((dt, shape)).
func (d descrParser) subarray(dt ndarray.DType, v *pyValue) (ndarray.DType, error) {
	var shape []int
	dim := func(x *pyValue) error {
		switch {
		case x.kind != pyInt:
			return d.fail(x, "invalid shape in fixed-type tuple: a dimension is %s, not an int", x.kind)
		case x.negative && x.i != 0:
			return d.fail(x, "invalid shape in fixed-type tuple: dimension smaller than zero")
		case x.big || x.i > 1<<31-1:
			return d.fail(x, "invalid shape in fixed-type tuple: dimension does not fit into a C int")
		}
		shape = append(shape, int(x.i))
		return nil
	}
	switch v.kind {
	case pyInt:
		if err := dim(v); err != nil {
			return ndarray.DType{}, err
		}
		if shape[0] == 1 {
			return dt, nil // numpy 1.24: (type, 1) is type, with a FutureWarning
		}
	case pyTuple, pyList:
		if v.kind == pyList && len(v.items) == 0 {
			return ndarray.DType{}, d.fail(v, "a subarray shape of [] is refused by numpy (mismatch in size of old and new data-descriptor)")
		}
		if len(v.items) > ndarray.MaxDims {
			return ndarray.DType{}, d.fail(v, "a subarray shape of %d dimensions, more than numpy's %d", len(v.items), ndarray.MaxDims)
		}
		for i := range v.items {
			if err := dim(&v.items[i]); err != nil {
				return ndarray.DType{}, err
			}
		}
	default:
		return ndarray.DType{}, d.fail(v, "invalid shape in fixed-type tuple: the shape is %s, not an int or a tuple of ints", v.kind)
	}
	out, err := ndarray.NewSubarray(dt, shape)
	if err != nil {
		return ndarray.DType{}, wrapAt(errHeader, d.base+int64(v.at), err)
	}
	return out, nil
}

// checkWritable refuses the dtypes np.save cannot write: a record whose
// fields overlap or are out of offset order (numpy has no descr list for
// it) and a subarray dtype (numpy folds its shape into the array's).
func checkWritable(dt ndarray.DType) error {
	if dt.IsSubarray() {
		return errAt(ErrInvalidArray, -1, "an array of the subarray dtype %s: np.save writes its shape as part of the array's", dt)
	}
	if dt.IsRecord() {
		if _, err := dt.Descr(); err != nil {
			return wrapAt(ErrInvalidArray, -1, err)
		}
	}
	return nil
}

// appendDescr appends numpy's header text for dt's descr: see
// ndarray.DType.AppendDescr.
func appendDescr(b []byte, dt ndarray.DType) []byte { return dt.AppendDescr(b) }
