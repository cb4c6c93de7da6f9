// Package mpdescr reads and writes numpy's dtype.descr of a record dtype
// as msgpack-python packs it: the list of (name, format) and (name, format,
// shape) tuples becomes a msgpack array of arrays, a titled field's name the
// array [title, name], a nested record's format its own descr list, a
// subarray format (base, shape) the array [base, shape], and every string a
// str. YEP-110's reference pack_ndarray (the array interface's "descr" key)
// and msgpack-numpy (its "type" key with kind b'V') both send a record's
// dtype this way; ext110 and dialect share this one reading of it.
//
// Reading follows numpy.lib.format.descr_to_dtype, which is how numpy turns
// such a list back into a dtype: fields one after another, padding entries
// (an unnamed, untitled plain void, numpy's ("", '|V4')) skipped but
// advancing the offset. Since msgpack has no tuples, a format that is an
// array is a subarray when its second item is a shape (an array of
// integers, or an integer) and a nested record otherwise; no descr numpy
// writes is ambiguous under that rule. Nesting and the number of entries
// are bounded (ndarray.MaxRecordDepth, ndarray.MaxRecordFields) before
// anything is allocated for them, every count is checked against the
// bytes that remain, and the memory the dtype will take is estimated as it
// is read and bounded by MaxExpansion times the descr's size plus
// ExpansionSlack: a field costs the decoder hundreds of bytes, and a nested
// record more, where a hostile descr spends 3.
package mpdescr

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// Error is a failure to read or write a descr. The codecs turn it into
// their own error type, with Offset counted from where the descr starts.
type Error struct {
	Offset int    // from the first byte of the descr; -1 when writing
	Detail string // what was wrong, and in which entry
	Cause  error  // an ndarray error, when ndarray refused the dtype; may be nil
	// Truncated is set when the input ends inside the descr.
	Truncated bool
	// Object is set when a format is an object dtype ('|O'), whose items
	// are Python objects: an object array (pickle), never read.
	Object bool
}

