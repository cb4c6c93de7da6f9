package ndarray

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/ndpack/ndpack/internal/float16"
)

// AsType returns a new Array holding a's values converted to dtype dt, if
// c allows it and AsType computes it (see Check; ErrType otherwise). It
// always copies. Every rule but No allows a change of byte order alone,
// which AsType makes for every plain dtype.
//
// It fails with Validate's error (ErrDType, ErrShape or ErrDataLength)
// when a, or ErrDType when dt, is not valid.
func (c Casting) AsType(a *Array, dt DType) (*Array, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	if err := dt.Validate(); err != nil {
		return nil, err
	}
	if err := c.Check(a.DType, dt); err != nil {
		return nil, err
	}
	n := a.Len()
	out := &Array{DType: dt, Shape: append([]int{}, a.Shape...), Data: make([]byte, n*dt.ItemSize)}
	if a.DType.WithOrder(dt.Order) == dt {
		copy(out.Data, a.Data)
		if a.DType != dt {
			SwapBytes(out.Data, a.DType)
		}
		return out, nil
	}
	if convertFast(out.Data, a.Data, a.DType, dt, n) {
		return out, nil
	}
	src, dst := elementCodec(a.DType), elementCodec(dt)
	for i := 0; i < n; i++ {
		dst.put(out.Data[i*dt.ItemSize:], src.get(a.Data[i*a.DType.ItemSize:]), dt)
	}
	return out, nil
}

// Check returns the error AsType would return for converting values of
// dtype from to dtype to, or nil if it converts them: a caller that
// converts a stream block by block asks once, before the first block.
// The error matches ErrType and says why: c does not allow the conversion
// (as numpy's np.can_cast says), or numpy allows it but AsType does not
// compute it. AsType converts numbers (bool, integers, floats of up to 8
// bytes, complex of up to 16) between each other, and any plain dtype to
// itself in the other byte order; never a record or subarray dtype, whose
// byte order changes with Array.ToOrder and whose values convert field by
// field.
func (c Casting) Check(from, to DType) error {
	if !from.IsPlain() || !to.IsPlain() {
		return newError(ErrType, fmt.Sprintf("cannot convert %s to %s: AsType converts plain dtypes only; a record's byte order changes with ToOrder, its values through its fields", from, to))
	}
	if !c.Allows(from, to) {
		return newError(ErrType, fmt.Sprintf("cannot convert %s to %s with casting %q", from, to, c))
	}
	if from.WithOrder(to.Order) != to && (!convertible(from) || !convertible(to)) {
		return newError(ErrType, fmt.Sprintf("cannot convert %s to %s: numpy's %q casting allows it, but AsType converts only numbers (bool, integers, floats of up to 8 bytes, complex of up to 16) and a dtype to itself in the other byte order", from, to, c))
	}
	return nil
}

// convertible reports whether AsType computes values of dt: bool,
// integers, floats of up to 8 bytes, complex of up to 16.
func convertible(dt DType) bool {
	switch dt.Kind {
	case 'b', 'i', 'u':
		return true
	case 'f':
		return dt.ItemSize <= 8
	case 'c':
		return dt.ItemSize <= 16
	}
	return false
}

// ValuesAs returns a's values converted to T, as SameKind.AsType(a, DTypeOf[T]())
// would, in a new slice: unlike Values, it always copies, and it refuses
// what SameKind refuses (ErrType): use Unsafe.AsType then Values for
// those. Its errors are AsType's: ErrType for a conversion SameKind refuses
// or a record dtype, Validate's error (ErrDType, ErrShape or ErrDataLength)
// for an invalid a.
func ValuesAs[T Element](a *Array) ([]T, error) {
	conv, err := SameKind.AsType(a, DTypeOf[T]())
	if err != nil {
		return nil, err
	}
	return Values[T](conv)
}

// scalar is one element on its way between dtypes, held in the widest Go
// type of its kind so that no conversion rounds twice.
type scalar struct {
	kind byte
	i    int64
	u    uint64
	f    float64
	c    complex128
}

