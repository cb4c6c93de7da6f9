package ndarray

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds on composite dtypes. NumPy itself has none beyond memory and
// Python's recursion limit; these keep a hostile descr from costing more
// than its own size in work, while holding every layout a real program
// writes.
const (
	// MaxRecordDepth is the deepest nesting of records and subarrays in
	// one dtype: a record of plain fields has depth 1, a field that is
	// itself a record adds 1, and so does each subarray level.
	MaxRecordDepth = 32
	// MaxRecordFields bounds the fields of a dtype, counted over every
	// nesting level, a nested record counted as often as it appears
	// (the size of its String and of its descr grow with this count).
	MaxRecordFields = 1 << 16
)

// Field is one named field of a record dtype, as numpy's dtype.fields
// describes it.
type Field struct {
	// Name is the field's name, numpy's key in dtype.fields.
	Name string
	// Title is numpy's optional second name of a field ("" for none); a
	// field can be looked up by either.
	Title string
	// DType is the type of the field's elements: a plain dtype, a record,
	// or, only when Shape is set, a subarray dtype (numpy's
	// ('a', ('<i4', (2,)), (3,)), which it keeps distinct from
	// ('a', '<i4', (3, 2))).
	DType DType
	// Shape is the field's subarray shape: nil for a scalar field, (3,)
	// for ('pos', '<f4', (3,)). (1,) is kept distinct from a scalar, as
	// numpy keeps it.
	Shape []int
	// Offset is the field's byte offset in each record.
	Offset int
}

// Size returns the bytes the field takes in a record: its dtype's item
// size times the elements of its shape.
func (f Field) Size() int {
	n, _ := ByteSize(f.DType, f.Shape)
	return n
}

// DescrItem is one entry of numpy's dtype.descr list: a field, or, with an
// empty Name and Title and a plain void DType, padding. Nested records and
// subarray dtypes appear as DType values (use their Descr and Subarray).
type DescrItem struct {
	Name, Title string // the field's names; both "" for padding
	DType       DType  // the field's format: plain, a nested record or a subarray
	Shape       []int  // nil for a scalar entry
}

// layout is the immutable description of a record or subarray dtype.
// Layouts are interned (see intern), so two DTypes with the same layout
// hold the same pointer and DType stays comparable with ==.
type layout struct {
	key      string
	itemSize int
	depth    int // nesting levels of records and subarrays, this one included
	total    int // fields counted over every level

	// A record.
	fields  []Field
	byName  map[string]int // names and titles -> index in fields
	ordered bool           // fields in increasing, non-overlapping offsets: dtype.descr exists
	packed  bool           // ordered, without gaps, ending at itemSize: numpy's list form

	// A subarray (fields == nil).
	base  DType
	shape []int
}

func (l *layout) isRecord() bool { return l != nil && l.shape == nil }

// IsRecord reports whether dt is a record (structured) dtype, one with
// named fields. A record's Order is '|', its Kind Void and its ItemSize the
// bytes of a record.
func (dt DType) IsRecord() bool { return dt.layout.isRecord() }

// IsSubarray reports whether dt is a subarray dtype, such as numpy's
// ('<i4', (2,)). Subarray dtypes exist only as the element type of a record
// field whose own Shape is set; no codec writes an array of them.
func (dt DType) IsSubarray() bool { return dt.layout != nil && dt.layout.shape != nil }

// IsPlain reports whether dt is a dtype a typestr describes completely:
// neither a record nor a subarray. A plain "|V12" is opaque bytes; a
// record's AppendText also gives "|V12", so an encoder that writes only a
// typestr must check IsPlain or it silently drops the fields.
func (dt DType) IsPlain() bool { return dt.layout == nil }

// Fields returns a copy of the fields of a record dtype in numpy's order
// (dtype.names), or nil for any other dtype.
func (dt DType) Fields() []Field {
	if !dt.IsRecord() {
		return nil
	}
	out := make([]Field, len(dt.layout.fields))
	for i, f := range dt.layout.fields {
		f.Shape = cloneShape(f.Shape)
		out[i] = f
	}
	return out
}

// NumFields returns the number of fields of a record dtype (not counting
// those of nested records), 0 for any other dtype.
func (dt DType) NumFields() int {
	if !dt.IsRecord() {
		return 0
	}
	return len(dt.layout.fields)
}

