package pickle

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// fnKind is what an allowed global is; nothing is ever called, each kind
// is a recipe for the value Python would make.
type fnKind int

const (
	fnReconstruct   fnKind = iota + 1 // numpy's _reconstruct(ndarray, shape, typecode)
	fnReconstructor                   // copyreg._reconstructor(ndarray, ndarray, state)
	clsNdarray
	clsObject // only as copyreg._reconstructor's base
	clsDtype
	fnScalar     // numpy.core.multiarray.scalar(dtype, bytes)
	fnFromBuffer // numpy.core.numeric._frombuffer(buf, dtype, shape, order)
	fnEncode     // _codecs.encode(str, 'latin1'): protocol 2's bytes
	fnBytes
	fnByteArray
	fnComplex
	fnSet
	fnFrozenSet
)

// globals are the names a pickle may use: the numpy globals of object
// arrays under numpy 1 and 2 (and numpy 0.x's core._internal), and the
// builtins through which protocol 2 pickles bytes and complex numbers. It
// is never changed.
var globals = map[string]fnKind{
	"numpy.core.multiarray._reconstruct":  fnReconstruct,
	"numpy._core.multiarray._reconstruct": fnReconstruct,
	"numpy.core._internal._reconstruct":   fnReconstruct,
	"copyreg._reconstructor":              fnReconstructor,
	"copy_reg._reconstructor":             fnReconstructor,
	"numpy.ndarray":                       clsNdarray,
	"numpy.dtype":                         clsDtype,
	"builtins.object":                     clsObject,
	"__builtin__.object":                  clsObject,
	"numpy.core.multiarray.scalar":        fnScalar,
	"numpy._core.multiarray.scalar":       fnScalar,
	"numpy.core.numeric._frombuffer":      fnFromBuffer,
	"numpy._core.numeric._frombuffer":     fnFromBuffer,
	"_codecs.encode":                      fnEncode,
	"builtins.bytes":                      fnBytes,
	"__builtin__.bytes":                   fnBytes,
	"builtins.bytearray":                  fnByteArray,
	"__builtin__.bytearray":               fnByteArray,
	"builtins.complex":                    fnComplex,
	"__builtin__.complex":                 fnComplex,
	"builtins.set":                        fnSet,
	"__builtin__.set":                     fnSet,
	"builtins.frozenset":                  fnFrozenSet,
	"__builtin__.frozenset":               fnFrozenSet,
}

func (d *decoder) global(module, name string) error {
	full := module + "." + name
	fn, ok := globals[full]
	if !ok {
		hint := ""
		if module == "datetime" || strings.HasPrefix(module, "pandas") || module == "decimal" {
			hint = " (" + module + " objects are not among the types read)"
		}
		return d.fail(ErrNotData, "global %s is not data that is read%s; nothing was run", quoteName(full), hint)
	}
	if err := d.charge(64); err != nil {
		return err
	}
	d.push(&globalObj{module: module, name: name, fn: fn})
	return nil
}

func quoteName(s string) string {
	if len(s) > 100 {
		s = s[:100] + "..."
	}
	return strconv.QuoteToASCII(s)
}

// arrayObj is a numpy.ndarray made by _reconstruct, waiting for BUILD to
// give it its state, as Python's is.
type arrayObj struct {
	node
	built  bool
	value  any      // *ndarray.Array of a numeric array
	shape  []int    // of an object array
	values *listObj // of an object array, row-major
	count  int      // its elements: the list's items when it was built
}

// dtypeObj is a numpy.dtype made by numpy.dtype(typecode, align, copy),
// waiting for BUILD to give it its byte order and sizes.
type dtypeObj struct {
	at     int
	code   string
	built  bool
	object bool
	dt     ndarray.DType
}

func (d *decoder) reduce(f, args any) (any, error) {
	g, ok := f.(*globalObj)
	if !ok {
		return nil, d.fail(ErrNotData, "REDUCE calls %s, which is not a global that is read", typeName(f))
	}
	t, ok := args.(*tupleObj)
	if !ok {
		return nil, d.fail(ErrMalformed, "REDUCE of %s.%s with %s, not a tuple of arguments", g.module, g.name, typeName(args))
	}
	switch g.fn {
	case fnReconstruct, fnReconstructor, clsDtype, fnScalar, fnFromBuffer:
		return d.reduceNumpy(g, t.items)
	case fnEncode, fnBytes, fnByteArray, fnComplex, fnSet, fnFrozenSet:
		return d.reduceBuiltin(g, t.items)
	}
	return nil, d.fail(ErrNotData, "REDUCE calls %s.%s, which only appears as an argument", g.module, g.name)
}