// codec reads and writes elements of one dtype.
type codec struct {
	order binary.ByteOrder
	dt    DType
}

func elementCodec(dt DType) codec {
	var o binary.ByteOrder = binary.LittleEndian
	if dt.Order == '>' {
		o = binary.BigEndian
	}
	return codec{o, dt}
}

func (c codec) uint(b []byte) uint64 {
	switch c.dt.ItemSize {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(c.order.Uint16(b))
	case 4:
		return uint64(c.order.Uint32(b))
	}
	return c.order.Uint64(b)
}

func (c codec) putUint(b []byte, v uint64, size int) {
	switch size {
	case 1:
		b[0] = byte(v)
	case 2:
		c.order.PutUint16(b, uint16(v))
	case 4:
		c.order.PutUint32(b, uint32(v))
	default:
		c.order.PutUint64(b, v)
	}
}

func (c codec) float(b []byte, size int) float64 {
	switch size {
	case 2:
		return float16.ToFloat64(uint16(c.order.Uint16(b)))
	case 4:
		return float64(math.Float32frombits(c.order.Uint32(b)))
	}
	return math.Float64frombits(c.order.Uint64(b))
}

func (c codec) get(b []byte) scalar {
	s := scalar{kind: c.dt.Kind}
	switch c.dt.Kind {
	case 'b':
		s.u = uint64(b2u(b[0] != 0))
	case 'i':
		shift := 64 - 8*c.dt.ItemSize
		s.i = int64(c.uint(b)<<shift) >> shift
	case 'u':
		s.u = c.uint(b)
	case 'f':
		s.f = c.float(b, c.dt.ItemSize)
	case 'c':
		half := c.dt.ItemSize / 2
		s.c = complex(c.float(b, half), c.float(b[half:], half))
	}
	return s
}

func (c codec) put(b []byte, s scalar, dt DType) {
	size := dt.ItemSize
	switch dt.Kind {
	case 'b':
		b[0] = b2u(s.isNonZero())
	case 'i', 'u':
		c.putUint(b, s.toBits(dt.Kind == 'i'), size)
	case 'f':
		c.putFloat(b, s, size)
	case 'c':
		half := size / 2
		re, im := s.real(half), 0.0
		if s.kind == 'c' {
			im = imag(s.c)
		}
		c.putFloat(b, scalar{kind: 'f', f: re}, half)
		c.putFloat(b[half:], scalar{kind: 'f', f: im}, half)
	}
}

func (c codec) putFloat(b []byte, s scalar, size int) {
	switch size {
	case 2:
		c.order.PutUint16(b, float16.FromFloat64(s.real(8)))
	case 4:
		c.order.PutUint32(b, math.Float32bits(float32(s.real(4))))
	default:
		c.order.PutUint64(b, math.Float64bits(s.real(8)))
	}
}

func (s scalar) isNonZero() bool {
	switch s.kind {
	case 'i':
		return s.i != 0
	case 'f':
		return s.f != 0
	case 'c':
		return s.c != 0
	}
	return s.u != 0
}

// real returns the value as a float of the given width, rounding an integer
// once, straight to that width, as a C cast does.
func (s scalar) real(width int) float64 {
	switch s.kind {
	case 'i':
		if width == 4 {
			return float64(float32(s.i))
		}
		return float64(s.i)
	case 'f':
		return s.f
	case 'c':
		return real(s.c)
	}
	if width == 4 {
		return float64(float32(s.u))
	}
	return float64(s.u)
}

// toBits returns the value as the two's-complement bits of an integer:
// integers wrap, floats truncate toward zero, as C casts do.
func (s scalar) toBits(signed bool) uint64 {
	f := s.f
	switch s.kind {
	case 'i':
		return uint64(s.i)
	case 'b', 'u':
		return s.u
	case 'c':
		f = real(s.c)
	}
	if !signed && f >= 0 {
		return uint64(f)
	}
	return uint64(int64(f))
}