// FieldByName returns the field of a record dtype with the given name or,
// as numpy's dtype.fields also allows, title.
func (dt DType) FieldByName(name string) (Field, bool) {
	if !dt.IsRecord() {
		return Field{}, false
	}
	i, ok := dt.layout.byName[name]
	if !ok {
		return Field{}, false
	}
	f := dt.layout.fields[i]
	f.Shape = cloneShape(f.Shape)
	return f, true
}

// Subarray returns the element dtype and shape of a subarray dtype; ok is
// false for any other dtype.
func (dt DType) Subarray() (base DType, shape []int, ok bool) {
	if !dt.IsSubarray() {
		return DType{}, nil, false
	}
	return dt.layout.base, cloneShape(dt.layout.shape), true
}

func cloneShape(s []int) []int {
	if s == nil {
		return nil
	}
	return append([]int{}, s...)
}

// depth returns the nesting levels of composite dtypes in dt (0 if plain).
func (dt DType) depth() int {
	if dt.layout == nil {
		return 0
	}
	return dt.layout.depth
}

// totalFields returns the fields of dt counted over every level.
func (dt DType) totalFields() int {
	if dt.layout == nil {
		return 0
	}
	return dt.layout.total
}

func recordError(format string, args ...any) error {
	return newError(ErrDType, fmt.Sprintf(format, args...))
}

// NewRecord returns the record dtype with the given fields, in that order,
// each at its Offset, and records of itemSize bytes; itemSize 0 means the
// end of the field that ends last. It is numpy's
// np.dtype({'names': ..., 'formats': ..., 'offsets': ..., 'titles': ...,
// 'itemsize': ...}), and refuses what numpy refuses: a name or title used
// twice (titles share the names' space), a field beyond itemSize, a
// negative offset or dimension. As numpy allows, fields may overlap and
// leave gaps (such a record has no descr list, see Descr). A field whose
// DType is a subarray dtype and whose Shape is nil becomes a field of the
// subarray's base with its shape, as numpy makes it.
//
// Nesting is bounded by MaxRecordDepth and the fields, over every level,
// by MaxRecordFields. Names must be valid UTF-8; numpy allows the empty
// name (a list descr [(”, '<i4')] reads as such a field).
//
// It fails with an error matching ErrDType, naming the field at fault, when
// any of these rules or bounds is broken or a field's DType is not valid.
func NewRecord(fields []Field, itemSize int) (DType, error) {
	if len(fields) > MaxRecordFields {
		return DType{}, recordError("%d fields, more than the %d allowed (MaxRecordFields)", len(fields), MaxRecordFields)
	}
	if itemSize < 0 || itemSize >= maxItemSize/4 {
		return DType{}, recordError("record item size %d out of range", itemSize)
	}
	l := &layout{fields: make([]Field, len(fields)), byName: make(map[string]int, len(fields)), depth: 1}
	end := 0
	for i, f := range fields {
		where := func() string { return fmt.Sprintf("field %d (%s)", i, strconv.Quote(f.Name)) }
		if !utf8.ValidString(f.Name) || !utf8.ValidString(f.Title) {
			return DType{}, recordError("%s: name or title is not valid UTF-8", where())
		}
		if err := f.DType.Validate(); err != nil {
			return DType{}, recordError("%s: %v", where(), err)
		}
		if len(f.Shape) == 0 {
			f.Shape = nil
			if f.DType.IsSubarray() {
				f.DType, f.Shape = f.DType.layout.base, cloneShape(f.DType.layout.shape)
			}
		} else {
			f.Shape = cloneShape(f.Shape)
		}
		size, err := ByteSize(f.DType, f.Shape)
		if err != nil {
			return DType{}, recordError("%s: subarray shape %s: %v", where(), FormatShape(f.Shape), err)
		}
		if f.Offset < 0 || f.Offset >= maxItemSize/4 || size >= maxItemSize/4-f.Offset {
			return DType{}, recordError("%s: offset %d and size %d out of range", where(), f.Offset, size)
		}
		if _, dup := l.byName[f.Name]; dup {
			return DType{}, recordError("%s: name already used as a name or title", where())
		}
		l.byName[f.Name] = i
		if f.Title != "" {
			if _, dup := l.byName[f.Title]; dup {
				return DType{}, recordError("%s: title %s already used as a name or title", where(), strconv.Quote(f.Title))
			}
			l.byName[f.Title] = i
		}
		end = max(end, f.Offset+size)
		l.depth = max(l.depth, 1+f.DType.depth())
		l.total += 1 + f.DType.totalFields()
		if f.Shape != nil {
			l.depth = max(l.depth, 2+f.DType.depth())
		}
		if l.depth > MaxRecordDepth {
			return DType{}, recordError("%s: records and subarrays nested %d deep, more than the %d allowed (MaxRecordDepth)", where(), l.depth, MaxRecordDepth)
		}
		if l.total > MaxRecordFields {
			return DType{}, recordError("%s: more than %d fields over all nesting levels (MaxRecordFields)", where(), MaxRecordFields)
		}
		l.fields[i] = f
	}
	switch {
	case itemSize == 0:
		itemSize = end
	case itemSize < end:
		return DType{}, recordError("the fields need %d bytes, more than the item size %d", end, itemSize)
	}
	l.itemSize = itemSize
	l.ordered, l.packed = true, true
	off := 0
	for _, f := range l.fields {
		if f.Offset < off {
			l.ordered = false
		}
		if f.Offset != off {
			l.packed = false
		}
		off = max(off, f.Offset) + f.Size()
	}
	l.packed = l.packed && l.ordered && off == itemSize
	l.key = l.recordKey()
	return DType{Order: '|', Kind: 'V', ItemSize: itemSize, layout: intern(l)}, nil
}

