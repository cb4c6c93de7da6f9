package ndarray

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"
)

// goRecord is the layout of a Go struct type as records see it.
type goRecord struct {
	typ    reflect.Type
	size   int
	fields []goField
	// exact: every field of the struct is a record field and none is a
	// bool, so that any bytes, in the machine's order, at the field
	// offsets make a valid T and a []T may alias a record array's data.
	exact bool
}

// goField is one record field of a Go struct.
type goField struct {
	name   string
	typ    reflect.Type // as declared, for messages
	offset int
	dims   []int        // of nested Go arrays, nil for a scalar or struct
	elem   reflect.Type // the type under the arrays
	scalar DType        // elem's dtype, in the machine's order, if elem is not a struct
	rec    *goRecord    // elem's layout if elem is a struct
}

func (f *goField) count() int {
	n := 1
	for _, d := range f.dims {
		n *= d
	}
	return n
}

// goRecordOf describes the struct type t, or returns the ErrType error
// that lists every field that cannot be a record field.
func goRecordOf(t reflect.Type) (*goRecord, error) {
	if t.Kind() != reflect.Struct {
		return nil, newError(ErrType, fmt.Sprintf("records need a Go struct type, got %s", t))
	}
	var problems []string
	g := analyzeStruct(t, "", &problems)
	if len(problems) > 0 {
		return nil, newError(ErrType, fmt.Sprintf("Go type %s has no record dtype: %s", t, joinProblems(problems)))
	}
	return g, nil
}

func analyzeStruct(t reflect.Type, prefix string, problems *[]string) *goRecord {
	g := &goRecord{typ: t, size: int(t.Size()), exact: true}
	seen := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		name, skip := fieldName(sf)
		if skip {
			g.exact = false
			continue
		}
		path := prefix + name
		if seen[name] {
			*problems = append(*problems, fmt.Sprintf("field %s: name used by two fields", strconv.Quote(path)))
			continue
		}
		seen[name] = true
		f := goField{name: name, typ: sf.Type, offset: int(sf.Offset)}
		elem := sf.Type
		for elem.Kind() == reflect.Array {
			f.dims = append(f.dims, elem.Len())
			elem = elem.Elem()
		}
		f.elem = elem
		if elem.Kind() == reflect.Struct {
			f.rec = analyzeStruct(elem, path+".", problems)
			g.exact = g.exact && f.rec.exact
		} else {
			dt, ok := scalarDType(elem.Kind())
			if !ok {
				why := "has no dtype (skip it with `npy:\"-\"`)"
				switch elem.Kind() {
				case reflect.Int, reflect.Uint, reflect.Uintptr:
					why = "has a machine-dependent size; use a sized type such as int64"
				}
				*problems = append(*problems, fmt.Sprintf("field %s: Go %s %s", strconv.Quote(path), sf.Type, why))
				continue
			}
			f.scalar = dt
			if dt.Kind == 'b' {
				g.exact = false // a Go bool must be 0 or 1; a file's byte may be anything
			}
		}
		g.fields = append(g.fields, f)
	}
	return g
}

// fieldName returns the record field name of a struct field, or skip.
func fieldName(sf reflect.StructField) (name string, skip bool) {
	if !sf.IsExported() {
		return "", true
	}
	tag, _ := sf.Tag.Lookup("npy")
	name, _, _ = strings.Cut(tag, ",")
	if tag == "-" {
		return "", true
	}
	if name == "" {
		name = sf.Name
	}
	return name, false
}

func scalarDType(k reflect.Kind) (DType, bool) {
	switch k {
	case reflect.Bool:
		return DTypeOf[bool](), true
	case reflect.Int8:
		return DTypeOf[int8](), true
	case reflect.Int16:
		return DTypeOf[int16](), true
	case reflect.Int32:
		return DTypeOf[int32](), true
	case reflect.Int64:
		return DTypeOf[int64](), true
	case reflect.Uint8:
		return DTypeOf[uint8](), true
	case reflect.Uint16:
		return DTypeOf[uint16](), true
	case reflect.Uint32:
		return DTypeOf[uint32](), true
	case reflect.Uint64:
		return DTypeOf[uint64](), true
	case reflect.Float32:
		return DTypeOf[float32](), true
	case reflect.Float64:
		return DTypeOf[float64](), true
	case reflect.Complex64:
		return DTypeOf[complex64](), true
	case reflect.Complex128:
		return DTypeOf[complex128](), true
	}
	return DType{}, false
}

