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
// which AsType makes for every plain dtype. Values convert as numpy's
// astype converts them, a NaN, an infinity or a float out of an
// integer's range included (as numpy does on x86-64: INT_MIN for int32);
// CastWarningsOf counts those numpy warns of.
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
		c.putUint(b, s.toBits(dt.Kind == 'i', size), size)
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

// toBits returns the value as the two's-complement bits of an integer of
// size bytes: integers wrap, floats convert as floatToInt converts them.
func (s scalar) toBits(signed bool, size int) uint64 {
	f := s.f
	switch s.kind {
	case 'i':
		return uint64(s.i)
	case 'b', 'u':
		return s.u
	case 'c':
		f = real(s.c)
	}
	bits, _ := floatToInt(f, size, signed)
	return bits
}

// floatToInt converts f to the two's-complement bits of an integer of
// size bytes as numpy's cast computes it on x86-64, where C leaves it
// undefined outside the target's range: truncated toward zero by the
// processor's conversion to a 32-bit integer (for targets of up to 2
// bytes and int32) or to a 64-bit one (int64, uint32), then cut to the
// target's bytes; a uint64 as compilers convert to it (through int64,
// less 2^63 for values from 2^63). A NaN, an infinity or a value that
// conversion cannot hold gives its integer indefinite, the smallest
// integer (INT_MIN for int32, 0 once cut to a byte), and invalid: what
// numpy warns of as "invalid value encountered in cast".
func floatToInt(f float64, size int, signed bool) (bits uint64, invalid bool) {
	switch {
	case size == 8 && !signed:
		if f >= 1<<63 {
			b, bad := truncate(f-(1<<63), 64)
			return b ^ 1<<63, bad
		}
		return truncate(f, 64)
	case size == 8 || size == 4 && !signed:
		return truncate(f, 64)
	}
	return truncate(f, 32)
}

// truncate is the processor's conversion of f to a signed integer of
// width bits (cvttsd2si), as two's-complement bits: the smallest integer
// and invalid for NaN, infinities and values out of range.
func truncate(f float64, width int) (uint64, bool) {
	limit := math.Ldexp(1, width-1) // 2^31 or 2^63, exact
	t := math.Trunc(f)
	if math.IsNaN(t) || t < -limit || t >= limit {
		if width == 32 {
			return 0xFFFFFFFF80000000, true // INT32_MIN, sign-extended
		}
		return 1 << 63, true
	}
	return uint64(int64(t)), false
}

// CastWarnings is what numpy warns of when it converts values from one
// dtype to another (a.astype(dt)): a warning numpy gives once for the
// whole conversion, and how many elements gave it. AsType converts those
// elements as numpy does and warns of nothing; CastWarningsOf counts them.
type CastWarnings struct {
	// Invalid counts the floats, or complex numbers' real parts,
	// converted to an integer that cannot hold them: NaN, infinities and
	// values out of the range of the processor's conversion (numpy's
	// RuntimeWarning "invalid value encountered in cast").
	Invalid int
	// Overflow counts the finite values that become infinite in a
	// narrower float ("overflow encountered in cast").
	Overflow int
	// DiscardsImaginary is numpy's ComplexWarning, "Casting complex
	// values to real discards the imaginary part": complex values
	// converted to a real dtype other than bool.
	DiscardsImaginary bool
}

// Any reports whether numpy warns of anything.
func (w CastWarnings) Any() bool { return w.Invalid > 0 || w.Overflow > 0 || w.DiscardsImaginary }

// CastWarningsOf counts what numpy warns of when it converts a's values
// to dt (see CastWarnings). It is zero for a conversion AsType does not
// compute, and for an invalid a.
func CastWarningsOf(a *Array, dt DType) CastWarnings {
	var w CastWarnings
	from := a.DType
	if !from.IsPlain() || !dt.IsPlain() || !convertible(from) || !convertible(dt) || a.Validate() != nil {
		return w
	}
	w.DiscardsImaginary = from.Kind == 'c' && dt.Kind != 'c' && dt.Kind != 'b'
	toInt := dt.Kind == 'i' || dt.Kind == 'u'
	toFloat := dt.Kind == 'f' || dt.Kind == 'c'
	if (toInt && from.Kind != 'f' && from.Kind != 'c') || (!toInt && !toFloat) || dt.Kind == 'c' && from.Kind == 'c' && dt.ItemSize >= from.ItemSize {
		return w
	}
	width := dt.ItemSize
	if dt.Kind == 'c' {
		width /= 2
	}
	if toFloat && width == 8 {
		return w // no value of ndpack's dtypes overflows a float64
	}
	src := elementCodec(from)
	for i, n := 0, a.Len(); i < n; i++ {
		s := src.get(a.Data[i*from.ItemSize:])
		switch {
		case toInt:
			f := s.f
			if s.kind == 'c' {
				f = real(s.c)
			}
			if _, bad := floatToInt(f, dt.ItemSize, dt.Kind == 'i'); bad {
				w.Invalid++
			}
		case overflows(s.real(width), width) || s.kind == 'c' && dt.Kind == 'c' && overflows(imag(s.c), width):
			w.Overflow++
		}
	}
	return w
}

// overflows reports whether the finite v becomes infinite as a float of
// width bytes (2 or 4).
func overflows(v float64, width int) bool {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return false
	}
	if width == 4 {
		return math.IsInf(float64(float32(v)), 0)
	}
	return math.IsInf(float16.ToFloat64(float16.FromFloat64(v)), 0)
}
