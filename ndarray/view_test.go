package ndarray

import (
	"testing"
	"unsafe"
)

// View shares the slice's memory: no copy, and writes show both ways.
func TestView(t *testing.T) {
	v := []float32{1, 2, 3, 4, 5, 6}
	a, err := View(v, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.Pointer(&a.Data[0]) != unsafe.Pointer(&v[0]) || len(a.Data) != 24 {
		t.Fatal("View copied the slice")
	}
	if a.DType != DTypeOf[float32]() || a.Validate() != nil {
		t.Fatalf("View made %v", a)
	}
	v[5] = 60
	if got, _ := At[float32](a, 1, 2); got != 60 {
		t.Fatalf("the array does not see the slice's change: %v", got)
	}
	if _, err := View(v, 4); err == nil {
		t.Fatal("a shape of 4 for 6 values accepted")
	}
	e, err := View([]int16{})
	if err != nil || e.Validate() != nil || len(e.Shape) != 1 || e.Shape[0] != 0 {
		t.Fatalf("empty view: %v %v", e, err)
	}
}