// dtype builds the record dtype of the Go layout.
func (g *goRecord) dtype() (DType, error) {
	fields := make([]Field, len(g.fields))
	for i, f := range g.fields {
		dt := f.scalar
		if f.rec != nil {
			var err error
			if dt, err = f.rec.dtype(); err != nil {
				return DType{}, err
			}
		}
		fields[i] = Field{Name: f.name, DType: dt, Offset: f.offset}
		if f.dims != nil {
			fields[i].Shape = append([]int{}, f.dims...)
		}
	}
	return NewRecord(fields, g.size)
}

// RecordDTypeOf returns the record dtype whose records are Go values of
// the struct type T. The struct's fields describe the record's:
//
//   - An exported field is a record field named by its `npy:"name"` tag, or
//     by its Go name when untagged. `npy:"-"` skips a field; `npy:"-,"`
//     names it "-". Unexported fields are skipped. An embedded struct is a
//     nested record named by its type, as any other field (its fields are
//     not promoted).
//   - bool, int8 ... int64, uint8 ... uint64, float32, float64, complex64 and
//     complex128 (and named types of them) are the scalar fields of the
//     dtypes DTypeOf gives. int, uint and uintptr are refused: their size
//     depends on the machine, and a file's does not.
//   - A struct field is a nested record.
//   - An array field [N]E is a subarray field of shape (N,), [N][M]E one of
//     shape (N, M), and so on, of scalars or of nested records. An [N]byte
//     also matches a numpy "S<N>" or plain "V<N>" field, byte for byte.
//   - Any other exported field type (string, slice, pointer, map, ...) is an
//     error: there is no dtype for it. Skip it with `npy:"-"`.
//
// The byte order is the machine's, the offsets and item size are those of
// the Go struct (unsafe.Offsetof, unsafe.Sizeof): the bytes of a []T are
// its records. Where Go pads a struct, it pads as numpy's align=True does,
// so RecordDTypeOf of a struct equals numpy's np.dtype(..., align=True) of
// the same fields (numpy's aligned flag aside, which is not part of a
// dtype's layout), except that Go pads a struct that ends in a field of
// no bytes ([0]int32, struct{}) and numpy does not.
//
// It fails (ErrType) listing every field of T that has no dtype, or with
// NewRecord's error (ErrDType) when the layout breaks its bounds. A T that
// is not a struct type fails with ErrType too.
func RecordDTypeOf[T any]() (DType, error) {
	g, err := goRecordOf(reflect.TypeFor[T]())
	if err != nil {
		return DType{}, err
	}
	return g.dtype()
}

// matcher builds the plan that moves record fields between a Go layout
// and a record dtype, and collects every mismatch on the way.
type matcher struct {
	write     bool // Go -> dtype: every dtype field needs a Go field
	where     string
	runs      []run
	problems  []string
	reporting bool // false while repeating a nested record already checked
}

func (m *matcher) problem(format string, args ...any) {
	if m.reporting {
		m.problems = append(m.problems, fmt.Sprintf(format, args...))
	}
}

// record matches the Go fields of g, at dstBase in a Go value, with the
// fields of the record dtype rec, at srcBase in a record. Offsets are
// reported from the top level record, so that they can be found in a hex
// dump of either.
func (m *matcher) record(g *goRecord, rec DType, goBase, dtBase int, prefix string) {
	used := make(map[int]bool, len(g.fields))
	fields := rec.layout.fields
	for i := range g.fields {
		gf := &g.fields[i]
		path := prefix + gf.name
		idx, ok := rec.layout.byName[gf.name]
		if !ok {
			m.problem("field %s missing in the %s", strconv.Quote(path), m.where)
			continue
		}
		used[idx] = true
		m.field(gf, fields[idx], goBase, dtBase, path)
	}
	if m.write {
		for i, f := range fields {
			if !used[i] {
				m.problem("field %s of the dtype has no Go field in %s", strconv.Quote(prefix+f.Name), g.typ)
			}
		}
	}
}

// flatten returns a field's element dtype and its full shape, subarray
// dtypes unfolded: ('j', ('<i4', (2,)), (3,)) is <i4 of shape (3, 2).
func flatten(f Field) (DType, []int) {
	dims := append([]int{}, f.Shape...)
	dt := f.DType
	for dt.IsSubarray() {
		dims = append(dims, dt.layout.shape...)
		dt = dt.layout.base
	}
	return dt, dims
}

