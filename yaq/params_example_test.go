package yaq_test

import (
	"fmt"

	"github.com/ndpack/ndpack/yaq"
)

// A handler reads its parameters as the Go types it wants, whichever Avro
// numbers the protocol declares them as.
func ExampleParamAs() {
	params := []any{int32(3), 2.5, []any{int64(1), int64(2)}} // as the daemon decodes them
	n, _ := yaq.ParamAs[int](params, 0)
	f, _ := yaq.ParamAs[float32](params, 1)
	s, _ := yaq.ParamAs[[]uint8](params, 2)
	_, err := yaq.ParamAs[string](params, 3)
	fmt.Println(n, f, s)
	fmt.Println(err)
	// Output:
	// 3 2.5 [1 2]
	// yaq: the call has 3 parameters, no parameter 3
}
