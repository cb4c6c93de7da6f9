package pickle

import (
	"encoding/binary"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// EncodeOptions controls AppendObjectArray.
type EncodeOptions struct {
	// ObjectArray, if set, recognises the caller's own object array type
	// among the values, giving its shape and row-major elements; an
	// *ObjectArray is always recognised.
	ObjectArray func(v any) (shape []int, values []any, ok bool)
}

// AppendObjectArray appends to dst the pickle that np.save writes (Python's
// pickle.dump with protocol 3) of a numpy object array of the given shape
// and row-major values, and returns the extended buffer.
//
// The values may be nil, bool, Go's integer types and *big.Int, float32
// and float64, complex64 and complex128, string (UTF-8), []byte, []any
// (a list), Tuple, Dict, Set, a numeric *ndarray.Array (an array of kind
// b, i, u, f, c, S, U or V; one of shape () is written as the numpy scalar
// it is read back as) and nested object arrays; anything else is an
// error. The bytes are np.save's when the Python objects were distinct
// except where CPython shares them (strings and bytes of at most one
// character, numpy's builtin dtypes), which is how a pickler's memo sees
// them.
func AppendObjectArray(dst []byte, shape []int, values []any, opts EncodeOptions) ([]byte, error) {
	e := &encoder{buf: dst, opts: opts, memo: map[any]int{}}
	e.buf = append(e.buf, opProto, 3)
	if err := e.objectArray(shape, values, 0); err != nil {
		return dst, err
	}
	e.buf = append(e.buf, opStop)
	return e.buf, nil
}

type encoder struct {
	buf  []byte
	opts EncodeOptions
	// memo holds the objects written once and then referred to: those
	// CPython shares, by a string naming them, and the lists, dicts and
	// tuples shared among the values (as the reader returns those a pickle
	// shared), by their identity, so that a value shared a million times
	// is written once, as Python's pickler writes it.
	memo map[any]int
	next int
}

// identity names a non-empty list, dict or tuple by its first element and
// length: the same Go value in two places is the same Python object.
type identity struct {
	kind byte
	p    unsafe.Pointer
	n    int
}

func (e *encoder) fail(format string, args ...any) error {
	return errAt(ErrNotData, -1, format, args...)
}

// put memoizes the object just written, as the pickler memoizes every
// str, bytes, tuple, list, dict, global and reduced object.
func (e *encoder) put(key any) {
	if key != nil && key != "" {
		e.memo[key] = e.next
	}
	if e.next < 256 {
		e.buf = append(e.buf, opBinPut, byte(e.next))
	} else {
		e.buf = append(e.buf, opLongBinPut)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(e.next))
	}
	e.next++
}

// get writes a reference to a shared object already written.
func (e *encoder) get(key any) bool {
	if key == nil {
		return false
	}
	i, ok := e.memo[key]
	if !ok {
		return false
	}
	if i < 256 {
		e.buf = append(e.buf, opBinGet, byte(i))
	} else {
		e.buf = append(e.buf, opLongBinGet)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(i))
	}
	return true
}

func (e *encoder) global(module, name string) {
	key := "g" + module + "\n" + name
	if e.get(key) {
		return
	}
	e.buf = append(e.buf, opGlobal)
	e.buf = append(e.buf, module...)
	e.buf = append(e.buf, '\n')
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, '\n')
	e.put(key)
}

func (e *encoder) int(x int64) {
	switch {
	case x >= 0 && x <= 0xff:
		e.buf = append(e.buf, opBinInt1, byte(x))
	case x >= 0 && x <= 0xffff:
		e.buf = append(e.buf, opBinInt2, byte(x), byte(x>>8))
	case x >= math.MinInt32 && x <= math.MaxInt32:
		e.buf = append(e.buf, opBinInt)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(int32(x)))
	default:
		e.bigInt(big.NewInt(x))
	}
}