func (m *matcher) field(gf *goField, f Field, goBase, dtBase int, path string) {
	base, dims := flatten(f)
	goOff, dtOff := goBase+gf.offset, dtBase+f.Offset
	mismatch := func() {
		m.problem("field %s: Go %s at offset %d, %s %s at offset %d", strconv.Quote(path), gf.typ, goOff, m.where, fieldText(f), dtOff)
	}
	switch {
	case gf.rec != nil:
		if !base.IsRecord() || !slices.Equal(gf.dims, dims) {
			mismatch()
			return
		}
		if gf.count() == 0 {
			// No element to move, but the fields must still match.
			runs := m.runs
			m.record(gf.rec, base, goOff, dtOff, path+".")
			m.runs = runs
			return
		}
		reporting := m.reporting
		for e := range gf.count() {
			m.record(gf.rec, base, goOff+e*gf.rec.size, dtOff+e*base.ItemSize, path+".")
			m.reporting = false // one report per field, not per element
		}
		m.reporting = reporting
	case !base.IsPlain():
		mismatch()
	case gf.elem.Kind() == reflect.Uint8 && (base.Kind == 'S' || base.Kind == 'V') &&
		len(gf.dims) == len(dims)+1 && slices.Equal(gf.dims[:len(dims)], dims) && gf.dims[len(dims)] == base.ItemSize:
		// [N]byte reads numpy's S<N> and V<N> as the bytes they are.
		m.add(run{src: dtOff, dst: goOff, size: gf.count()})
	case base.Kind != gf.scalar.Kind || base.ItemSize != gf.scalar.ItemSize || !slices.Equal(gf.dims, dims):
		mismatch()
	default:
		r := run{src: dtOff, dst: goOff, size: gf.count() * base.ItemSize, isBool: base.Kind == 'b'}
		if base.Order != gf.scalar.Order {
			r.swap = base.swapUnit()
		}
		m.add(r)
	}
}

func (m *matcher) add(r run) {
	if r.size > 0 {
		m.runs = append(m.runs, r)
	}
}

// fieldText shows a field's type: its typestr (<f8), a nested record's
// str, a subarray field as numpy's ('<f4', (3,)).
func fieldText(f Field) string {
	if f.Shape == nil {
		return shortText(f.DType)
	}
	s := "(" + string(f.DType.appendPyShort(nil)) + ", " + FormatShape(f.Shape) + ")"
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// shortText is dt.String(), cut short: a hostile file's dtype can be
// megabytes long, and an error message should not be.
func shortText(dt DType) string {
	s := dt.String()
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// joinProblems joins a list of problems, the first 20 of them: one
// mismatch per field of a huge record would make an error of megabytes.
func joinProblems(p []string) string {
	const show = 20
	if len(p) > show {
		return strings.Join(p[:show], "; ") + fmt.Sprintf("; and %d more", len(p)-show)
	}
	return strings.Join(p, "; ")
}

// recordPlan matches T with the record dtype dt: the plan that moves the
// fields (from dt to T, or from T to dt when write), or the ErrType error
// listing every mismatch.
func recordPlan[T any](dt DType, write bool) (*goRecord, *plan, error) {
	t := reflect.TypeFor[T]()
	g, err := goRecordOf(t)
	if err != nil {
		return nil, nil, err
	}
	if !dt.IsRecord() {
		return nil, nil, newError(ErrType, fmt.Sprintf("%s is not a record dtype, it cannot hold Go %s", shortText(dt), t))
	}
	m := &matcher{write: write, where: "file", reporting: true}
	if write {
		m.where = "dtype"
	}
	m.record(g, dt, 0, 0, "")
	if len(m.problems) > 0 {
		verb := "read as"
		if write {
			verb = "written from"
		}
		return nil, nil, newError(ErrType, fmt.Sprintf("records %s %s Go %s: %s", shortText(dt), verb, t, joinProblems(m.problems)))
	}
	runs := m.runs
	if write {
		for i := range runs {
			runs[i].src, runs[i].dst = runs[i].dst, runs[i].src
		}
		return g, newPlan(runs, g.size, dt.ItemSize), nil
	}
	return g, newPlan(runs, dt.ItemSize, g.size), nil
}

// RecordsOf returns the records of a as a []T in row-major order, T a
// struct type (see RecordDTypeOf for the fields it may have). Every field
// of T must be a field of a's record dtype with the same name, kind, item
// size and shape; the dtype may have more fields (they are not read), and
// their offsets, order and byte order may differ from T's. Otherwise
// RecordsOf fails with one ErrType error listing every mismatch, such as
//
//	field "x": Go float32 at offset 0, file <f8 at offset 0; field "q" missing in the file
//
// When the dtype's layout is T's (the offsets of T's fields, T's size, the
// machine's byte order), T has no bool and no skipped field, and a.Data is
// aligned for T, the result aliases a.Data: no copy is made, and writes
// through either are seen by both. Otherwise the result is a new slice, the
// fields copied (and byte-swapped where needed) by a plan made once per
// call; fields of T that are not record fields are left zero.
//
// It fails with ErrType also when T has no record dtype (see RecordDTypeOf)
// or a's dtype is not a record, and with Validate's error (ErrDType,
// ErrShape or ErrDataLength) when a is not valid.
func RecordsOf[T any](a *Array) ([]T, error) {
	g, p, err := recordPlan[T](a.DType, false)
	if err != nil {
		return nil, err
	}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	n := a.Len()
	if n == 0 || g.size == 0 {
		return make([]T, n), nil
	}
	if p.identity && g.exact && uintptr(unsafe.Pointer(&a.Data[0]))%unsafe.Alignof(*new(T)) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&a.Data[0])), n), nil
	}
	out := make([]T, n)
	copyRecords(g, p, out, a.Data, n)
	return out, nil
}