// badArgs is the error for g called with arguments a where it wants want.
func (d *decoder) badArgs(g *globalObj, a []any, want string) error {
	types := make([]string, len(a))
	for i, v := range a {
		types[i] = typeName(v)
	}
	return d.fail(ErrMalformed, "%s.%s(%s): want %s", g.module, g.name, strings.Join(types, ", "), want)
}

// reduceNumpy reads numpy's constructors: an array, a dtype, a scalar,
// frombuffer.
func (d *decoder) reduceNumpy(g *globalObj, a []any) (any, error) {
	switch g.fn {
	case fnReconstruct:
		if len(a) != 3 || !isGlobal(a[0], clsNdarray) {
			return nil, d.badArgs(g, a, "(numpy.ndarray, shape, typecode)")
		}
		return d.newArray()
	case fnReconstructor:
		if len(a) != 3 || !isGlobal(a[0], clsNdarray) || !(isGlobal(a[1], clsNdarray) || isGlobal(a[1], clsObject)) {
			return nil, d.badArgs(g, a, "(numpy.ndarray, numpy.ndarray, state)")
		}
		return d.newArray()
	case clsDtype:
		if len(a) != 3 {
			return nil, d.badArgs(g, a, "(typecode, align, copy)")
		}
		code, ok := asText(a[0])
		if !ok {
			return nil, d.badArgs(g, a, "a str typecode")
		}
		if err := d.charge(64); err != nil {
			return nil, err
		}
		return &dtypeObj{at: d.opStart, code: code}, nil
	case fnScalar:
		if len(a) != 2 {
			if len(a) == 1 {
				return nil, d.fail(ErrNotData, "numpy scalar of one argument (an object scalar without a value) is not read")
			}
			return nil, d.badArgs(g, a, "(dtype, data)")
		}
		dt, ok := a[0].(*dtypeObj)
		if !ok || !dt.built {
			return nil, d.badArgs(g, a, "a numpy.dtype and its bytes")
		}
		if dt.object {
			return a[1], nil
		}
		data, ok := d.asBytes(a[1], true)
		if !ok || len(data) != dt.dt.ItemSize {
			return nil, d.badArgs(g, a, fmt.Sprintf("the %d bytes of one %s", dt.dt.ItemSize, dt.dt))
		}
		if err := d.charge(128); err != nil {
			return nil, err
		}
		return &ndarray.Array{DType: dt.dt, Shape: []int{}, Data: data}, nil
	case fnFromBuffer:
		if len(a) != 4 {
			return nil, d.badArgs(g, a, "(buffer, dtype, shape, order)")
		}
		buf, ok1 := d.asBytes(a[0], true)
		dt, ok2 := a[1].(*dtypeObj)
		order, ok3 := asText(a[3])
		if !ok1 || !ok2 || !dt.built || dt.object || !ok3 || (order != "C" && order != "F") {
			return nil, d.badArgs(g, a, "(bytes, a numeric numpy.dtype, shape, 'C' or 'F')")
		}
		shape, err := d.shape(a[2])
		if err != nil {
			return nil, err
		}
		return d.numeric(dt.dt, shape, order == "F", buf)
	}
	return nil, d.fail(ErrNotData, "REDUCE calls %s.%s, which only appears as an argument", g.module, g.name)
}