// NewSubarray returns numpy's subarray dtype (base, shape): shape's
// elements of base, one item. An empty shape returns base itself, as
// numpy's np.dtype((base, ())) does. Arrays of a subarray dtype are not
// written by any codec (numpy folds the shape into the array's); the dtype
// exists for a record field whose elements are themselves subarrays. It
// fails with an error matching ErrDType when base is not valid, the item
// size would be out of range or the nesting deeper than MaxRecordDepth, and
// ErrShape when shape has more than MaxDims dimensions, a negative one, or
// an element or byte count that overflows int.
func NewSubarray(base DType, shape []int) (DType, error) {
	if err := base.Validate(); err != nil {
		return DType{}, err
	}
	if len(shape) == 0 {
		return base, nil
	}
	size, err := ByteSize(base, shape)
	if err != nil {
		return DType{}, err
	}
	if size >= maxItemSize/4 {
		return DType{}, recordError("subarray %s of %s: item size %d out of range", FormatShape(shape), base, size)
	}
	l := &layout{itemSize: size, base: base, shape: cloneShape(shape), depth: 1 + base.depth(), total: base.totalFields()}
	if l.depth > MaxRecordDepth {
		return DType{}, recordError("subarray %s: records and subarrays nested %d deep, more than the %d allowed (MaxRecordDepth)", FormatShape(shape), l.depth, MaxRecordDepth)
	}
	var b strings.Builder
	b.WriteString("A")
	writeKeyDType(&b, base)
	writeKeyShape(&b, l.shape)
	l.key = b.String()
	return DType{Order: '|', Kind: 'V', ItemSize: size, layout: intern(l)}, nil
}

// recordKey is the canonical text of a record layout. Nested composite
// dtypes appear by the address of their interned layout, which is unique
// to their content while they live (and they live as long as l), so the
// key grows with this level's fields only.
func (l *layout) recordKey() string {
	var b strings.Builder
	b.WriteString("R")
	b.WriteString(strconv.Itoa(l.itemSize))
	for _, f := range l.fields {
		b.WriteByte(';')
		b.WriteString(strconv.Quote(f.Name))
		b.WriteString(strconv.Quote(f.Title))
		writeKeyDType(&b, f.DType)
		writeKeyShape(&b, f.Shape)
		b.WriteByte('@')
		b.WriteString(strconv.Itoa(f.Offset))
	}
	return b.String()
}

