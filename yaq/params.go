package yaq

import (
	"reflect"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// ParamAs returns a handler's parameter i as a T, converted as Client.Call
// converts answers: numbers to any Go number type that holds them exactly
// (an Avro int to an int8, a long to a float64), records to structs (by
// field name, or a `yaq:"name"` tag), arrays to slices, unions with null to
// pointers, YEP-113 arrays to *ndarray.Array. So a handler reads its
// parameters typed, whatever Avro type the protocol gives them:
//
//	d.Handle("set_position", func(ctx context.Context, p []any) (any, error) {
//		to, err := yaq.ParamAs[float64](p, 0)
//		...
//	})
//
// A missing parameter, or one that does not fit T, is an error matching
// ErrParams, which the daemon answers to the client as the call's error.
func ParamAs[T any](params []any, i int) (T, error) {
	var out T
	if i < 0 || i >= len(params) {
		return out, classed(ErrParams, "yaq: the call has %s, no parameter %d", codecerr.Count(len(params), "parameter"), i)
	}
	if t, ok := params[i].(T); ok {
		return t, nil
	}
	if err := assignValue(reflect.ValueOf(&out).Elem(), params[i]); err != nil {
		return out, classed(ErrParams, "yaq: parameter %d does not fit a %T: %w", i, out, err)
	}
	return out, nil
}