// reduceBuiltin reads the builtins np.save's pickles call: codecs.encode,
// bytes, bytearray, complex, set and frozenset.
func (d *decoder) reduceBuiltin(g *globalObj, a []any) (any, error) {
	switch g.fn {
	case fnEncode:
		if len(a) != 2 {
			return nil, d.badArgs(g, a, "(str, 'latin1')")
		}
		s, ok1 := a[0].(string)
		enc, ok2 := asText(a[1])
		if !ok1 || !ok2 || (enc != "latin1" && enc != "latin-1") {
			return nil, d.badArgs(g, a, "(str, 'latin1')")
		}
		return d.latin1(s)
	case fnBytes:
		if len(a) != 0 {
			return nil, d.badArgs(g, a, "no arguments (protocol 2's b'')")
		}
		return []byte{}, nil
	case fnByteArray:
		switch {
		case len(a) == 0:
			return []byte{}, nil
		case len(a) == 1:
			if b, ok := d.asBytes(a[0], false); ok {
				if err := d.charge(int64(len(b))); err != nil {
					return nil, err
				}
				return append([]byte{}, b...), nil
			}
		case len(a) == 2:
			s, ok1 := a[0].(string)
			enc, ok2 := asText(a[1])
			if ok1 && ok2 && (enc == "latin1" || enc == "latin-1") {
				return d.latin1(s)
			}
		}
		return nil, d.badArgs(g, a, "(), (bytes) or (str, 'latin-1')")
	case fnComplex:
		if len(a) != 2 {
			return nil, d.badArgs(g, a, "(real, imag)")
		}
		re, ok1 := asFloat(a[0])
		im, ok2 := asFloat(a[1])
		if !ok1 || !ok2 {
			return nil, d.badArgs(g, a, "(real, imag) numbers")
		}
		return complex(re, im), nil
	case fnSet, fnFrozenSet:
		s := &setObj{node: node{at: d.opStart}, frozen: g.fn == fnFrozenSet}
		switch {
		case len(a) == 0:
		case len(a) == 1:
			l, ok := a[0].(*listObj)
			if !ok {
				return nil, d.badArgs(g, a, "a list of elements")
			}
			s.items = append([]any{}, l.all()...)
			if err := d.hashables(s.items, "a set element"); err != nil {
				return nil, err
			}
		default:
			return nil, d.badArgs(g, a, "a list of elements")
		}
		if err := d.charge(64 + 16*int64(len(s.items))); err != nil {
			return nil, err
		}
		return s, nil
	}
	return nil, d.fail(ErrNotData, "REDUCE calls %s.%s, which only appears as an argument", g.module, g.name)
}

func (d *decoder) newArray() (any, error) {
	if err := d.charge(128); err != nil {
		return nil, err
	}
	return &arrayObj{node: node{at: d.opStart}}, nil
}

func (d *decoder) latin1(s string) ([]byte, error) {
	if err := d.charge(int64(len(s)) + 32); err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, d.fail(ErrMalformed, "_codecs.encode of a str with U+%04X, which latin-1 cannot hold", r)
		}
		b = append(b, byte(r))
	}
	return b, nil
}

func isGlobal(v any, fn fnKind) bool {
	g, ok := v.(*globalObj)
	return ok && g.fn == fn
}

func asText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case py2str:
		return string(v), true
	case []byte:
		return string(v), true
	}
	return "", false
}

// asBytes returns the bytes of a bytes value, or of a Python 2 str (raw, as
// np.load with encoding='latin1' takes it); with latin1Str, also of a str
// holding bytes as latin-1 characters.
func (d *decoder) asBytes(v any, latin1Str bool) ([]byte, bool) {
	switch v := v.(type) {
	case []byte:
		return v, true
	case py2str:
		if d.charge(int64(len(v))) != nil {
			return nil, false
		}
		return []byte(v), true
	case string:
		if !latin1Str || d.charge(int64(len(v))) != nil {
			return nil, false
		}
		b := make([]byte, 0, len(v))
		for _, r := range v {
			if r > 0xff {
				return nil, false
			}
			b = append(b, byte(r))
		}
		return b, true
	}
	return nil, false
}

func asFloat(v any) (float64, bool) {
	switch v := v.(type) {
	case float64:
		return v, true
	case int64:
		return float64(v), true
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f, true
	}
	return 0, false
}

// shape reads a tuple of non-negative ints.
func (d *decoder) shape(v any) ([]int, error) {
	t, ok := v.(*tupleObj)
	if !ok {
		return nil, d.fail(ErrMalformed, "an array's shape is %s, not a tuple", typeName(v))
	}
	shape := make([]int, len(t.items))
	for i, x := range t.items {
		n, ok := x.(int64)
		if !ok || n < 0 || int64(int(n)) != n {
			return nil, d.fail(ErrMalformed, "dimension %d of an array's shape is %s, not a non-negative int", i, typeName(x))
		}
		shape[i] = int(n)
	}
	if _, err := ndarray.NumElements(shape); err != nil {
		return nil, d.fail(ErrMalformed, "an array's shape %s: %v", ndarray.FormatShape(shape), err)
	}
	return shape, nil
}

