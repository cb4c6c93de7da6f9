package ndarray_test

import (
	"fmt"

	"github.com/ndpack/ndpack/ndarray"
)

func ExampleNewRecord() {
	// np.dtype([('id', '<u4'), ('pos', '<f4', (3,))])
	dt, err := ndarray.NewRecord([]ndarray.Field{
		{Name: "id", DType: ndarray.MustParseDType("<u4")},
		{Name: "pos", DType: ndarray.DTypeOf[float32](), Shape: []int{3}, Offset: 4},
	}, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(dt, dt.ItemSize)
	pos, _ := dt.FieldByName("pos")
	fmt.Println(pos.Offset, pos.Size())

	// Padding after the fields: numpy prints the dict form.
	padded, _ := ndarray.NewRecord(dt.Fields(), 32)
	fmt.Println(padded)
	fmt.Println(padded == dt)
	// Output:
	// [('id', '<u4'), ('pos', '<f4', (3,))] 16
	// 4 12
	// {'names': ['id', 'pos'], 'formats': ['<u4', ('<f4', (3,))], 'offsets': [0, 4], 'itemsize': 32}
	// false
}

func ExampleDType_Descr() {
	// np.dtype([('a', 'i1'), ('b', '<f8')], align=True)
	dt, _ := ndarray.NewRecord([]ndarray.Field{
		{Name: "a", DType: ndarray.MustParseDType("|i1")},
		{Name: "b", DType: ndarray.DTypeOf[float64](), Offset: 8},
	}, 16)
	items, _ := dt.Descr()
	for _, it := range items {
		fmt.Printf("%q %s padding=%v\n", it.Name, it.DType, it.IsPadding())
	}
	back, _ := ndarray.RecordFromDescr(items)
	fmt.Println(back == dt)
	// Output:
	// "a" |i1 padding=false
	// "" |V7 padding=true
	// "b" <f8 padding=false
	// true
}

func ExampleArray_ToOrder_record() {
	dt, _ := ndarray.NewRecord([]ndarray.Field{
		{Name: "a", DType: ndarray.MustParseDType(">u2")},
		{Name: "b", DType: ndarray.MustParseDType("<u2"), Offset: 2},
	}, 0)
	a, _ := ndarray.New(dt, []int{1}, []byte{1, 2, 3, 4})
	l, _ := a.ToOrder('<') // only the big-endian field moves
	fmt.Println(l.DType, l.Data)
	// Output: [('a', '<u2'), ('b', '<u2')] [2 1 3 4]
}
