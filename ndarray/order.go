package ndarray

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// ToOrder returns the array with its elements in byte order o ('<'
// or '>'). When no byte has to move (the order is already o, or the
// items have no order) it returns a itself; otherwise it returns a new Array
// with swapped copies of the bytes. It fails, with ErrDType, only when o is
// neither '<' nor '>'; a itself is not validated.
func (a *Array) ToOrder(o byte) (*Array, error) {
	if o != '<' && o != '>' {
		return nil, newError(ErrDType, fmt.Sprintf("target byte order %q is not '<' or '>'", byte(o)))
	}
	dt := a.DType.WithOrder(o)
	if dt == a.DType {
		return a, nil
	}
	out := &Array{DType: dt, Shape: append([]int{}, a.Shape...), Data: make([]byte, len(a.Data))}
	copy(out.Data, a.Data)
	if a.DType.layout != nil {
		// Only the fields not already in order o move.
		swapComposite(out.Data, a.DType, o)
		return out, nil
	}
	SwapBytes(out.Data, a.DType)
	return out, nil
}

// SetOrder converts a's elements to byte order o ('<' or
// '>') in place, in a's own Data, and sets its DType to match: the
// conversion ToOrder makes into a copy, for an array whose memory the
// caller owns (one just read from a file). Fields of a record already in
// order o are left as they are. It fails, with ErrDType and a left
// unchanged, only when o is neither '<' nor '>'.
func (a *Array) SetOrder(o byte) error {
	if o != '<' && o != '>' {
		return newError(ErrDType, fmt.Sprintf("target byte order %q is not '<' or '>'", byte(o)))
	}
	dt := a.DType.WithOrder(o)
	if dt == a.DType {
		return nil
	}
	if a.DType.layout != nil {
		swapComposite(a.Data, a.DType, o)
	} else {
		SwapBytes(a.Data, a.DType)
	}
	a.DType = dt
	return nil
}

// SwapBytes reverses, in place, the byte order of every scalar in data,
// which holds elements of dtype dt: whole items for integers, floats and
// times, each half of a complex number, each character of a U string, and
// every such scalar in every field of a record, whatever its order. It
// does nothing for dtypes without a byte order. A trailing partial scalar
// (or record) is left alone.
func SwapBytes(data []byte, dt DType) {
	if dt.layout != nil {
		swapComposite(data, dt, 0)
		return
	}
	switch dt.swapUnit() {
	case 2:
		swap16s(data)
	case 4:
		swap32s(data)
	case 8:
		swap64s(data)
	case 16:
		for i := 0; i+16 <= len(data); i += 16 {
			lo := binary.LittleEndian.Uint64(data[i:])
			hi := binary.LittleEndian.Uint64(data[i+8:])
			binary.LittleEndian.PutUint64(data[i:], bits.ReverseBytes64(hi))
			binary.LittleEndian.PutUint64(data[i+8:], bits.ReverseBytes64(lo))
		}
	}
}