func writeKeyDType(b *strings.Builder, dt DType) {
	if dt.layout != nil {
		fmt.Fprintf(b, "*%p", dt.layout)
		return
	}
	var buf [32]byte
	t, _ := dt.AppendText(buf[:0])
	b.Write(t)
}

func writeKeyShape(b *strings.Builder, shape []int) {
	if shape == nil {
		return
	}
	b.WriteByte('(')
	for _, d := range shape {
		b.WriteString(strconv.Itoa(d))
		b.WriteByte(',')
	}
	b.WriteByte(')')
}

// validateLayout is Validate for composite dtypes: the exported fields
// must still be the ones the layout was made with.
func (dt DType) validateLayout() error {
	if dt.Order != '|' || dt.Kind != 'V' || dt.Unit != "" || dt.ItemSize != dt.layout.itemSize {
		return newError(ErrDType, fmt.Sprintf("a record or subarray dtype must have order '|', kind 'V' and item size %d, has %q, %q, %d",
			dt.layout.itemSize, byte(dt.Order), byte(dt.Kind), dt.ItemSize))
	}
	return nil
}

// Descr returns numpy's dtype.descr of a record dtype: its fields in order,
// with a (”, '|Vn') padding entry for each gap, as
// numpy.lib.format.dtype_to_descr writes it into a .npy header. Like
// numpy's it fails for a record whose fields overlap or are out of offset
// order. For a plain dtype it returns numpy's [(”, typestr)], and for a
// subarray dtype numpy's [(”, '|Vn')]. The error matches ErrDType.
func (dt DType) Descr() ([]DescrItem, error) {
	if !dt.IsRecord() {
		if dt.IsSubarray() {
			return []DescrItem{{DType: DType{Order: '|', Kind: 'V', ItemSize: dt.ItemSize}}}, nil
		}
		return []DescrItem{{DType: dt}}, nil
	}
	l := dt.layout
	if !l.ordered {
		return nil, recordError("dtype.descr is not defined for types with overlapping or out-of-order fields: %s", dt)
	}
	items := make([]DescrItem, 0, len(l.fields)+1)
	off := 0
	pad := func(n int) {
		items = append(items, DescrItem{DType: DType{Order: '|', Kind: 'V', ItemSize: n}})
	}
	for _, f := range l.fields {
		if f.Offset > off {
			pad(f.Offset - off)
		}
		items = append(items, DescrItem{Name: f.Name, Title: f.Title, DType: f.DType, Shape: cloneShape(f.Shape)})
		off = f.Offset + f.Size()
	}
	if l.itemSize > off {
		pad(l.itemSize - off)
	}
	return items, nil
}

// IsPadding reports whether the item is what numpy's descr_to_dtype skips
// as padding: no name, no title and a void dtype without fields.
func (it DescrItem) IsPadding() bool {
	return it.Name == "" && it.Title == "" && it.DType.Kind == 'V' && !it.DType.IsRecord()
}

// RecordFromDescr returns the record dtype a numpy dtype.descr list
// describes, as numpy.lib.format.descr_to_dtype builds it: fields one after
// another, padding entries skipped but advancing the offset, the item size
// the end of the last entry. Each item's Shape, if set, makes a subarray
// field. NewRecord's rules and bounds apply. It fails with an error
// matching ErrDType, naming the entry at fault, for an invalid dtype or an
// out-of-range size or shape in an entry (a negative dimension included),
// and where NewRecord fails.
func RecordFromDescr(items []DescrItem) (DType, error) {
	if len(items) > MaxRecordFields {
		return DType{}, recordError("%d descr entries, more than the %d allowed (MaxRecordFields)", len(items), MaxRecordFields)
	}
	fields := make([]Field, 0, len(items))
	off := 0
	for i, it := range items {
		if err := it.DType.Validate(); err != nil {
			return DType{}, recordError("descr entry %d (%s): %v", i, strconv.Quote(it.Name), err)
		}
		size, err := ByteSize(it.DType, it.Shape)
		if err != nil || size >= maxItemSize/4-off {
			return DType{}, recordError("descr entry %d (%s): size out of range", i, strconv.Quote(it.Name))
		}
		if !it.IsPadding() {
			fields = append(fields, Field{Name: it.Name, Title: it.Title, DType: it.DType, Shape: it.Shape, Offset: off})
		}
		off += size
	}
	return NewRecord(fields, off)
}