// Error formats the failure as "descr at byte N: DETAIL: CAUSE".
func (e *Error) Error() string {
	s := "descr"
	if e.Offset >= 0 {
		s += " at byte " + strconv.Itoa(e.Offset)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the cause, so that errors.Is matches an ndarray sentinel.
func (e *Error) Unwrap() error { return e.Cause }

// Append appends numpy's dtype.descr of dt to dst as msgpack-python packs
// it. For a plain dtype that is numpy's [("", typestr)] (msgpack-numpy
// sends a plain void array so). It fails, as numpy's dtype.descr does, for
// a record whose fields overlap or are out of offset order, and, where
// numpy would silently lose a field, for an unnamed, untitled plain void
// field, which every reader takes for padding.
func Append(dst []byte, dt ndarray.DType) ([]byte, error) {
	items, err := dt.Descr()
	if err != nil {
		return dst, &Error{Offset: -1, Detail: "the record has no descr list", Cause: err}
	}
	if dt.IsRecord() {
		for _, f := range dt.Fields() {
			if f.Name == "" && f.Title == "" && f.Shape == nil && f.DType.IsPlain() && f.DType.Kind == 'V' {
				return dst, &Error{Offset: -1, Detail: fmt.Sprintf("the unnamed %s field at offset %d would be read as padding and lost", f.DType, f.Offset)}
			}
		}
	}
	dst = mpwire.AppendArrayHeader(dst, len(items))
	for _, it := range items {
		n := 2
		if it.Shape != nil {
			n = 3
		}
		dst = mpwire.AppendArrayHeader(dst, n)
		if it.Title != "" {
			dst = mpwire.AppendArrayHeader(dst, 2)
			dst = mpwire.AppendString(dst, it.Title)
		}
		dst = mpwire.AppendString(dst, it.Name)
		if dst, err = appendFormat(dst, it.DType); err != nil {
			return dst, err
		}
		if it.Shape != nil {
			dst = appendShape(dst, it.Shape)
		}
	}
	return dst, nil
}

// appendFormat appends the format of a descr entry: a typestr, a nested
// record's descr, or a subarray's [base, shape].
func appendFormat(dst []byte, dt ndarray.DType) ([]byte, error) {
	switch {
	case dt.IsRecord():
		return Append(dst, dt)
	case dt.IsSubarray():
		base, shape, _ := dt.Subarray()
		dst = mpwire.AppendArrayHeader(dst, 2)
		dst, err := appendFormat(dst, base)
		if err != nil {
			return dst, err
		}
		return appendShape(dst, shape), nil
	}
	var buf [32]byte
	ts, err := dt.AppendText(buf[:0])
	if err != nil {
		return dst, &Error{Offset: -1, Detail: "a field's dtype has no typestr", Cause: err}
	}
	return mpwire.AppendStringFromBytes(dst, ts), nil
}

// appendShape appends a shape as msgpack-python packs a tuple of ints.
func appendShape(dst []byte, shape []int) []byte {
	dst = mpwire.AppendArrayHeader(dst, len(shape))
	for _, d := range shape {
		dst = mpwire.AppendUint(dst, uint64(d))
	}
	return dst
}

// Read reads the descr list that fills b (the budget is counted from len(b))
// and returns the dtype it describes and the bytes it took. A list of nothing but padding, such as
// numpy's descr of a plain void [("", '|V8')], gives the plain void of its
// size (numpy's own readers make of it a record without fields, which holds
// nothing more); any other list gives a record (numpy's [("", '<f8')] is a
// record of one unnamed field, as descr_to_dtype makes it).
func Read(b []byte) (ndarray.DType, int, error) {
	r := reader{b: b}
	items, err := r.list(1)
	if err != nil {
		return ndarray.DType{}, 0, err
	}
	dt, err := ndarray.RecordFromDescr(items)
	if err != nil {
		return ndarray.DType{}, 0, &Error{Offset: 0, Cause: err}
	}
	if dt.NumFields() == 0 && dt.ItemSize > 0 {
		dt = ndarray.DType{Order: '|', Kind: 'V', ItemSize: dt.ItemSize}
	}
	return dt, r.off, nil
}

// reader reads a descr through mpwire, whose reads check every count and
// length against the bytes that remain.
type reader struct {
	b       []byte
	off     int
	entries int // entries read at every level, against MaxRecordFields
	cost    int // the memory the dtype is estimated to take, against budget()
}

// The memory a decoded dtype takes, as measured on Go 1.26 with ndarray's
// interned layouts, estimated high: a field (its descr item, its Field, its
// name and its slot in the record's name index) takes up to about 500
// bytes, a record or subarray layout about 800 with its key and intern
// entry, a shape 8 bytes a dimension besides its slice. Real descrs spend
// 10 to 30 bytes an entry; hostile ones 3 (an empty nested record), which
// the budget refuses once past the slack.
const (
	costEntry  = 512
	costLayout = 1024
	costShape  = 32
	// MaxExpansion and ExpansionSlack bound the estimated memory of a
	// decoded dtype: MaxExpansion times the descr's bytes, plus the slack,
	// which every real record fits in.
	MaxExpansion   = 48
	ExpansionSlack = 1 << 20
)

// spend adds n to the estimated cost and fails past the budget.
func (r *reader) spend(n, at int) error {
	r.cost += n
	if r.cost > MaxExpansion*len(r.b)+ExpansionSlack {
		return r.errorf(at, "the dtype would take more than %d times the descr's %d bytes in memory, plus %d", MaxExpansion, len(r.b), ExpansionSlack)
	}
	return nil
}

func (r *reader) next(rest []byte) { r.off = len(r.b) - len(rest) }

func (r *reader) wireError(err error, value, length, want string) error {
	off, detail, truncated := mpwire.Describe(err, value, length, want)
	return &Error{Offset: r.off + off, Detail: detail, Truncated: truncated}
}

func (r *reader) errorf(at int, format string, args ...any) error {
	return &Error{Offset: at, Detail: fmt.Sprintf(format, args...)}
}

// list reads a descr list at nesting level depth (1 for the array's own).
func (r *reader) list(depth int) ([]ndarray.DescrItem, error) {
	at := r.off
	if depth > ndarray.MaxRecordDepth {
		return nil, r.errorf(at, "records and subarrays nested more than %d deep (ndarray.MaxRecordDepth)", ndarray.MaxRecordDepth)
	}
	n, rest, err := mpwire.ReadArrayHeaderBytes(r.b[r.off:])
	if err != nil {
		return nil, r.wireError(err, "descr", "descr list", "an array of [name, format] entries")
	}
	r.next(rest)
	// Each entry takes bytes of its own, so n is bounded by the input;
	// the count over all levels is bounded as ndarray bounds fields.
	r.entries += n
	if r.entries > ndarray.MaxRecordFields {
		return nil, r.errorf(at, "more than %d entries over all nesting levels (ndarray.MaxRecordFields)", ndarray.MaxRecordFields)
	}
	if err := r.spend(costLayout+n*costEntry, at); err != nil {
		return nil, err
	}
	// The smallest entry, [name, []], takes 3 bytes: a count the bytes
	// cannot hold sizes nothing beyond them.
	items := make([]ndarray.DescrItem, 0, min(n, (len(r.b)-r.off)/3))
	for i := range n {
		it, err := r.entry(i, depth)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// entry reads the descr entry i: [name, format] or [name, format, shape],
// the name a str or a [title, name] pair.
func (r *reader) entry(i, depth int) (ndarray.DescrItem, error) {
	at := r.off
	n, rest, err := mpwire.ReadArrayHeaderBytes(r.b[r.off:])
	if err != nil {
		return ndarray.DescrItem{}, r.wireError(err, fmt.Sprintf("descr entry %d", i), "descr entry", "an array [name, format] or [name, format, shape]")
	}
	if n != 2 && n != 3 {
		return ndarray.DescrItem{}, r.errorf(at, "descr entry %d has %s, want [name, format] or [name, format, shape]", i, codecerr.Count(n, "item"))
	}
	r.next(rest)
	var it ndarray.DescrItem
	if mpwire.NextType(r.b[r.off:]) == mpwire.ArrayType {
		pairAt := r.off
		m, rest, err := mpwire.ReadArrayHeaderBytes(r.b[r.off:])
		if err != nil {
			return it, r.wireError(err, fmt.Sprintf("descr entry %d's name", i), "name", "a str or a [title, name] pair")
		}
		if m != 2 {
			return it, r.errorf(pairAt, "descr entry %d's name is an array of %s, want [title, name]", i, codecerr.Count(m, "item"))
		}
		r.next(rest)
		if it.Title, err = r.text(i, "title"); err != nil {
			return it, err
		}
	}
	if it.Name, err = r.text(i, "name"); err != nil {
		return it, err
	}
	where := func() string { return fmt.Sprintf("descr entry %d (%s)", i, strconv.Quote(it.Name)) }
	if it.DType, err = r.format(where, depth); err != nil {
		return it, err
	}
	if n == 3 {
		if it.Shape, err = r.shape(where); err != nil {
			return it, err
		}
	}
	return it, nil
}

// text reads a name or title: a str, or a bin from older packers.
func (r *reader) text(i int, what string) (string, error) {
	v, rest, err := mpwire.ReadStringOrBinZC(r.b[r.off:])
	if err != nil {
		return "", r.wireError(err, fmt.Sprintf("descr entry %d's %s", i, what), what, "str or bin")
	}
	r.next(rest)
	return string(v), nil
}

// format reads an entry's format: a typestr, a nested descr list, or a
// subarray [base, shape].
func (r *reader) format(where func() string, depth int) (ndarray.DType, error) {
	at := r.off
	in := r.b[r.off:]
	switch mpwire.NextType(in) {
	case mpwire.StrType, mpwire.BinType:
		s, rest, err := mpwire.ReadStringOrBinZC(in)
		if err != nil {
			return ndarray.DType{}, r.wireError(err, where()+"'s format", "format", "str or bin")
		}
		r.next(rest)
		return parseFormat(s, at, where)
	case mpwire.ArrayType:
	default:
		if len(in) == 0 {
			return ndarray.DType{}, &Error{Offset: at, Detail: where() + "'s format needs 1 byte, 0 remain", Truncated: true}
		}
		return ndarray.DType{}, r.errorf(at, "%s's format is msgpack type byte 0x%02x, not a typestr, a descr list or a [base, shape] pair", where(), in[0])
	}
	if r.isSubarray() {
		if depth >= ndarray.MaxRecordDepth {
			return ndarray.DType{}, r.errorf(at, "records and subarrays nested more than %d deep (ndarray.MaxRecordDepth)", ndarray.MaxRecordDepth)
		}
		if err := r.spend(costLayout, at); err != nil {
			return ndarray.DType{}, err
		}
		_, rest, _ := mpwire.ReadArrayHeaderBytes(in)
		r.next(rest)
		base, err := r.format(where, depth+1)
		if err != nil {
			return ndarray.DType{}, err
		}
		shape, err := r.shape(where)
		if err != nil {
			return ndarray.DType{}, err
		}
		dt, err := ndarray.NewSubarray(base, shape)
		if err != nil {
			return ndarray.DType{}, &Error{Offset: at, Detail: where() + "'s subarray format", Cause: err}
		}
		return dt, nil
	}
	items, err := r.list(depth + 1)
	if err != nil {
		return ndarray.DType{}, err
	}
	dt, err := ndarray.RecordFromDescr(items)
	if err != nil {
		return ndarray.DType{}, &Error{Offset: at, Detail: where() + "'s nested record", Cause: err}
	}
	return dt, nil
}

// isSubarray reports whether the array at the reader is numpy's tuple
// (base, shape) rather than a nested descr list: two items, the second an
// integer or an array that is empty or starts with an integer. A descr
// list's items are entries, arrays that start with a name.
func (r *reader) isSubarray() bool {
	n, rest, err := mpwire.ReadArrayHeaderBytes(r.b[r.off:])
	if err != nil || n != 2 {
		return false
	}
	skip, err := mpwalk.Len(rest, mpwalk.Limits{})
	if err != nil {
		return false // the list's reading reports it
	}
	second := rest[skip:]
	switch mpwire.NextType(second) {
	case mpwire.IntType, mpwire.UintType:
		return true
	case mpwire.ArrayType:
		m, items, err := mpwire.ReadArrayHeaderBytes(second)
		if err != nil {
			return false
		}
		t := mpwire.NextType(items)
		return m == 0 || t == mpwire.IntType || t == mpwire.UintType
	}
	return false
}

// shape reads a subarray shape: an array of non-negative integers, or one
// integer, which numpy takes for a 1-d shape.
func (r *reader) shape(where func() string) ([]int, error) {
	in := r.b[r.off:]
	if t := mpwire.NextType(in); t == mpwire.IntType || t == mpwire.UintType {
		d, err := r.dim(where)
		if err != nil {
			return nil, err
		}
		return []int{d}, nil
	}
	at := r.off
	n, rest, err := mpwire.ReadArrayHeaderBytes(in)
	if err != nil {
		return nil, r.wireError(err, where()+"'s shape", "shape", "an array of integers")
	}
	if n > ndarray.MaxDims {
		return nil, r.errorf(at, "%s's shape has %d dimensions, more than the %d numpy allows", where(), n, ndarray.MaxDims)
	}
	if err := r.spend(costShape+8*n, at); err != nil {
		return nil, err
	}
	r.next(rest)
	shape := make([]int, n)
	for i := range shape {
		if shape[i], err = r.dim(where); err != nil {
			return nil, err
		}
	}
	return shape, nil
}

func (r *reader) dim(where func() string) (int, error) {
	at := r.off
	in := r.b[r.off:]
	if mpwire.NextType(in) == mpwire.UintType {
		u, rest, err := mpwire.ReadUintBytes(in)
		if err != nil {
			return 0, r.wireError(err, where()+"'s shape entry", "shape entry", "an integer")
		}
		if u > math.MaxInt32 {
			return 0, r.errorf(at, "%s's shape entry %d is too large", where(), u)
		}
		r.next(rest)
		return int(u), nil
	}
	v, rest, err := mpwire.ReadIntBytes(in)
	if err != nil {
		return 0, r.wireError(err, where()+"'s shape entry", "shape entry", "an integer")
	}
	if v < 0 || v > math.MaxInt32 {
		return 0, r.errorf(at, "%s's shape entry %d is negative or too large", where(), v)
	}
	r.next(rest)
	return int(v), nil
}

// parseFormat parses a typestr as numpy's descr writes it for a field.
func parseFormat(s []byte, at int, where func() string) (ndarray.DType, error) {
	dt, err := ndarray.ParseTypestr(string(s))
	if errors.Is(err, ndarray.ErrObject) {
		return ndarray.DType{}, &Error{Offset: at, Detail: fmt.Sprintf("%s's format %q is an object array (pickle), which is never read", where(), s), Object: true}
	}
	if err != nil {
		return ndarray.DType{}, &Error{Offset: at, Detail: where() + "'s format", Cause: err}
	}
	return dt, nil
}
