package npybridge_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// An object array, as np.save writes np.array(['alpha', 'beta'],
// dtype=object), is refused unless asked for, then read without running
// its pickle.
func ExampleReadOptions_ReadObjects() {
	var file bytes.Buffer
	names := &npybridge.ObjectArray{Shape: []int{2}, Values: []any{"alpha", "beta"}}
	if err := npybridge.WriteObjects(&file, names); err != nil {
		panic(err)
	}

	_, err := npybridge.Read(bytes.NewReader(file.Bytes()))
	fmt.Println(errors.Is(err, npybridge.ErrObjectArray))

	a, err := npybridge.ReadOptions{AllowObjects: true}.ReadObjects(&file)
	if err != nil {
		panic(err)
	}
	s, _ := a.Strings()
	fmt.Println(a.Shape, s)
	// Output:
	// true
	// [2] [alpha beta]
}

// A ragged array of arrays, np.array([np.arange(3), np.arange(2)],
// dtype=object), holds each array as an *ndarray.Array.
func ExampleObjectArray_Arrays() {
	row := func(n int) *ndarray.Array {
		a, _ := ndarray.Zeros(ndarray.DTypeOf[int64](), n)
		return a
	}
	var file bytes.Buffer
	ragged := &npybridge.ObjectArray{Shape: []int{2}, Values: []any{row(3), row(2)}}
	if err := npybridge.WriteObjects(&file, ragged); err != nil {
		panic(err)
	}
	a, err := npybridge.ReadOptions{AllowObjects: true}.ReadObjects(&file)
	if err != nil {
		panic(err)
	}
	arrays, _ := a.Arrays()
	for _, x := range arrays {
		fmt.Println(x.DType, x.Shape)
	}
	// Output:
	// <i8 [3]
	// <i8 [2]
}
