package ndarray_test

import (
	"fmt"

	"github.com/ndpack/ndpack/ndarray"
)

// Sample is a record as numpy's np.dtype([('t', '<f8'), ('ch', '<i2', (2,)), ('ok', '?')])
// has it; Note is Go's own and not part of the record.
type Sample struct {
	T        float64  `npy:"t"`
	Channels [2]int16 `npy:"ch"`
	OK       bool     `npy:"ok"`
	Note     string   `npy:"-"`
}

func ExampleRecordsOf() {
	// Records as numpy packs them (no align=True): 13 bytes each,
	// big-endian, the fields in another order than Sample's.
	dt, _ := ndarray.NewRecord([]ndarray.Field{
		{Name: "ok", DType: ndarray.MustParseDType("|b1")},
		{Name: "ch", DType: ndarray.MustParseDType(">i2"), Shape: []int{2}, Offset: 1},
		{Name: "t", DType: ndarray.MustParseDType(">f8"), Offset: 5},
	}, 0)
	a, _ := ndarray.New(dt, []int{2}, []byte{
		1, 0, 1, 0xff, 0xfe, 0x3f, 0xf8, 0, 0, 0, 0, 0, 0,
		0, 0, 3, 0, 4, 0x40, 0x04, 0, 0, 0, 0, 0, 0,
	})
	samples, err := ndarray.RecordsOf[Sample](a)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", samples)

	// A struct that does not fit says everything that is wrong at once.
	type wrong struct {
		T  float32 `npy:"t"`
		ID int64   `npy:"id"`
	}
	_, err = ndarray.RecordsOf[wrong](a)
	fmt.Println(err)
	// Output:
	// [{T:1.5 Channels:[1 -2] OK:true Note:} {T:2.5 Channels:[3 4] OK:false Note:}]
	// ndarray: element type mismatch: records [('ok', '?'), ('ch', '>i2', (2,)), ('t', '>f8')] read as Go ndarray_test.wrong: field "t": Go float32 at offset 0, file >f8 at offset 5; field "id" missing in the file
}

func ExampleFromRecords() {
	type point struct {
		ID int32   `npy:"id"`
		X  float64 `npy:"x"`
	}
	a, err := ndarray.FromRecords([]point{{1, 0.5}, {2, -1}})
	if err != nil {
		panic(err)
	}
	// Go pads id to 8 bytes, as numpy's align=True does.
	fmt.Println(a.DType.WithOrder('<'), a.Shape)
	// Output: {'names': ['id', 'x'], 'formats': ['<i4', '<f8'], 'offsets': [0, 8], 'itemsize': 16} [2]
}

func ExampleArray_Field() {
	type point struct {
		ID  int32      `npy:"id"`
		Pos [3]float32 `npy:"pos"`
	}
	a, _ := ndarray.FromRecords([]point{{1, [3]float32{0, 1, 2}}, {2, [3]float32{3, 4, 5}}})
	pos, _ := a.Field("pos")
	fmt.Println(pos.Shape, pos.Strides, pos.Offset)

	ids, _ := ndarray.FieldValues[int32](a, "id")
	fmt.Println(ids)
	_ = ndarray.SetFieldValues(a, "id", []int32{10, 20})
	recs, _ := ndarray.RecordsOf[point](a)
	fmt.Println(recs)
	// Output:
	// [2 3] [16 4] 4
	// [1 2]
	// [{10 [0 1 2]} {20 [3 4 5]}]
}
