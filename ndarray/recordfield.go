package ndarray

import (
	"fmt"
	"strconv"
	"unsafe"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// FieldView is one field of every record of a record array: a column with
// its own dtype, strided over the records' bytes without copying them, as
// numpy's a['x'] is a view of a. It aliases the array's Data: writes
// through Set or SetFieldValues change the array, and changes to the
// array's bytes show in the view.
type FieldView struct {
	// Path is the field's name, or the dotted path through nested
	// records ("pos.x") that was asked for.
	Path string
	// DType is the dtype of the view's elements: a plain dtype, or a
	// record for a field that is itself a record. A subarray field's
	// shape is in Shape, never in DType.
	DType DType
	// Shape is the array's shape followed by the field's subarray shape
	// (and, through a subarray of nested records, theirs): the shape of
	// numpy's a[path].
	Shape []int
	// Strides are the bytes from one element to the next along each
	// dimension of Shape, numpy's a[path].strides.
	Strides []int
	// Offset is the byte offset of the first element in the array's Data.
	Offset int

	data     []byte // the array's Data
	records  int    // the array's element count
	recDims  int    // the leading dimensions of Shape that are the array's
	itemSize int    // the array's record size, the stride of records
}

// Field returns the view of the field with the given name (or title) of
// a's records. A path "outer.inner" names a field of a nested record,
// through any subarray of such records; a name that itself holds a dot is
// found first. a's dtype must be a record (ErrType), and the field must
// exist (ErrIndex). It fails with Validate's error (ErrDType, ErrShape or
// ErrDataLength) when a is not valid.
func (a *Array) Field(path string) (*FieldView, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if !a.DType.IsRecord() {
		return nil, newError(ErrType, fmt.Sprintf("%s is not a record dtype: no field %s", shortText(a.DType), strconv.Quote(path)))
	}
	steps, ok := lookupPath(a.DType, path, 0)
	if !ok {
		return nil, newError(ErrIndex, fmt.Sprintf("record dtype %s has no field %s", shortText(a.DType), strconv.Quote(path)))
	}
	v := &FieldView{
		Path:     path,
		DType:    a.DType,
		Shape:    append([]int{}, a.Shape...),
		Strides:  rowMajorStrides(a.Shape, a.DType.ItemSize),
		data:     a.Data,
		records:  a.Len(),
		recDims:  len(a.Shape),
		itemSize: a.DType.ItemSize,
	}
	for _, f := range steps {
		base, dims := flatten(f)
		v.Offset += f.Offset
		v.Shape = append(v.Shape, dims...)
		v.Strides = append(v.Strides, rowMajorStrides(dims, base.ItemSize)...)
		v.DType = base
	}
	return v, nil
}

// lookupPath finds the fields, outermost first, that path names in rec.
// The whole path as one name wins; otherwise each dot, from the left,
// splits a name of a nested record field from the rest.
func lookupPath(rec DType, path string, depth int) ([]Field, bool) {
	if f, ok := rec.FieldByName(path); ok {
		return []Field{f}, true
	}
	if depth >= MaxRecordDepth {
		return nil, false
	}
	for i := 0; i < len(path); i++ {
		if path[i] != '.' {
			continue
		}
		f, ok := rec.FieldByName(path[:i])
		if !ok {
			continue
		}
		if base, _ := flatten(f); base.IsRecord() {
			if rest, ok := lookupPath(base, path[i+1:], depth+1); ok {
				return append([]Field{f}, rest...), true
			}
		}
	}
	return nil, false
}

func rowMajorStrides(shape []int, itemSize int) []int {
	strides := make([]int, len(shape))
	s := itemSize
	for k := len(shape) - 1; k >= 0; k-- {
		strides[k] = s
		s *= shape[k]
	}
	return strides
}

// Item returns the bytes of one element, in the field's byte order,
// aliasing the array's Data. It fails with an error matching ErrIndex when
// the number of coordinates is not the view's number of dimensions or a
// coordinate is out of its dimension's range.
func (v *FieldView) Item(index ...int) ([]byte, error) {
	if len(index) != len(v.Shape) {
		return nil, newError(ErrIndex, fmt.Sprintf("%d coordinates for field %s of shape %s", len(index), strconv.Quote(v.Path), FormatShape(v.Shape)))
	}
	off := v.Offset
	for i, x := range index {
		if x < 0 || x >= v.Shape[i] {
			return nil, newError(ErrIndex, fmt.Sprintf("coordinate %d is %d, dimension is %d", i, x, v.Shape[i]))
		}
		off += x * v.Strides[i]
	}
	size := v.DType.ItemSize
	return v.data[off : off+size : off+size], nil
}

// Array returns a new, contiguous Array of the view's dtype and shape
// holding a copy of its elements, in the field's byte order: numpy's
// np.ascontiguousarray(a[path]). It fails (ErrShape or ErrDType) only for a
// view whose Shape or DType was changed after Field made it.
func (v *FieldView) Array() (*Array, error) {
	size, err := ByteSize(v.DType, v.Shape)
	if err != nil {
		return nil, err
	}
	out := &Array{DType: v.DType, Shape: append([]int{}, v.Shape...), Data: make([]byte, size)}
	v.gather(out.Data, 0, false)
	return out, nil
}

// Set writes the elements of src, in row-major order, into the view's
// elements: numpy's a[path] = src. src must hold as many elements as the
// view (ErrDataLength), of the view's dtype or, for a plain dtype, the same
// dtype in another byte order, which is converted (ErrType otherwise). It
// fails with Validate's error (ErrDType, ErrShape or ErrDataLength) when
// src is not a valid Array. It writes nothing when it fails.
func (v *FieldView) Set(src *Array) error {
	if err := src.Validate(); err != nil {
		return err
	}
	swap := 0
	switch {
	case src.DType == v.DType:
	case v.DType.IsPlain() && src.DType.IsPlain() && src.DType.WithOrder(v.DType.Order) == v.DType:
		swap = v.DType.swapUnit()
	default:
		return newError(ErrType, fmt.Sprintf("cannot set field %s of %s from an array of %s", strconv.Quote(v.Path), shortText(v.DType), shortText(src.DType)))
	}
	if src.Len() != v.len() {
		return newError(ErrDataLength, fmt.Sprintf("field %s has %s (shape %s), got %d (shape %s)",
			strconv.Quote(v.Path), codecerr.Count(v.len(), "element"), FormatShape(v.Shape), src.Len(), FormatShape(src.Shape)))
	}
	v.scatter(src.Data, swap, false)
	return nil
}

// FieldValues returns the values of the field at path (see Array.Field)
// of every record of a as a []T, row-major over the records and then the
// field's subarray, in the machine's byte order: what Values would give of
// the view's Array, in one copy. T must match the field's kind and item
// size (ErrType). It fails as Array.Field does when a is not valid or has
// no such field (ErrType for a dtype that is not a record, ErrIndex for a
// missing field).
func FieldValues[T Element](a *Array, path string) ([]T, error) {
	v, err := a.Field(path)
	if err != nil {
		return nil, err
	}
	swap, isBool, err := fieldType[T](v)
	if err != nil {
		return nil, err
	}
	out := make([]T, v.len())
	if len(out) > 0 {
		v.gather(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(out)*v.DType.ItemSize), swap, isBool)
	}
	return out, nil
}