// numeric makes a numeric array of its data as pickled, column-major when
// fortran.
func (d *decoder) numeric(dt ndarray.DType, shape []int, fortran bool, data []byte) (*ndarray.Array, error) {
	n, err := ndarray.ByteSize(dt, shape)
	if err != nil {
		return nil, d.fail(ErrMalformed, "an array of shape %s and dtype %s: %v", ndarray.FormatShape(shape), dt, err)
	}
	if n != len(data) {
		return nil, d.fail(ErrMalformed, "an array of shape %s and dtype %s needs %d bytes; its data holds %d",
			ndarray.FormatShape(shape), dt, n, len(data))
	}
	if err := d.charge(128 + int64(n)); err != nil {
		return nil, err
	}
	if fortran && len(shape) > 1 {
		a, err := ndarray.FromColumnMajor(dt, shape, data)
		if err != nil {
			return nil, d.fail(ErrMalformed, "%v", err)
		}
		return a, nil
	}
	return &ndarray.Array{DType: dt, Shape: shape, Data: data}, nil
}

func (d *decoder) build(obj, state any) error {
	switch o := obj.(type) {
	case *arrayObj:
		if o.built {
			return d.fail(ErrMalformed, "BUILD of a numpy.ndarray that already has its state")
		}
		return d.buildArray(o, state)
	case *dtypeObj:
		if o.built {
			return d.fail(ErrMalformed, "BUILD of a numpy.dtype that already has its state")
		}
		return d.buildDType(o, state)
	}
	return d.fail(ErrNotData, "BUILD of %s, which is never given a state", typeName(obj))
}

// buildArray is ndarray.__setstate__: (version, shape, dtype, fortran,
// data), the version optional.
func (d *decoder) buildArray(o *arrayObj, state any) error {
	t, ok := state.(*tupleObj)
	if !ok {
		return d.fail(ErrMalformed, "an ndarray's state is %s, not a tuple", typeName(state))
	}
	s := t.items
	if len(s) == 5 {
		s = s[1:]
	}
	if len(s) != 4 {
		return d.fail(ErrMalformed, "an ndarray's state has %s, not (version, shape, dtype, fortran, data)", codecerr.Count(len(t.items), "item"))
	}
	shape, err := d.shape(s[0])
	if err != nil {
		return err
	}
	dt, ok := s[1].(*dtypeObj)
	if !ok || !dt.built {
		return d.fail(ErrMalformed, "an ndarray's dtype is %s, not a numpy.dtype", typeName(s[1]))
	}
	fortran, ok := s[2].(bool)
	if !ok {
		if i, isInt := s[2].(int64); isInt && (i == 0 || i == 1) {
			fortran, ok = i == 1, true
		}
	}
	if !ok {
		return d.fail(ErrMalformed, "an ndarray's fortran flag is %s, not a bool", typeName(s[2]))
	}
	if dt.object {
		l, ok := s[3].(*listObj)
		if !ok {
			return d.fail(ErrMalformed, "an object array's data is %s, not a list", typeName(s[3]))
		}
		// numpy pickles an object array's elements in C order, whatever
		// its own order. It takes them when it is built: the list must
		// hold them all then (numpy fails otherwise), and what is
		// appended to it afterwards is not the array's.
		count, _ := ndarray.NumElements(shape)
		if l.n != count {
			return d.fail(ErrMalformed, "an object array of shape %s is built from a list of %s, not %d",
				ndarray.FormatShape(shape), codecerr.Count(l.n, "element"), count)
		}
		o.shape, o.values, o.count, o.built = shape, l, count, true
		return nil
	}
	data, ok := d.asBytes(s[3], true)
	if !ok {
		return d.fail(ErrMalformed, "an array's data is %s, not bytes", typeName(s[3]))
	}
	a, err := d.numeric(dt.dt, shape, fortran, data)
	if err != nil {
		return err
	}
	if o := a.DType.Order; o != '|' && o != ndarray.NativeOrder() {
		// ndarray.__setstate__ turns data of the other byte order into
		// the machine's own (_frombuffer does not).
		if err := d.charge(int64(len(a.Data))); err != nil {
			return err
		}
		if a, err = a.ToOrder(ndarray.NativeOrder()); err != nil {
			return d.fail(ErrMalformed, "%v", err)
		}
	}
	o.value, o.built = a, true
	return nil
}