// CopyRecords copies records of a into dst, as RecordsOf reads them, and
// returns how many it copied: the lesser of len(dst) and a's record count,
// as copy() does. It lets a caller reuse one []T, and never aliases.
// Fields of T that are not record fields are left as they were in dst. It
// fails as RecordsOf does, and then copies nothing.
func CopyRecords[T any](dst []T, a *Array) (int, error) {
	g, p, err := recordPlan[T](a.DType, false)
	if err != nil {
		return 0, err
	}
	if err := a.Validate(); err != nil {
		return 0, err
	}
	n := min(len(dst), a.Len())
	if n > 0 && g.size > 0 {
		copyRecords(g, p, dst, a.Data, n)
	}
	return n, nil
}

// copyRecords moves n records from src into dst by the plan.
func copyRecords[T any](g *goRecord, p *plan, dst []T, src []byte, n int) {
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), n*g.size)
	if p.identity && g.exact {
		copy(raw, src[:n*g.size])
		return
	}
	// Only the bytes of record fields are written: T's other fields, which
	// may hold pointers, are never touched through raw.
	p.apply(raw, src, n)
}

// FromRecords returns a new Array of T's record dtype (RecordDTypeOf)
// holding a copy of records, as FromSlice does for scalars: 1-d of
// len(records) with no shape, otherwise of the given shape, whose element
// count must be len(records). The bytes between fields (Go's padding) are
// zero, as numpy's are in np.zeros(n, np.dtype(..., align=True)). It fails
// as RecordDTypeOf does when T has no record dtype (ErrType, or ErrDType),
// with ErrShape when shape has more than MaxDims dimensions, a negative
// one, or an element or byte count that overflows int, or with
// ErrDataLength when its element count is not len(records).
func FromRecords[T any](records []T, shape ...int) (*Array, error) {
	dt, err := RecordDTypeOf[T]()
	if err != nil {
		return nil, err
	}
	return FromRecordsAs(dt, records, shape...)
}

// FromRecordsAs is FromRecords into the record dtype dt, which may lay the
// fields out otherwise than T does: packed as numpy's default, in another
// order or byte order. Every field of dt must have a field of T and every
// field of T a field of dt, with the same kind, item size and shape
// (ErrType lists the mismatches otherwise). Bytes of no field are zero. It
// fails with ErrType also when dt is not a record dtype or T has no record
// dtype, with ErrShape when shape has more than MaxDims dimensions, a
// negative one, or an element or byte count that overflows int, or with
// ErrDataLength when its element count is not len(records).
func FromRecordsAs[T any](dt DType, records []T, shape ...int) (*Array, error) {
	g, p, err := recordPlan[T](dt, true)
	if err != nil {
		return nil, err
	}
	if len(shape) == 0 {
		shape = []int{len(records)}
	}
	n, err := NumElements(shape)
	if err != nil {
		return nil, err
	}
	if n != len(records) {
		return nil, newError(ErrDataLength, fmt.Sprintf("shape %s holds %d records, got %d", FormatShape(shape), n, len(records)))
	}
	size, err := ByteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	a := &Array{DType: dt, Shape: append([]int{}, shape...), Data: make([]byte, size)}
	if n > 0 && g.size > 0 && dt.ItemSize > 0 {
		raw := unsafe.Slice((*byte)(unsafe.Pointer(&records[0])), n*g.size)
		if p.identity && p.whole && g.exact {
			copy(a.Data, raw)
		} else {
			p.apply(a.Data, raw, n)
		}
	}
	return a, nil
}
