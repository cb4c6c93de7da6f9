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