// appendPyStr is numpy's str(dtype) of a record: the list form when the
// fields follow each other without gaps, the dict form otherwise.
func (dt DType) appendPyStr(b []byte) []byte {
	l := dt.layout
	if l.shape != nil {
		b = append(b, '(')
		b = l.base.appendPyShort(b)
		b = append(b, ", "...)
		b = appendPyShape(b, l.shape)
		return append(b, ')')
	}
	if l.packed {
		b = append(b, '[')
		for i, f := range l.fields {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPyField(b, f.Name, f.Title, f.DType.appendPyShort, f.Shape)
		}
		return append(b, ']')
	}
	b = append(b, "{'names': ["...)
	for i, f := range l.fields {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendPyRepr(b, f.Name)
	}
	b = append(b, "], 'formats': ["...)
	for i, f := range l.fields {
		if i > 0 {
			b = append(b, ", "...)
		}
		if f.Shape != nil {
			// numpy shows the field's subarray dtype as such.
			b = append(b, '(')
			b = f.DType.appendPyShort(b)
			b = append(b, ", "...)
			b = appendPyShape(b, f.Shape)
			b = append(b, ')')
		} else {
			b = f.DType.appendPyShort(b)
		}
	}
	b = append(b, "], 'offsets': ["...)
	for i, f := range l.fields {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(f.Offset), 10)
	}
	titled := false
	for _, f := range l.fields {
		titled = titled || f.Title != ""
	}
	if titled {
		b = append(b, "], 'titles': ["...)
		for i, f := range l.fields {
			if i > 0 {
				b = append(b, ", "...)
			}
			if f.Title == "" {
				b = append(b, "None"...)
			} else {
				b = appendPyRepr(b, f.Title)
			}
		}
	}
	b = append(b, "], 'itemsize': "...)
	b = strconv.AppendInt(b, int64(l.itemSize), 10)
	return append(b, '}')
}

// appendPyShort is numpy's short construction repr of a dtype inside a
// record's str: '<f4', 'i1', '?', 'S3', '<U2', 'V4', '<M8[ns]', or the
// nested record or subarray.
func (dt DType) appendPyShort(b []byte) []byte {
	if dt.layout != nil {
		return dt.appendPyStr(b)
	}
	order := string(dt.Order)
	if dt.Order == '|' {
		order = ""
	}
	b = append(b, '\'')
	switch dt.Kind {
	case 'b':
		b = append(b, '?')
	case 'S', 'V':
		b = append(b, byte(dt.Kind))
		if dt.ItemSize > 0 {
			b = strconv.AppendInt(b, int64(dt.ItemSize), 10)
		}
	case 'U':
		b = append(append(b, order...), 'U')
		if dt.ItemSize > 0 {
			b = strconv.AppendInt(b, int64(dt.ItemSize/4), 10)
		}
	case 'M', 'm':
		b = append(append(b, order...), byte(dt.Kind), '8')
		if dt.Unit != "" {
			b = append(append(append(b, '['), dt.Unit...), ']')
		}
	default:
		b = append(append(b, order...), byte(dt.Kind))
		b = strconv.AppendInt(b, int64(dt.ItemSize), 10)
	}
	return append(b, '\'')
}

// AppendDescr appends the Python repr of numpy's
// numpy.lib.format.dtype_to_descr(dt), the text an .npy header holds for
// its descr: the quoted typestr of a plain dtype, the descr list of a
// record ([('x', '<f4'), (”, '|V4'), ('y', '<i8')]), a subarray as
// (base, shape). A record numpy cannot describe as a list (overlapping or
// out-of-order fields) gets numpy's dict form instead, which np.load
// refuses; writers check Descr's error first.
func (dt DType) AppendDescr(b []byte) []byte {
	switch {
	case dt.IsPlain():
		b = append(b, '\'')
		b, _ = dt.AppendText(b)
		return append(b, '\'')
	case dt.IsSubarray():
		base, shape, _ := dt.Subarray()
		b = append(b, '(')
		b = base.AppendDescr(b)
		b = append(b, ", "...)
		b = append(b, FormatShape(shape)...)
		return append(b, ')')
	}
	items, err := dt.Descr()
	if err != nil {
		return append(b, dt.String()...)
	}
	b = append(b, '[')
	for i, it := range items {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = appendPyField(b, it.Name, it.Title, it.DType.AppendDescr, it.Shape)
	}
	return append(b, ']')
}

