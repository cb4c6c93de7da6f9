package ndarray

// FromColumnMajor returns a new row-major Array of the given dtype and
// logical shape from data laid out in column-major (Fortran) order, as in an
// NPY file with fortran_order True. The bytes are copied and transposed;
// data is not kept. It fails as New does: ErrDType, ErrShape or
// ErrDataLength when dt, shape and data do not fit together.
func FromColumnMajor(dt DType, shape []int, data []byte) (*Array, error) {
	a := &Array{DType: dt, Shape: append([]int{}, shape...), Data: data}
	if err := a.Validate(); err != nil {
		return nil, err
	}
	a.Data = make([]byte, len(data))
	transposeColumnToRow(a.Data, data, shape, dt.ItemSize)
	return a, nil
}

// ColumnMajorData returns a copy of the array's bytes in column-major
// (Fortran) order, the inverse of FromColumnMajor. It fails with Validate's
// error (ErrDType, ErrShape or ErrDataLength) when a is not valid.
func (a *Array) ColumnMajorData() ([]byte, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	// Reading a row-major array in column-major order is transposing the
	// reversed shape: C order of shape (d0..dn) is F order of (dn..d0).
	rev := make([]int, len(a.Shape))
	for i, d := range a.Shape {
		rev[len(rev)-1-i] = d
	}
	out := make([]byte, len(a.Data))
	transposeColumnToRow(out, a.Data, rev, a.DType.ItemSize)
	return out, nil
}

// transposeColumnToRow writes to dst, in row-major order, the array of the
// given shape whose column-major bytes are src. It walks src sequentially
// (first index fastest) and scatters into dst, so reads stream and writes
// stride.
func transposeColumnToRow(dst, src []byte, shape []int, itemSize int) {
	if len(src) == 0 {
		return
	}
	if len(shape) < 2 {
		copy(dst, src)
		return
	}
	// Row-major strides in bytes.
	strides := make([]int, len(shape))
	s := itemSize
	for k := len(shape) - 1; k >= 0; k-- {
		strides[k] = s
		s *= shape[k]
	}
	idx := make([]int, len(shape))
	inner, innerStride := shape[0], strides[0]
	base := 0 // dst offset of idx with idx[0] == 0
	for pos := 0; pos < len(src); {
		o := base
		for i := 0; i < inner; i++ {
			copy(dst[o:o+itemSize], src[pos:pos+itemSize])
			o += innerStride
			pos += itemSize
		}
		// Advance the odometer over dimensions 1..n-1.
		for k := 1; k < len(shape); k++ {
			idx[k]++
			base += strides[k]
			if idx[k] < shape[k] {
				break
			}
			base -= idx[k] * strides[k]
			idx[k] = 0
		}
	}
}
