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

// SetOrder converts in place: the same memory, the bytes ToOrder's copy
// has, and record fields already in the order left alone.
func TestSetOrder(t *testing.T) {
	a, _ := FromSlice([]uint32{0x01020304, 0x0a0b0c0d})
	want, _ := a.ToOrder('>')
	data := &a.Data[0]
	if err := a.SetOrder('>'); err != nil {
		t.Fatal(err)
	}
	if &a.Data[0] != data || !a.Equal(want) {
		t.Fatalf("SetOrder gave %v % x, want % x in place", a.DType, a.Data, want.Data)
	}
	rec, err := NewRecord([]Field{{Name: "a", DType: MustParseDType(">u2")}, {Name: "b", DType: MustParseDType("<u2"), Offset: 2}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := &Array{DType: rec, Shape: []int{1}, Data: []byte{1, 2, 3, 4}}
	if err := r.SetOrder('<'); err != nil {
		t.Fatal(err)
	}
	if string(r.Data) != "\x02\x01\x03\x04" {
		t.Fatalf("record bytes % x, want 02 01 03 04", r.Data)
	}
	if err := a.SetOrder('|'); err == nil {
		t.Fatal("order '|' accepted")
	}
}

// Every Go element type's dtype is what ParseDType makes of numpy's
// dtype.str for it (on the little-endian machines the tests run on).
func TestDTypeOfIsNumpys(t *testing.T) {
	for typestr, dt := range map[string]DType{
		"|b1": DTypeOf[bool](), "|i1": DTypeOf[int8](), "<i2": DTypeOf[int16](), "<i4": DTypeOf[int32](), "<i8": DTypeOf[int64](),
		"|u1": DTypeOf[uint8](), "<u2": DTypeOf[uint16](), "<u4": DTypeOf[uint32](), "<u8": DTypeOf[uint64](),
		"<f4": DTypeOf[float32](), "<f8": DTypeOf[float64](), "<c8": DTypeOf[complex64](), "<c16": DTypeOf[complex128](),
	} {
		if got := MustParseDType(typestr); got != dt {
			t.Errorf("%s: DTypeOf %v, ParseDType %v", typestr, dt, got)
		}
		if dt.String() != typestr {
			t.Errorf("%v prints as %q", dt, dt.String())
		}
	}
}