// bigInt writes LONG1 or LONG4 with pickle's encode_long: the fewest
// little-endian two's complement bytes, (bit length / 8) + 1 of them, one
// fewer for a negative number whose top byte is a redundant 0xff.
func (e *encoder) bigInt(x *big.Int) {
	if x.IsInt64() && x.Int64() >= math.MinInt32 && x.Int64() <= math.MaxInt32 {
		e.int(x.Int64())
		return
	}
	n := x.BitLen()/8 + 1
	// Two's complement: x mod 2^(8n), as big-endian bytes.
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	t := new(big.Int).Mod(x, m).FillBytes(make([]byte, n))
	le := make([]byte, n)
	for i := range t {
		le[n-1-i] = t[i]
	}
	if x.Sign() < 0 && n > 1 && le[n-1] == 0xff && le[n-2]&0x80 != 0 {
		le = le[:n-1]
	}
	if len(le) < 256 {
		e.buf = append(e.buf, opLong1, byte(len(le)))
	} else {
		e.buf = append(e.buf, opLong4)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(le)))
	}
	e.buf = append(e.buf, le...)
}

func (e *encoder) float(f float64) {
	e.buf = append(e.buf, opBinFloat)
	e.buf = binary.BigEndian.AppendUint64(e.buf, math.Float64bits(f))
}

// str writes a str; CPython shares the empty str and those of one latin-1
// character, so the memo does too.
func (e *encoder) str(s string) error {
	if !utf8.ValidString(s) {
		return e.fail("a string of %d bytes is not UTF-8, which a Python str must be", len(s))
	}
	key := ""
	if s == "" || (utf8.RuneCountInString(s) == 1 && []rune(s)[0] < 0x100) {
		key = "s" + s
		if e.get(key) {
			return nil
		}
	}
	e.buf = append(e.buf, opBinUnicode)
	e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(s)))
	e.buf = append(e.buf, s...)
	e.put(key)
	return nil
}

// bytes writes a bytes; CPython shares b” and each one-byte bytes.
func (e *encoder) bytes(b []byte) {
	key := ""
	if len(b) <= 1 {
		key = "b" + string(b)
		if e.get(key) {
			return
		}
	}
	if len(b) < 256 {
		e.buf = append(e.buf, opShortBinBytes, byte(len(b)))
	} else {
		e.buf = append(e.buf, opBinBytes)
		e.buf = binary.LittleEndian.AppendUint32(e.buf, uint32(len(b)))
	}
	e.buf = append(e.buf, b...)
	e.put(key)
}

// tuple writes a tuple of items written by each, as save_tuple does: ()
// alone, up to three items with TUPLE1..3, more between MARK and TUPLE.
func (e *encoder) tuple(n int, each func(i int) error) error {
	return e.tupleOf(nil, n, each)
}

// tupleOf is tuple for a tuple of the values, memoized by its identity key
// (nil: none).
func (e *encoder) tupleOf(key any, n int, each func(i int) error) error {
	if e.get(key) {
		return nil
	}
	if n == 0 {
		e.buf = append(e.buf, opEmptyTuple)
		return nil
	}
	if n > 3 {
		e.buf = append(e.buf, opMark)
	}
	for i := 0; i < n; i++ {
		if err := each(i); err != nil {
			return err
		}
	}
	if n > 3 {
		e.buf = append(e.buf, opTuple)
	} else {
		e.buf = append(e.buf, opTuple1+byte(n-1))
	}
	e.put(key)
	return nil
}

// shared returns the identity key of a non-empty slice, nil for an empty
// one (which has none).
func shared[T any](kind byte, s []T) any {
	if len(s) == 0 {
		return nil
	}
	return identity{kind, unsafe.Pointer(unsafe.SliceData(s)), len(s)}
}

// batched writes the items of a list or dict after its EMPTY_LIST or
// EMPTY_DICT as the pickler batches them: one item with APPEND (SETITEM),
// more in batches of 1000 between MARK and APPENDS (SETITEMS).
func (e *encoder) batched(n int, one, many byte, each func(i int) error) error {
	if n == 0 {
		return nil
	}
	if n == 1 {
		if err := each(0); err != nil {
			return err
		}
		e.buf = append(e.buf, one)
		return nil
	}
	for i := 0; i < n; {
		e.buf = append(e.buf, opMark)
		for end := min(n, i+1000); i < end; i++ {
			if err := each(i); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, many)
	}
	return nil
}

