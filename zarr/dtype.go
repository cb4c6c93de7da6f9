package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/ndpack/ndpack/ndarray"
)

// dtypeValue is dt as Zarr v2 writes it in .zarray: numpy's dtype.str for
// a plain dtype ("<f4", "|S5", "<M8[ns]"), and for a record numpy's
// dtype.descr, a list of [name, format] and [name, format, shape]
// entries, a nested record's format its own list. zarr-python reads a
// descr's padding entries back as fields named f1, f2 ... and cannot read
// titles at all, so a record with either is refused, as is an object
// dtype and a subarray dtype (which an array's shape carries instead).
func dtypeValue(dt ndarray.DType) (any, error) {
	if err := dt.Validate(); err != nil {
		return nil, wrapErr(ErrUnsupported, err, "dtype")
	}
	switch {
	case dt.IsSubarray():
		return nil, errAt(ErrUnsupported, -1, "the subarray dtype %s: Zarr v2 keeps its shape in the array's", dt)
	case !dt.IsRecord():
		return dt.String(), nil
	}
	items, err := dt.Descr()
	if err != nil {
		return nil, wrapErr(ErrUnsupported, err, "the record dtype %s has no descr list for Zarr v2", dt)
	}
	list := make([]any, 0, len(items))
	off := 0
	for _, it := range items {
		if it.IsPadding() {
			return nil, errAt(ErrUnsupported, -1, "the record dtype %s leaves %d bytes unused at byte %d of its items, which zarr-python would read as a field f%d; Zarr v2 cannot carry padding",
				dt, it.DType.ItemSize, off, len(list))
		}
		if it.Title != "" {
			return nil, errAt(ErrUnsupported, -1, "field %q of the record dtype %s has the title %q, which Zarr v2 cannot carry", it.Name, dt, it.Title)
		}
		size, _ := ndarray.ByteSize(it.DType, it.Shape)
		off += size
		base, shape := it.DType, it.Shape
		if sub, subShape, ok := base.Subarray(); ok {
			base, shape = sub, append(append([]int{}, shape...), subShape...)
		}
		format, err := dtypeValue(base)
		if err != nil {
			return nil, err
		}
		entry := []any{it.Name, format}
		if shape != nil {
			dims := make([]any, len(shape))
			for i, d := range shape {
				dims[i] = d
			}
			entry = append(entry, dims)
		}
		list = append(list, entry)
	}
	return list, nil
}

// parseDType reads the dtype of a .zarray as zarr-python does
// (np.dtype of the string, or of the descr list with its entries made
// tuples): a typestr, or a list of [name, format] and [name, format,
// shape] entries, format a typestr or a nested list. An entry without a
// name is named f0, f1 ... by its place, as numpy names it. depth counts
// the records around it.
func parseDType(raw json.RawMessage, depth int) (ndarray.DType, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		dt, err := ndarray.ParseTypestr(s)
		if errors.Is(err, ndarray.ErrObject) {
			return ndarray.DType{}, wrapErr(ErrUnsupported, err, "an object dtype (%q): its chunks are Python objects an object codec wrote", s)
		}
		if err != nil {
			return ndarray.DType{}, wrapErr(errMetadata, err, "dtype %q", s)
		}
		return dt, nil
	}
	if depth >= ndarray.MaxRecordDepth {
		return ndarray.DType{}, errAt(errMetadata, -1, "records nest more than %d deep", ndarray.MaxRecordDepth)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || len(entries) == 0 {
		return ndarray.DType{}, errAt(errMetadata, -1, "dtype is %s, not a typestr or a list of fields", quoteJSON(raw))
	}
	if len(entries) > ndarray.MaxRecordFields {
		return ndarray.DType{}, errAt(errMetadata, -1, "%d fields, more than the %d allowed", len(entries), ndarray.MaxRecordFields)
	}
	fields := make([]ndarray.Field, 0, len(entries))
	off := 0
	for i, e := range entries {
		f, err := parseField(e, i, depth)
		if err != nil {
			return ndarray.DType{}, err
		}
		size, err := ndarray.ByteSize(f.DType, f.Shape)
		if err != nil || size > 1<<40-off {
			return ndarray.DType{}, errAt(errMetadata, -1, "field %d (%q) is too large", i, f.Name)
		}
		f.Offset = off
		off += size
		fields = append(fields, f)
	}
	dt, err := ndarray.NewRecord(fields, off)
	if err != nil {
		return ndarray.DType{}, wrapErr(errMetadata, err, "record dtype")
	}
	return dt, nil
}

// parseField reads entry i of a descr list.
func parseField(raw json.RawMessage, i, depth int) (ndarray.Field, error) {
	var parts []json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil || len(parts) < 2 || len(parts) > 3 {
		return ndarray.Field{}, errAt(errMetadata, -1, "field %d is %s, not [name, format] or [name, format, shape]", i, quoteJSON(raw))
	}
	var name string
	if err := json.Unmarshal(parts[0], &name); err != nil {
		var title []any
		if json.Unmarshal(parts[0], &title) == nil {
			return ndarray.Field{}, errAt(ErrUnsupported, -1, "field %d has a title and a name, %s, which zarr-python cannot read", i, quoteJSON(parts[0]))
		}
		return ndarray.Field{}, errAt(errMetadata, -1, "the name of field %d is %s, not a string", i, quoteJSON(parts[0]))
	}
	if name == "" {
		name = "f" + strconv.Itoa(i)
	}
	dt, err := parseDType(parts[1], depth+1)
	if err != nil {
		return ndarray.Field{}, fmt.Errorf("field %q: %w", name, err)
	}
	f := ndarray.Field{Name: name, DType: dt}
	if len(parts) == 3 {
		if f.Shape, err = parseDims(parts[2], "the shape of field "+strconv.Quote(name)); err != nil {
			return ndarray.Field{}, err
		}
	}
	return f, nil
}

// parseDims reads a list of dimensions (non-negative integers), at most
// ndarray.MaxDims of them.
func parseDims(raw json.RawMessage, what string) ([]int, error) {
	var nums []json.Number
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&nums); err != nil || nums == nil {
		return nil, errAt(errMetadata, -1, "%s is %s, not a list of integers", what, quoteJSON(raw))
	}
	if len(nums) > ndarray.MaxDims {
		return nil, errAt(errMetadata, -1, "%s has %d dimensions, more than the %d numpy allows", what, len(nums), ndarray.MaxDims)
	}
	dims := make([]int, len(nums))
	for i, n := range nums {
		v, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || v < 0 || v > 1<<62 {
			return nil, errAt(errMetadata, -1, "dimension %d of %s is %s, not an integer from 0 to 2^62", i, what, n)
		}
		dims[i] = int(v)
	}
	return dims, nil
}

// quoteJSON quotes JSON from a store for a message, cut to a readable
// length.
func quoteJSON(raw []byte) string {
	const most = 80
	if len(raw) > most {
		return strconv.Quote(string(raw[:most])) + "..."
	}
	return strconv.Quote(string(raw))
}