// SetFieldValues writes values, row-major as FieldValues returns them,
// into the field at path of every record of a, in the field's byte order:
// numpy's a[path] = values. T must match the field's kind and item size
// (ErrType) and len(values) must be the view's Len (ErrDataLength). It
// fails as Array.Field does when a is not valid or has no such field, and
// writes nothing when it fails.
func SetFieldValues[T Element](a *Array, path string, values []T) error {
	v, err := a.Field(path)
	if err != nil {
		return err
	}
	swap, isBool, err := fieldType[T](v)
	if err != nil {
		return err
	}
	if len(values) != v.len() {
		return newError(ErrDataLength, fmt.Sprintf("field %s has %s (shape %s), got %s",
			strconv.Quote(path), codecerr.Count(v.len(), "element"), FormatShape(v.Shape), codecerr.Count(len(values), "value")))
	}
	if len(values) > 0 {
		v.scatter(unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(values)*v.DType.ItemSize), swap, isBool)
	}
	return nil
}

// fieldType checks T against a view's dtype and says how its bytes move.
func fieldType[T Element](v *FieldView) (swap int, isBool bool, err error) {
	want := DTypeOf[T]()
	if !v.DType.IsPlain() || v.DType.Kind != want.Kind || v.DType.ItemSize != want.ItemSize {
		return 0, false, newError(ErrType, fmt.Sprintf("field %s of %s read as %T (%s)", strconv.Quote(v.Path), shortText(v.DType), *new(T), want))
	}
	if v.DType.WithOrder(nativeOrder) != v.DType {
		swap = v.DType.swapUnit()
	}
	return swap, want.Kind == 'b', nil
}