func (e *encoder) list(items []any, depth int) error {
	return e.listOf(nil, items, depth)
}

// listOf is list memoized by its identity key (nil: none).
func (e *encoder) listOf(key any, items []any, depth int) error {
	if e.get(key) {
		return nil
	}
	e.buf = append(e.buf, opEmptyList)
	e.put(key)
	return e.batched(len(items), opAppend, opAppends, func(i int) error { return e.value(items[i], depth+1) })
}

func (e *encoder) value(v any, depth int) error {
	if depth > DefaultMaxDepth {
		return e.fail("values nested deeper than %d, which Python could not read back", DefaultMaxDepth)
	}
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, opNone)
	case bool:
		if v {
			e.buf = append(e.buf, opNewTrue)
		} else {
			e.buf = append(e.buf, opNewFalse)
		}
	case int:
		e.int(int64(v))
	case int8:
		e.int(int64(v))
	case int16:
		e.int(int64(v))
	case int32:
		e.int(int64(v))
	case int64:
		e.int(v)
	case uint:
		e.bigInt(new(big.Int).SetUint64(uint64(v)))
	case uint8:
		e.int(int64(v))
	case uint16:
		e.int(int64(v))
	case uint32:
		e.int(int64(v))
	case uint64:
		e.bigInt(new(big.Int).SetUint64(v))
	case *big.Int:
		if v == nil {
			return e.fail("a nil *big.Int")
		}
		e.bigInt(v)
	case float32:
		e.float(float64(v))
	case float64:
		e.float(v)
	case complex64:
		return e.complex(complex128(v))
	case complex128:
		return e.complex(v)
	case string:
		return e.str(v)
	case []byte:
		e.bytes(v)
	case []any:
		return e.listOf(shared('l', v), v, depth)
	case Tuple:
		return e.tupleOf(shared('t', v), len(v), func(i int) error { return e.value(v[i], depth+1) })
	case Dict:
		key := shared('d', v)
		if e.get(key) {
			return nil
		}
		e.buf = append(e.buf, opEmptyDict)
		e.put(key)
		return e.batched(len(v), opSetItem, opSetItems, func(i int) error {
			if err := e.value(v[i].Key, depth+1); err != nil {
				return err
			}
			return e.value(v[i].Value, depth+1)
		})
	case Set:
		// set.__reduce__: (set, (list(s),), None).
		e.global("builtins", "set")
		if err := e.tuple(1, func(int) error { return e.list(v, depth) }); err != nil {
			return err
		}
		e.buf = append(e.buf, opReduce)
		e.put("")
	case *ndarray.Array:
		return e.numeric(v)
	case *ObjectArray:
		return e.objectArray(v.Shape, v.Values, depth)
	default:
		if e.opts.ObjectArray != nil {
			if shape, values, ok := e.opts.ObjectArray(v); ok {
				return e.objectArray(shape, values, depth)
			}
		}
		return e.fail("a %T is not a value that is pickled (want nil, bool, numbers, string, []byte, []any, Tuple, Dict, Set or an array)", v)
	}
	return nil
}

func (e *encoder) complex(c complex128) error {
	e.global("builtins", "complex")
	e.float(real(c))
	e.float(imag(c))
	e.buf = append(e.buf, opTuple2)
	e.put("")
	e.buf = append(e.buf, opReduce)
	e.put("")
	return nil
}

// reconstruct writes ndarray.__reduce__'s call, _reconstruct(ndarray,
// (0,), b'b'), memoized, leaving its state to be written.
func (e *encoder) reconstruct() {
	e.global("numpy.core.multiarray", "_reconstruct")
	e.tuple(3, func(i int) error {
		switch i {
		case 0:
			e.global("numpy", "ndarray")
		case 1:
			e.tuple(1, func(int) error { e.int(0); return nil })
		case 2:
			e.bytes([]byte("b"))
		}
		return nil
	})
	e.buf = append(e.buf, opReduce)
	e.put("")
}

func (e *encoder) shape(shape []int) {
	e.tuple(len(shape), func(i int) error { e.int(int64(shape[i])); return nil })
}