// buildDType is dtype.__setstate__ for the versions numpy writes: (3,
// endian, subarray, names, fields, elsize, alignment, flags) and version 4
// with the metadata of a datetime unit after them.
func (d *decoder) buildDType(o *dtypeObj, state any) error {
	t, ok := state.(*tupleObj)
	if !ok {
		return d.fail(ErrMalformed, "a dtype's state is %s, not a tuple", typeName(state))
	}
	s := t.items
	if len(s) < 8 || len(s) > 9 {
		return d.fail(ErrMalformed, "a dtype's state has %d items; numpy writes 8 or 9", len(s))
	}
	endian, ok := asText(s[1])
	if !ok || len(endian) != 1 || !strings.Contains("<>|=", endian) {
		return d.fail(ErrMalformed, "a dtype's byte order is %s, not '<', '>', '|' or '='", typeName(s[1]))
	}
	if s[2] != nil || s[3] != nil || s[4] != nil {
		return d.fail(ErrNotData, "a structured or subarray dtype (%s) inside an object array is not read", o.code)
	}
	elsize, ok := s[5].(int64)
	if !ok {
		return d.fail(ErrMalformed, "a dtype's item size is %s, not an int", typeName(s[5]))
	}
	code := o.code
	if code == "O8" || code == "O4" || code == "O" {
		o.object, o.built = true, true
		return nil
	}
	if code == "" {
		return d.fail(ErrMalformed, "an empty dtype typecode")
	}
	kind := code[0]
	switch kind {
	case 'S', 'U', 'V':
		if elsize < 0 || elsize > 1<<31 || (kind == 'U' && elsize%4 != 0) {
			return d.fail(ErrMalformed, "a %c dtype of item size %d", kind, elsize)
		}
		if kind == 'U' {
			elsize /= 4
		}
		code = string(kind) + strconv.FormatInt(elsize, 10)
	case 'M', 'm':
		unit, err := d.dateUnit(s)
		if err != nil {
			return err
		}
		code += "[" + unit + "]"
	}
	order := endian
	if order == "|" {
		order = "="
	}
	dt, err := ndarray.ParseTypestr(order + code)
	if err != nil {
		return d.fail(ErrNotData, "dtype %s inside an object array is not read: %v", quoteName(o.code), err)
	}
	o.dt, o.built = dt, true
	return nil
}

// dateUnit reads a datetime dtype's unit from its metadata, ({}, (unit,
// count, 1, 1)).
func (d *decoder) dateUnit(s []any) (string, error) {
	if len(s) == 9 {
		if md, ok := s[8].(*tupleObj); ok && len(md.items) == 2 {
			if u, ok := md.items[1].(*tupleObj); ok && len(u.items) == 4 {
				unit, ok1 := asText(u.items[0])
				n, ok2 := u.items[1].(int64)
				if ok1 && ok2 && n >= 1 {
					if n == 1 {
						return unit, nil
					}
					return strconv.FormatInt(n, 10) + unit, nil
				}
			}
		}
	}
	return "", d.fail(ErrMalformed, "a datetime dtype without its unit")
}

// freezer turns the decoder's objects into the result's values, once each:
// a container shared through the memo becomes one shared Go value.
type freezer struct {
	d *decoder
}

// Sizes of values written out, for Options.MaxSize: about their size as
// msgpack.
const (
	sizeScalar    = 9  // a number
	sizeHeader    = 5  // of a str, bytes, int or container
	sizeArrayHead = 64 // of a numeric array
)

// leafSize is the size of a value that holds no other.
func leafSize(v any) int64 {
	switch x := v.(type) {
	case string:
		return sizeHeader + int64(len(x))
	case []byte:
		return sizeHeader + int64(len(x))
	case *big.Int:
		return sizeHeader + int64(len(x.Bits()))*8
	case complex128:
		return 2 * sizeScalar
	case *ndarray.Array:
		return sizeArrayHead + int64(len(x.Data))
	case nil, bool:
		return 1
	case int64:
		if x >= -32 && x < 128 {
			return 1 // msgpack's fixint
		}
	}
	return sizeScalar
}

// freezeStr is a Python 2 str as Options.Strings reads it, and its size
// written out.
func (f *freezer) freezeStr(o py2str, at int) (any, int64, error) {
	d := f.d
	if d.opts.Strings != ASCII {
		if err := d.charge(2 * int64(len(o))); err != nil {
			return nil, 0, err
		}
	}
	switch d.opts.Strings {
	case Bytes:
		return []byte(o), sizeHeader + int64(len(o)), nil
	case Latin1:
		r := make([]rune, 0, len(o))
		for i := 0; i < len(o); i++ {
			r = append(r, rune(o[i]))
		}
		return string(r), sizeHeader + 2*int64(len(o)), nil
	}
	for i := 0; i < len(o); i++ {
		if o[i] >= 0x80 {
			return nil, 0, errAt(ErrMalformed, at, "a Python 2 str holds the non-ASCII byte 0x%02x (decode it as latin-1 or bytes: Options.Strings)", o[i])
		}
	}
	return string(o), leafSize(string(o)), nil
}

