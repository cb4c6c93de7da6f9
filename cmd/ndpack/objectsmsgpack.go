package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"unsafe"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// An object array leaves as plain msgpack values nested by its shape:
// lists of lists, its elements as msgpack has them (None nil, str str,
// bytes bin, lists and tuples arrays, dicts maps in the pickle's order with
// their keys as they are, so that {b'a': 1, 'a': 2} keeps both, numeric
// arrays as --to writes arrays). What msgpack cannot hold (an integer over
// 64 bits, a complex number, a set, a dict key that is a container) is an
// error naming it, found before a byte is written. The values are written
// as they are walked, never copied: a list the pickle shares in a million
// places is written a million times from one Go value, and the size of
// all that was bounded when the pickle was read (--max-objects-size).

// errNotPlain: an element msgpack has no type for.
var errNotPlain = errors.New("has no msgpack type")

// plainWriter writes object arrays as plain msgpack to w.
type plainWriter struct {
	w     io.Writer
	buf   []byte
	array func(dst []byte, a *ndarray.Array) ([]byte, error)
	// checked holds the containers already checked, by identity, so that
	// checking a shared one costs once.
	checked map[identity]bool
}

// identity names a non-empty slice by its first element and length.
type identity struct {
	p unsafe.Pointer
	n int
}

func identityOf[T any](s []T) (identity, bool) {
	if len(s) == 0 {
		return identity{}, false
	}
	return identity{unsafe.Pointer(unsafe.SliceData(s)), len(s)}, true
}

// newPlainWriter writes arrays found among the values with array (ext 110
// or a dialect's map).
func newPlainWriter(w io.Writer, array func(dst []byte, a *ndarray.Array) ([]byte, error)) *plainWriter {
	return &plainWriter{w: w, array: array, checked: map[identity]bool{}}
}

// checkArray refuses an object array msgpack cannot hold, before a byte
// of it is written.
func (p *plainWriter) checkArray(a *npybridge.ObjectArray) error { return p.check(a, 0) }

// writeChecked writes an object array that checkArray accepted, nested by
// its shape.
func (p *plainWriter) writeChecked(a *npybridge.ObjectArray) error {
	if err := p.nested(a.Values, a.Shape, 0); err != nil {
		return err
	}
	return p.flush()
}

func (p *plainWriter) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	_, err := p.w.Write(p.buf)
	p.buf = p.buf[:0]
	return err
}

// spill writes the buffer out once it holds 64 KiB.
func (p *plainWriter) spill() error {
	if len(p.buf) < 64<<10 {
		return nil
	}
	return p.flush()
}

// check refuses what msgpack cannot hold, naming the element.
func (p *plainWriter) check(a *npybridge.ObjectArray, depth int) error {
	if n, err := ndarray.NumElements(a.Shape); err != nil || n != len(a.Values) {
		return fmt.Errorf("an object array of shape %s holds %d %s", ndarray.FormatShape(a.Shape), len(a.Values), plural(int64(len(a.Values)), "value"))
	}
	for i, v := range a.Values {
		if err := p.checkValue(v, depth); err != nil {
			return fmt.Errorf("object array element %d: %w", i, err)
		}
	}
	return nil
}