// appendPyField appends one field as numpy's descr and str write it:
// (name, format) or ((title, name), format, shape), format by the given
// appender.
func appendPyField(b []byte, name, title string, format func([]byte) []byte, shape []int) []byte {
	b = append(b, '(')
	if title != "" {
		b = append(b, '(')
		b = appendPyRepr(b, title)
		b = append(b, ", "...)
		b = appendPyRepr(b, name)
		b = append(b, ')')
	} else {
		b = appendPyRepr(b, name)
	}
	b = append(b, ", "...)
	b = format(b)
	if shape != nil {
		b = append(b, ", "...)
		b = appendPyShape(b, shape)
	}
	return append(b, ')')
}

// appendPyShape appends a shape as Python's repr of a tuple.
func appendPyShape(b []byte, shape []int) []byte { return append(b, FormatShape(shape)...) }

// appendPyRepr appends Python's repr of the str s: single quotes unless s
// holds a single quote and no double quote, and escapes for the quote, the
// backslash and characters Python does not print.
func appendPyRepr(b []byte, s string) []byte {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	b = append(b, quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r >= 0x20 && r < 0x7f:
			b = append(b, byte(r))
		case r >= 0x7f && unicode.IsPrint(r): // as Python's str.isprintable, up to Unicode versions
			b = utf8.AppendRune(b, r)
		case r < 0x100:
			b = append(b, fmt.Sprintf(`\x%02x`, r)...)
		case r < 0x10000:
			b = append(b, fmt.Sprintf(`\u%04x`, r)...)
		default:
			b = append(b, fmt.Sprintf(`\U%08x`, r)...)
		}
	}
	return append(b, quote)
}

// swapComposite reverses, in place, the bytes of every scalar of the record
// or subarray items in data whose byte order is not keep; keep 0 swaps
// every scalar that has an order.
func swapComposite(data []byte, dt DType, keep byte) {
	if dt.ItemSize == 0 {
		return
	}
	for off := 0; off+dt.ItemSize <= len(data); off += dt.ItemSize {
		swapItem(data[off:off+dt.ItemSize], dt, keep)
	}
}

// swapItem swaps the scalars of one item of dt (which holds exactly one).
func swapItem(item []byte, dt DType, keep byte) {
	switch l := dt.layout; {
	case l == nil:
		if dt.Order != keep && dt.swapUnit() > 0 {
			SwapBytes(item, dt)
		}
	case l.shape != nil:
		swapElems(item, l.base, keep)
	default:
		for _, f := range l.fields {
			size := f.Size()
			if f.Shape == nil {
				swapItem(item[f.Offset:f.Offset+size], f.DType, keep)
			} else {
				swapElems(item[f.Offset:f.Offset+size], f.DType, keep)
			}
		}
	}
}

// swapElems swaps the scalars of consecutive elements of dt in data.
func swapElems(data []byte, dt DType, keep byte) {
	if dt.layout == nil {
		if dt.Order != keep && dt.swapUnit() > 0 {
			SwapBytes(data, dt)
		}
		return
	}
	swapComposite(data, dt, keep)
}

// withOrderComposite is WithOrder for records and subarrays: numpy's
// newbyteorder, applied to every field at every level.
func (dt DType) withOrderComposite(o byte) DType {
	l := dt.layout
	if l.shape != nil {
		base := l.base.WithOrder(o)
		if base == l.base {
			return dt
		}
		out, err := NewSubarray(base, l.shape)
		if err != nil {
			return dt // unreachable: the same sizes and depth as dt's
		}
		return out
	}
	fields := make([]Field, len(l.fields))
	same := true
	for i, f := range l.fields {
		f.DType = f.DType.WithOrder(o)
		same = same && f.DType == l.fields[i].DType
		fields[i] = f
	}
	if same {
		return dt
	}
	out, err := NewRecord(fields, l.itemSize)
	if err != nil {
		return dt // unreachable: the same names, sizes and depth as dt's
	}
	return out
}