// freezeArray is an object array's result, its elements' sizes counted
// through add.
func (f *freezer) freezeArray(o *arrayObj, depth int, add func(int64) error) (any, error) {
	switch {
	case !o.built:
		return nil, errAt(ErrMalformed, o.at, "a numpy.ndarray never given its state (BUILD)")
	case o.value != nil:
		return o.value, nil
	}
	vals, k, err := f.freeze(o.values, depth, o.at)
	if err != nil {
		return nil, err
	}
	if err := add(k); err != nil {
		return nil, err
	}
	// Items appended to the list after the array was built are not the
	// array's.
	elems := vals.([]any)[:o.count:o.count]
	if f.d.opts.ObjectArray != nil {
		return f.d.opts.ObjectArray(o.shape, elems), nil
	}
	return &ObjectArray{Shape: o.shape, Values: elems}, nil
}

// freeze returns v's result and its size written out (Options.MaxSize).
func (f *freezer) freeze(v any, depth int, at int) (any, int64, error) {
	d := f.d
	if depth > d.opts.MaxDepth {
		return nil, 0, errAt(ErrTooDeep, at, "containers nested deeper than %d (Options.MaxDepth)", d.opts.MaxDepth)
	}
	var n *node
	switch o := v.(type) {
	case nil, bool, int64, *big.Int, float64, complex128, string, []byte, *ndarray.Array:
		return v, leafSize(v), nil
	case py2str:
		return f.freezeStr(o, at)
	case *globalObj:
		return nil, 0, errAt(ErrNotData, at, "the global %s.%s is a value, not data that is read", o.module, o.name)
	case *dtypeObj:
		return nil, 0, errAt(ErrNotData, o.at, "a numpy.dtype as a value is not read")
	case *listObj:
		n = &o.node
	case *tupleObj:
		n = &o.node
	case *dictObj:
		n = &o.node
	case *setObj:
		n = &o.node
	case *arrayObj:
		n = &o.node
	default:
		return nil, 0, errAt(ErrMalformed, at, "an unexpected %T", v)
	}
	switch n.state {
	case 1:
		return nil, 0, errAt(ErrNotData, n.at, "a container that holds itself is not read")
	case 2:
		return n.value, n.size, nil
	}
	n.state = 1
	total := int64(sizeHeader)
	add := func(k int64) error {
		total += k
		if total > d.opts.MaxSize {
			e := errAt(ErrTooLarge, n.at, "the values would be more than %d bytes written out, shared ones repeated where they appear", d.opts.MaxSize)
			e.Option = "Options.MaxSize"
			return e
		}
		return nil
	}
	items := func(list []any) error {
		for i, x := range list {
			fx, k, err := f.freeze(x, depth+1, n.at)
			if err != nil {
				return err
			}
			if err := add(k); err != nil {
				return err
			}
			list[i] = fx
		}
		return nil
	}
	var out any
	switch o := v.(type) {
	case *listObj:
		o.all()
		if err := items(o.items); err != nil {
			return nil, 0, err
		}
		if o.items == nil {
			o.items = []any{}
		}
		out = o.items
	case *tupleObj:
		if err := items(o.items); err != nil {
			return nil, 0, err
		}
		out = Tuple(o.items)
		if o.items == nil {
			out = Tuple{}
		}
	case *setObj:
		if err := items(o.items); err != nil {
			return nil, 0, err
		}
		out = Set(o.items)
		if o.items == nil {
			out = Set{}
		}
	case *dictObj:
		for i := range o.items {
			pair := []any{o.items[i].Key, o.items[i].Value}
			if err := items(pair); err != nil {
				return nil, 0, err
			}
			o.items[i] = DictItem{pair[0], pair[1]}
		}
		out = Dict(o.items)
		if o.items == nil {
			out = Dict{}
		}
	case *arrayObj:
		var err error
		if out, err = f.freezeArray(o, depth, add); err != nil {
			return nil, 0, err
		}
	}
	n.state, n.value, n.size = 2, out, total
	return out, total, nil
}