// maxViewRuns bounds the per-record runs a view's copy plans: beyond it
// (a field reached through a large subarray of nested records) the copy
// goes element by element, so that a plan never costs more memory than
// a few records.
const maxViewRuns = 64

// blocks returns the offsets, within a record, of the view's runs of
// contiguous bytes, and their size; ok is false if there are more than
// maxViewRuns.
func (v *FieldView) blocks() (offs []int, size int, ok bool) {
	dims, strides := v.Shape[v.recDims:], v.Strides[v.recDims:]
	size = v.DType.ItemSize
	// Fold the innermost dimensions while they are contiguous.
	k := len(dims)
	for k > 0 && strides[k-1] == size {
		size *= dims[k-1]
		k--
	}
	dims, strides = dims[:k], strides[:k]
	n, err := NumElements(dims)
	if err != nil || n > maxViewRuns {
		return nil, 0, false
	}
	offs = make([]int, 0, n)
	idx := make([]int, len(dims))
	for range n {
		off := v.Offset
		for i, x := range idx {
			off += x * strides[i]
		}
		offs = append(offs, off)
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < dims[i] {
				break
			}
			idx[i] = 0
		}
	}
	return offs, size, true
}

// gather copies the view's elements into the contiguous dst; scatter
// copies them back. swap is the width of the scalars to reverse on the
// way (0 for none), isBool makes each byte 0 or 1.
func (v *FieldView) gather(dst []byte, swap int, isBool bool) { v.transfer(dst, swap, isBool, false) }

func (v *FieldView) scatter(src []byte, swap int, isBool bool) { v.transfer(src, swap, isBool, true) }

func (v *FieldView) transfer(flat []byte, swap int, isBool, toView bool) {
	if v.records == 0 || v.DType.ItemSize == 0 || len(flat) == 0 {
		return
	}
	offs, size, ok := v.blocks()
	if !ok {
		v.transferEach(flat, swap, isBool, toView)
		return
	}
	runs := make([]run, len(offs))
	for k, off := range offs {
		runs[k] = run{src: off, dst: k * size, size: size, swap: swap, isBool: isBool}
		if toView {
			runs[k].src, runs[k].dst = runs[k].dst, runs[k].src
		}
	}
	per := len(offs) * size
	if toView {
		newPlan(runs, per, v.itemSize).apply(v.data, flat, v.records)
	} else {
		newPlan(runs, v.itemSize, per).apply(flat, v.data, v.records)
	}
}

// transferEach is transfer one element at a time, walking the whole shape.
func (v *FieldView) transferEach(flat []byte, swap int, isBool, toView bool) {
	size := v.DType.ItemSize
	idx := make([]int, len(v.Shape))
	off := v.Offset
	for pos := 0; pos+size <= len(flat); pos += size {
		elem, f := v.data[off:off+size], flat[pos:pos+size]
		if toView {
			moveElem(elem, f, swap, isBool)
		} else {
			moveElem(f, elem, swap, isBool)
		}
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			off += v.Strides[i]
			if idx[i] < v.Shape[i] {
				break
			}
			off -= idx[i] * v.Strides[i]
			idx[i] = 0
		}
	}
}

func moveElem(dst, src []byte, swap int, isBool bool) {
	if isBool {
		for i, c := range src {
			dst[i] = b2u(c != 0)
		}
		return
	}
	copy(dst, src)
	if swap > 1 {
		reverseUnits(dst, swap)
	}
}

// len is the number of elements of the view: the records times the
// elements of the field's subarray.
func (v *FieldView) len() int {
	n, _ := NumElements(v.Shape)
	return n
}
