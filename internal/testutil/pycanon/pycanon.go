// Package pycanon writes a Go value read from a Python pickle as one
// string, equal for equal values: the Go half of the canon the tests'
// Python scripts print for what numpy unpickles, so that the two can be
// compared whole. It is for tests only.
package pycanon

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
)

// Python defines, for the tests' scripts, canon(v): the same string Of
// gives, for what Python unpickles (numpy arrays and scalars included,
// datetime.date as D and its ISO form); and objarr(vals, shape=None,
// order='C'): a numpy object array of exactly those elements (np.array
// would make lists into dimensions). It imports numpy as np, struct,
// datetime and sys.
const Python = `
import numpy as np, struct, datetime, sys

def canon(v):
    if isinstance(v, np.ndarray):
        shape = ','.join(map(str, v.shape))
        if v.dtype == object:
            return 'O' + shape + '[' + ','.join(canon(x) for x in v.ravel(order='C')) + ']'
        return 'A' + v.dtype.str + '/' + shape + '/' + np.ascontiguousarray(v).tobytes().hex()
    if isinstance(v, np.generic):
        return 'A' + v.dtype.str + '//' + v.tobytes().hex()
    if v is None: return 'N'
    if isinstance(v, bool): return 'T' if v else 'F'
    if isinstance(v, int): return 'i%d' % v
    if isinstance(v, float): return 'f' + struct.pack('>d', v).hex()
    if isinstance(v, complex): return 'c' + struct.pack('>dd', v.real, v.imag).hex()
    if isinstance(v, str): return 's' + v.encode('utf-8').hex()
    if isinstance(v, (bytes, bytearray)): return 'b' + bytes(v).hex()
    if isinstance(v, list): return '[' + ','.join(canon(x) for x in v) + ']'
    if isinstance(v, tuple): return '(' + ','.join(canon(x) for x in v) + ')'
    if isinstance(v, dict): return '{' + ','.join(canon(k) + ':' + canon(x) for k, x in v.items()) + '}'
    if isinstance(v, (set, frozenset)): return '<' + ','.join(sorted(canon(x) for x in v)) + '>'
    if isinstance(v, datetime.date): return 'D' + v.isoformat()
    raise TypeError(type(v))

def objarr(vals, shape=None, order='C'):
    a = np.empty(len(vals), dtype=object)
    for i, v in enumerate(vals):
        a[i] = v
    if shape is not None:
        a = a.reshape(shape)
    if order == 'F':
        a = np.asfortranarray(a)
    return a
`

// Of returns v's canon: "N" None, "T"/"F", "i" and the decimal of an int,
// "f"/"c" and the hex of a float's (a complex's two) IEEE bits, "s"/"b" and
// the hex of a str's UTF-8 or a bytes', [..] lists, (..) tuples, <..> sets
// (sorted), {k:v,..} dicts, O<shape>[..] object arrays (any struct pointer
// with Shape []int and Values []any fields, as the pickle reader's and
// npybridge's), A<dtype>/<shape>/<hex> arrays.
func Of(v any) string {
	switch v := v.(type) {
	case nil:
		return "N"
	case bool:
		if v {
			return "T"
		}
		return "F"
	case int64:
		return "i" + strconv.FormatInt(v, 10)
	case *big.Int:
		return "i" + v.String()
	case float64:
		return "f" + hex.EncodeToString(binary.BigEndian.AppendUint64(nil, math.Float64bits(v)))
	case complex128:
		b := binary.BigEndian.AppendUint64(nil, math.Float64bits(real(v)))
		return "c" + hex.EncodeToString(binary.BigEndian.AppendUint64(b, math.Float64bits(imag(v))))
	case string:
		return "s" + hex.EncodeToString([]byte(v))
	case []byte:
		return "b" + hex.EncodeToString(v)
	case []any:
		return "[" + list(v) + "]"
	case *ndarray.Array:
		return "A" + v.DType.String() + "/" + shape(v.Shape) + "/" + hex.EncodeToString(v.Data)
	}
	// The pickle reader's own types, by their names, so that its tests
	// (inside its package) can use this without an import cycle.
	rv := reflect.ValueOf(v)
	switch name := rv.Type().Name(); {
	case name == "Tuple" && rv.Kind() == reflect.Slice:
		return "(" + list(rv.Convert(reflect.TypeOf([]any(nil))).Interface().([]any)) + ")"
	case name == "Set" && rv.Kind() == reflect.Slice:
		s := make([]string, rv.Len())
		for i := range s {
			s[i] = Of(rv.Index(i).Interface())
		}
		sort.Strings(s)
		return "<" + strings.Join(s, ",") + ">"
	case name == "Dict" && rv.Kind() == reflect.Slice:
		s := make([]string, rv.Len())
		for i := range s {
			it := rv.Index(i)
			s[i] = Of(it.FieldByName("Key").Interface()) + ":" + Of(it.FieldByName("Value").Interface())
		}
		return "{" + strings.Join(s, ",") + "}"
	}
	if s, vals, ok := objectArray(v); ok {
		return "O" + shape(s) + "[" + list(vals) + "]"
	}
	return fmt.Sprintf("?%T", v)
}

// objectArray reads the Shape and Values of another package's object
// array type.
func objectArray(v any) ([]int, []any, bool) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
		return nil, nil, false
	}
	s, vals := rv.Elem().FieldByName("Shape"), rv.Elem().FieldByName("Values")
	if !s.IsValid() || !vals.IsValid() {
		return nil, nil, false
	}
	sh, ok1 := s.Interface().([]int)
	vs, ok2 := vals.Interface().([]any)
	return sh, vs, ok1 && ok2
}

func list(v []any) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = Of(x)
	}
	return strings.Join(s, ",")
}

func shape(sh []int) string {
	s := make([]string, len(sh))
	for i, n := range sh {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