func (p *plainWriter) checkValue(v any, depth int) error {
	if depth > mpwalk.DefaultMaxDepth {
		return fmt.Errorf("nested more than %d deep", mpwalk.DefaultMaxDepth)
	}
	seen := func(id identity, ok bool) bool {
		if !ok {
			return false
		}
		if p.checked[id] {
			return true
		}
		p.checked[id] = true
		return false
	}
	items := func(xs []any) error {
		if len(xs) > mpwire.MaxLen {
			return fmt.Errorf("a list of %d items is more than msgpack can frame", len(xs))
		}
		for _, x := range xs {
			if err := p.checkValue(x, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	switch x := v.(type) {
	case nil, bool, int64, float64:
		return nil
	case string:
		return checkLen(len(x))
	case []byte:
		return checkLen(len(x))
	case *ndarray.Array:
		if t, ok := numpyText(x); ok {
			return p.checkValue(t, depth) // np.str_ and np.bytes_ are str and bytes
		}
		// An empty array of its dtype says whether it can be written.
		_, err := p.array(nil, &ndarray.Array{DType: x.DType, Shape: []int{0}})
		return err
	case *big.Int:
		if x.IsInt64() || x.IsUint64() {
			return nil
		}
		return fmt.Errorf("the int %s %w (msgpack integers have 64 bits)", pyInt(x), errNotPlain)
	case []any:
		if seen(identityOf(x)) {
			return nil
		}
		return items(x)
	case npybridge.Tuple:
		if seen(identityOf(x)) {
			return nil
		}
		return items(x)
	case npybridge.Dict:
		if seen(identityOf(x)) {
			return nil
		}
		if len(x) > mpwire.MaxLen {
			return fmt.Errorf("a dict of %d items is more than msgpack can frame", len(x))
		}
		for _, it := range x {
			switch it.Key.(type) {
			case nil, bool, int64, float64, string, []byte:
			case *big.Int:
			default:
				return fmt.Errorf("a dict key that is a %s %w as a map key here", pythonType(it.Key), errNotPlain)
			}
			if err := p.checkValue(it.Key, depth+1); err != nil {
				return err
			}
			if err := p.checkValue(it.Value, depth+1); err != nil {
				return err
			}
		}
		return nil
	case *npybridge.ObjectArray:
		if depth > mpwalk.DefaultMaxDepth-len(x.Shape) {
			return fmt.Errorf("nested more than %d deep", mpwalk.DefaultMaxDepth)
		}
		if seen(identityOf(x.Values)) {
			return nil
		}
		return p.check(x, depth+len(x.Shape))
	}
	return fmt.Errorf("a %s %w", pythonType(v), errNotPlain)
}

func checkLen(n int) error {
	if n > mpwire.MaxLen {
		return fmt.Errorf("a str or bytes of %d bytes is more than msgpack can frame", n)
	}
	return nil
}

// nested writes row-major values as lists nested by shape; a 0-d array is
// its one value.
func (p *plainWriter) nested(values []any, shape []int, depth int) error {
	if len(shape) == 0 {
		if len(values) == 1 {
			return p.value(values[0], depth)
		}
		p.buf = mpwire.AppendNil(p.buf)
		return nil
	}
	p.buf = mpwire.AppendArrayHeader(p.buf, shape[0])
	if shape[0] == 0 {
		return nil
	}
	n := len(values) / shape[0]
	for i := range shape[0] {
		if err := p.nested(values[i*n:(i+1)*n], shape[1:], depth+1); err != nil {
			return err
		}
	}
	return nil
}

// value writes one checked value.
func (p *plainWriter) value(v any, depth int) error {
	if err := p.spill(); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		p.buf = mpwire.AppendNil(p.buf)
	case bool:
		p.buf = mpwire.AppendBool(p.buf, x)
	case int64:
		p.buf = mpwire.AppendInt(p.buf, x)
	case *big.Int:
		if x.IsInt64() {
			p.buf = mpwire.AppendInt(p.buf, x.Int64())
		} else {
			p.buf = mpwire.AppendUint(p.buf, x.Uint64())
		}
	case float64:
		p.buf = mpwire.AppendFloat64(p.buf, x)
	case string:
		if err := p.large(mpwire.AppendStringHeader(p.buf, len(x)), unsafe.Slice(unsafe.StringData(x), len(x))); err != nil {
			return err
		}
	case []byte:
		if err := p.large(mpwire.AppendBinHeader(p.buf, len(x)), x); err != nil {
			return err
		}
	case *ndarray.Array:
		if t, ok := numpyText(x); ok {
			return p.value(t, depth)
		}
		b, err := p.array(p.buf, x)
		if err != nil {
			return err
		}
		p.buf = b
	case []any:
		return p.list(x, depth)
	case npybridge.Tuple:
		return p.list(x, depth)
	case npybridge.Dict:
		p.buf = mpwire.AppendMapHeader(p.buf, len(x))
		for _, it := range x {
			if err := p.value(it.Key, depth+1); err != nil {
				return err
			}
			if err := p.value(it.Value, depth+1); err != nil {
				return err
			}
		}
	case *npybridge.ObjectArray:
		return p.nested(x.Values, x.Shape, depth)
	default:
		return fmt.Errorf("a %s %w", pythonType(v), errNotPlain)
	}
	return nil
}

// large appends data after the header now in buf, writing a long one
// straight out rather than through the buffer.
func (p *plainWriter) large(buf, data []byte) error {
	p.buf = buf
	if len(data) < 64<<10 {
		p.buf = append(p.buf, data...)
		return nil
	}
	if err := p.flush(); err != nil {
		return err
	}
	_, err := p.w.Write(data)
	return err
}

func (p *plainWriter) list(xs []any, depth int) error {
	p.buf = mpwire.AppendArrayHeader(p.buf, len(xs))
	for _, x := range xs {
		if err := p.value(x, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// pyIntDigits is the most digits an int is printed with in full: Python
// itself refuses to make a str of more (sys.get_int_max_str_digits).
const pyIntDigits = 4300

// pyInt shows a big integer as Python would, cut short as long strings
// are: at most 40 digits and how many there are. One of more than 4300
// digits is not converted at all (that takes time growing faster than its
// length): its digits are estimated from its bits.
func pyInt(x *big.Int) string {
	if bits := x.BitLen(); float64(bits)*math.Log10(2) > pyIntDigits {
		sign := ""
		if x.Sign() < 0 {
			sign = "-"
		}
		return fmt.Sprintf("%s<int of about %d digits>", sign, int(float64(bits)*math.Log10(2))+1)
	}
	s := x.String()
	digits := len(s)
	if x.Sign() < 0 {
		digits--
	}
	if len(s) > 40 {
		return fmt.Sprintf("%s...(%d digits)", s[:40], digits)
	}
	return s
}