// dtype writes numpy.dtype's __reduce__: (dtype, (code, False, True),
// state), with its BUILD. numpy's builtin dtypes (native numbers and
// objects) are single objects, written once and then referred to.
func (e *encoder) dtype(object bool, dt ndarray.DType) error {
	code, endian, elsize, align, flags := "O8", "|", int64(-1), int64(-1), int64(63)
	shared := true
	if !object {
		flags = 0
		switch dt.Kind {
		case 'b', 'i', 'u', 'f', 'c':
			code = string(rune(dt.Kind)) + strconv.Itoa(dt.ItemSize)
			shared = dt.Order == ndarray.NativeOrder() || dt.Order == '|'
		case 'S', 'V':
			code = string(rune(dt.Kind)) + strconv.Itoa(dt.ItemSize)
			elsize, align, shared = int64(dt.ItemSize), 1, false
		case 'U':
			code = "U" + strconv.Itoa(dt.ItemSize/4)
			elsize, align, flags, shared = int64(dt.ItemSize), 4, 8, false
		default:
			return e.fail("an array of dtype %s inside an object array is not written", dt)
		}
		if !dt.IsPlain() {
			return e.fail("a record array inside an object array is not written")
		}
		endian = string(rune(dt.Order))
	}
	key := ""
	if shared {
		key = "d" + endian + code
		if e.get(key) {
			return nil
		}
	}
	e.global("numpy", "dtype")
	e.tuple(3, func(i int) error {
		switch i {
		case 0:
			return e.str(code)
		case 1:
			e.buf = append(e.buf, opNewFalse)
		case 2:
			e.buf = append(e.buf, opNewTrue)
		}
		return nil
	})
	e.buf = append(e.buf, opReduce)
	e.put(key)
	e.tuple(8, func(i int) error {
		switch i {
		case 0:
			e.int(3)
		case 1:
			return e.str(endian)
		case 2, 3, 4:
			e.buf = append(e.buf, opNone)
		case 5:
			e.int(elsize)
		case 6:
			e.int(align)
		case 7:
			e.int(flags)
		}
		return nil
	})
	e.buf = append(e.buf, opBuild)
	return nil
}

func (e *encoder) objectArray(shape []int, values []any, depth int) error {
	n, err := ndarray.NumElements(shape)
	if err != nil || n != len(values) {
		return e.fail("an object array of shape %s needs %s, it has %d", ndarray.FormatShape(shape), codecerr.Count(n, "value"), len(values))
	}
	e.reconstruct()
	err = e.tuple(5, func(i int) error {
		switch i {
		case 0:
			e.int(1)
		case 1:
			e.shape(shape)
		case 2:
			return e.dtype(true, ndarray.DType{})
		case 3:
			e.buf = append(e.buf, opNewFalse)
		case 4:
			return e.list(values, depth)
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.buf = append(e.buf, opBuild)
	return nil
}

// numeric writes a numeric array, C order, or a numpy scalar for shape ().
func (e *encoder) numeric(a *ndarray.Array) error {
	if err := a.Validate(); err != nil {
		return e.fail("an invalid array: %v", err)
	}
	if len(a.Shape) == 0 {
		// numpy scalar's __reduce__: (scalar, (dtype, bytes)).
		e.global("numpy.core.multiarray", "scalar")
		err := e.tuple(2, func(i int) error {
			if i == 0 {
				return e.dtype(false, a.DType)
			}
			e.bytes(a.Data)
			return nil
		})
		if err != nil {
			return err
		}
		e.buf = append(e.buf, opReduce)
		e.put("")
		return nil
	}
	e.reconstruct()
	err := e.tuple(5, func(i int) error {
		switch i {
		case 0:
			e.int(1)
		case 1:
			e.shape(a.Shape)
		case 2:
			return e.dtype(false, a.DType)
		case 3:
			e.buf = append(e.buf, opNewFalse)
		case 4:
			e.bytes(a.Data)
		}
		return nil
	})
	if err != nil {
		return err
	}
	e.buf = append(e.buf, opBuild)
	return nil
}
