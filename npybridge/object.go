package npybridge

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/pickle"
	"github.com/ndpack/ndpack/ndarray"
)

// Object arrays (descr '|O') hold Python objects, stored as a pickle after
// the header: np.save writes pickle.dump(array, protocol=3), and np.load
// runs it only with allow_pickle=True, because unpickling can call any
// Python function. ReadObjects reads them with a pickle reader that calls
// nothing: it builds Go values for Python's data types and knows by name
// the few numpy functions an object array's pickle uses; a pickle that
// names anything else (a class of its own, os.system, datetime) is refused
// with ErrPickle, naming it and its offset.

var (
	// ErrObjectArray: the file is an object array, which Read refuses and
	// ReadObjects reads only with ReadOptions.AllowObjects set. It wraps
	// ErrUnsupported.
	ErrObjectArray = fmt.Errorf("%w: object array", ErrUnsupported)
	// ErrPickle: an object array's pickle is not one that is read: it
	// names a global or uses an opcode that would run code, is malformed,
	// exceeds the reader's limits (then it also matches ndarray.ErrTooLarge), or
	// is not the array its header describes.
	ErrPickle = errors.New("unreadable pickle")
)

// ObjectArray is a numpy object array: its shape and its elements in
// row-major order (a Fortran-order file's too: numpy pickles the elements
// of any object array in C order).
//
// Elements are Go values for Python's: nil (None), bool, int64 (or
// *big.Int beyond 64 bits), float64, complex128, string, []byte (bytes and
// bytearray), []any (list), Tuple, Dict, Set, a nested numeric numpy array
// as a row-major *ndarray.Array (a ragged array of arrays; Fortran-order
// ones are transposed, other-endian ones swapped as numpy swaps them), a
// nested object array as an *ObjectArray, and a numpy scalar
// (np.float64(1.5)) as an *ndarray.Array of shape (), which keeps its
// dtype.
type ObjectArray struct {
	Shape  []int
	Values []any
}

// Tuple is a Python tuple inside an object array.
type Tuple = pickle.Tuple

// Dict is a Python dict inside an object array: its items in order, a
// slice of DictItem, since keys may be tuples. Its Get method looks up a
// string, number, bool or nil key.
type Dict = pickle.Dict

// DictItem is one key and value of a Dict.
type DictItem = pickle.DictItem

// Set is a Python set or frozenset inside an object array: its elements in
// the pickle's order.
type Set = pickle.Set

// Len returns the number of elements.
func (a *ObjectArray) Len() int { return len(a.Values) }

// Strings returns the elements as strings, row-major, if every element is
// a str (the commonest object array: np.array(['a', 'bc'], dtype=object)).
// Otherwise it fails naming the first element that is not.
// The error wraps ErrInvalidArray.
func (a *ObjectArray) Strings() ([]string, error) {
	out := make([]string, len(a.Values))
	for i, v := range a.Values {
		s, ok := v.(string)
		if !ok {
			return nil, errAt(ErrInvalidArray, -1, "element %d is %s, not a str", i, describeValue(v))
		}
		out[i] = s
	}
	return out, nil
}

// Arrays returns the elements as arrays, row-major, if every element is a
// numeric numpy array (a ragged array of arrays, as
// np.array([np.zeros(2), np.zeros(3)], dtype=object) makes). Otherwise it
// fails naming the first element that is not.
// The error wraps ErrInvalidArray.
func (a *ObjectArray) Arrays() ([]*ndarray.Array, error) {
	out := make([]*ndarray.Array, len(a.Values))
	for i, v := range a.Values {
		arr, ok := v.(*ndarray.Array)
		if !ok {
			return nil, errAt(ErrInvalidArray, -1, "element %d is %s, not a numeric array", i, describeValue(v))
		}
		out[i] = arr
	}
	return out, nil
}

// describeValue names an element's type as Python would.
func describeValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "None"
	case string:
		return "a str"
	case []byte:
		return "a bytes"
	case []any:
		return "a list"
	case Tuple:
		return "a tuple"
	case Dict:
		return "a dict"
	case Set:
		return "a set"
	case *ObjectArray:
		return "an object array"
	case *ndarray.Array:
		if len(v.Shape) == 0 {
			return "a numpy scalar of " + v.DType.String()
		}
		return "an array of " + v.DType.String()
	}
	return fmt.Sprintf("a %T", v)
}

// isPlainObjectDescr reports an object dtype that is not a subarray:
// "O", "|O", "O8", "object".
func isPlainObjectDescr(s string) bool {
	if !isObjectDescr(s) {
		return false
	}
	if s != "" && strings.IndexByte("<>=|", s[0]) >= 0 {
		s = s[1:]
	}
	return s == "" || s[0] < '0' || s[0] > '9'
}

// objectRefusal is the error for an object array read without asking for
// one: it says what would read it.
func objectRefusal(at int64, descr string, allowed bool) error {
	if allowed {
		return &ndarray.Error{Pkg: "npybridge", Err: ErrObjectArray, Offset: at, Detail: fmt.Sprintf("descr %q is an object array (pickle), which only ReadObjects reads, not Read", descr)}
	}
	return &ndarray.Error{Pkg: "npybridge", Err: ErrObjectArray, Offset: at, Option: "ReadOptions.AllowObjects",
		Detail: fmt.Sprintf("descr %q is an object array (pickle), which is read, as data and running nothing, only when allowed", descr)}
}

// ReadObjects reads an NPY file holding an object array from r: its header,
// then the pickle after it, up to the pickle's STOP (bytes after it are not
// read, as np.load does not read them). o.AllowObjects must be set.
//
// Nothing in the pickle is run. It is read into memory at once when r
// says it holds at most 64 MiB more, else in growing chunks, which stop
// soon after its STOP (a pickle.Scanner finds it as the bytes arrive),
// and what it builds is bounded: nesting to 1000
// levels, and the pickle's bytes, its values' memory and their size
// written out (each value the pickle shares counted at every place it
// appears) by o.MaxObjectsSize, by default DefaultObjectsFactor times the
// pickle's bytes plus DefaultObjectsSlack, so that a memo bomb or a
// hostile length is refused, with ErrPickle and ndarray.ErrTooLarge, before it
// costs more. The pickle must build a numpy object array of the header's
// shape.
func (o ReadOptions) ReadObjects(r io.Reader) (*ObjectArray, error) {
	h, err := o.readHeader(r, o.AllowObjects, "OpenNPZ")
	if err != nil {
		return nil, err
	}
	if !h.objects {
		return nil, errAt(ErrUnsupported, -1, "the array is %s, not an object array: Read reads it", h.DType)
	}
	r = sizedReader(r)
	first := int64(firstPickleChunk)
	if l, ok := r.(interface{ Len() int }); ok && l.Len() <= wholePickle {
		first = int64(l.Len()) // all of it, at once
	}
	return o.readPickle(h, r, first, -1)
}

// ReadObjects reads the member called name, an object array, as
// ReadOptions.ReadObjects reads a file; the archive must have been opened
// with AllowObjects set. The member's decompressed size is what its zip
// directory declares, checked against what its compressed bytes can hold
// before anything is read.
// It fails as ReadOptions.ReadObjects does (ErrObjectArray without
// AllowObjects, ErrPickle, ndarray.ErrTooLarge, ndarray.ErrTruncated), and with ErrNoMember
// for a name the archive lacks.
func (z *NPZ) ReadObjects(name string) (*ObjectArray, error) {
	e, err := z.member(name)
	if err != nil {
		return nil, err
	}
	m, err := openZipMember(z.r, e, &z.inflaters, true)
	if err != nil {
		return nil, memberError(name, err)
	}
	defer m.Close()
	if e.usize > e.maxBytes() {
		return nil, memberError(name, errAt(ndarray.ErrTruncated, -1, "the member declares %d bytes; %d deflated bytes decompress to at most %d",
			e.usize, e.csize, e.maxBytes()))
	}
	h, err := z.opts.readHeader(m, z.opts.AllowObjects, "")
	if err != nil {
		return nil, memberError(name, err)
	}
	if !h.objects {
		return nil, memberError(name, errAt(ErrUnsupported, -1, "the array is %s, not an object array: Read reads it", h.DType))
	}
	if uint64(h.DataOffset) > e.usize {
		return nil, memberError(name, errAt(ndarray.ErrTruncated, -1, "the member's %d bytes end inside its header", e.usize))
	}
	// Memory grows as the pickle decompresses, never to a size the
	// directory merely claims, and the allowance is the compressed
	// member's: deflate's 1000:1 does not multiply it.
	first := int64(firstPickleChunk)
	if rest := int64(e.usize) - h.DataOffset; rest <= wholePickle {
		first = rest // all of it, at once
	}
	a, err := z.opts.readPickle(h, m, first, int64(e.csize))
	if err != nil && errors.Is(err, io.ErrUnexpectedEOF) {
		err = truncated(err, h.DataOffset, "the pickle")
	}
	return a, memberError(name, err)
}

// Defaults of ReadOptions.MaxObjectsSize.
const (
	// DefaultObjectsFactor and DefaultObjectsSlack make the default
	// bound: DefaultObjectsFactor times the bytes the pickle takes in the
	// input, plus DefaultObjectsSlack. The densest pickle numpy writes,
	// an object array of None (one byte each, an interface of 16 bytes
	// once read), needs 16 times.
	DefaultObjectsFactor = 24
	DefaultObjectsSlack  = 64 << 20
)

// firstPickleChunk is the bytes of a pickle read at first; each further
// read doubles what was read, so that reading stops soon after STOP. An
// input that says it holds at most wholePickle bytes after the header is
// read whole at once.
const (
	firstPickleChunk = 64 << 10
	wholePickle      = 64 << 20
)

// objectsLimit is MaxObjectsSize, or its default for a pickle that takes
// stored bytes of the input.
func (o ReadOptions) objectsLimit(stored int64) int64 {
	if o.MaxObjectsSize > 0 {
		return o.MaxObjectsSize
	}
	if stored > (math.MaxInt64-DefaultObjectsSlack)/DefaultObjectsFactor {
		return math.MaxInt64
	}
	return DefaultObjectsFactor*stored + DefaultObjectsSlack
}

// readPickle reads the pickle after the header h from r, first bytes at
// first and then doubling what it has, up to the pickle's STOP (found by
// pickle.Scanner as the bytes arrive, so that the pickle is decoded once),
// and decodes it. stored is the bytes the pickle takes in the input, for
// the default limit (-1: the bytes read).
func (o ReadOptions) readPickle(h *Header, r io.Reader, first, stored int64) (*ObjectArray, error) {
	var buf []byte
	var sc pickle.Scanner
	want := max(first, 1)
	for {
		if o.MaxObjectsSize > 0 {
			want = min(want, o.MaxObjectsSize)
		}
		if int64(cap(buf)) < want {
			buf = append(make([]byte, 0, want), buf...)
		}
		n, err := io.ReadFull(r, buf[len(buf):want])
		buf = buf[:len(buf)+n]
		ended := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !ended {
			return nil, err
		}
		end, done := sc.Scan(buf)
		in := stored
		if in < 0 {
			in = int64(len(buf))
		}
		limit := o.objectsLimit(in)
		if done || ended {
			if done {
				buf = buf[:end]
			}
			return h.decodeObjects(buf, limit)
		}
		if int64(len(buf)) >= limit {
			return nil, &ndarray.Error{Pkg: "npybridge", Err: ErrPickle, Offset: h.DataOffset, Cause: codecerr.ErrTooLarge,
				Detail: fmt.Sprintf("the pickle is longer than %d bytes", limit), Option: "ReadOptions.MaxObjectsSize"}
		}
		want = min(2*int64(len(buf)), limit)
	}
}

// decodeObjects reads the pickle that follows the object array header h.
func (h *Header) decodeObjects(data []byte, limit int64) (*ObjectArray, error) {
	v, _, err := pickle.DecodePrefix(data, pickle.Options{
		MaxAlloc:    limit,
		MaxSize:     limit,
		ObjectArray: func(shape []int, values []any) any { return &ObjectArray{Shape: shape, Values: values} },
	})
	if err != nil {
		var pe *pickle.Error
		if !errors.As(err, &pe) {
			return nil, err
		}
		class := ErrPickle
		if errors.Is(pe, ndarray.ErrTruncated) {
			class = ndarray.ErrTruncated
		}
		// The reader's limits are, here, MaxObjectsSize.
		e := &ndarray.Error{Pkg: "npybridge", Err: class, Offset: h.DataOffset + pe.Offset, Detail: pe.Detail, Cause: pe.Err}
		if pe.Option != "" {
			e.Option = "ReadOptions.MaxObjectsSize"
		}
		return nil, e
	}
	a, ok := v.(*ObjectArray)
	if !ok {
		return nil, errAt(ErrPickle, h.DataOffset, "the pickle holds %s, not the object array the header describes", describeValue(v))
	}
	if !slices.Equal(a.Shape, h.Shape) {
		return nil, errAt(ErrPickle, h.DataOffset, "the pickle's array has shape %s, the header says %s",
			ndarray.FormatShape(a.Shape), ndarray.FormatShape(h.Shape))
	}
	return a, nil
}

// AppendObjects appends the NPY file np.save writes for the object array
// a: the header of descr '|O' and the pickle np.save makes with protocol
// 3, which np.load(allow_pickle=True) and ReadObjects read back equal.
//
// The elements may be nil, bool, Go's integers and *big.Int, float32 and
// float64, complex64 and complex128, string (valid UTF-8), []byte, []any,
// Tuple, Dict, Set, *ObjectArray, and numeric *ndarray.Array values (kinds
// b, i, u, f, c, S, U, V; one of shape () is written as a numpy scalar).
// The bytes are np.save's for the same Python objects when these are
// distinct objects except where CPython shares them (one-character
// strings, numpy's builtin dtypes).
// It fails with an error wrapping ErrInvalidArray when a is nil, its Values
// do not fill its Shape, or an element is of a type it cannot write; dst is
// then returned unchanged.
func AppendObjects(dst []byte, a *ObjectArray) ([]byte, error) {
	if a == nil {
		return dst, errAt(ErrInvalidArray, -1, "cannot write a nil *ObjectArray")
	}
	if n, err := ndarray.NumElements(a.Shape); err != nil || n != len(a.Values) {
		return dst, errAt(ErrInvalidArray, -1, "an object array of shape %s needs %s, it has %d", ndarray.FormatShape(a.Shape), codecerr.Count(n, "value"), len(a.Values))
	}
	out := appendHeader(dst, []byte("'|O'"), a.Shape)
	out, err := pickle.AppendObjectArray(out, a.Shape, a.Values, pickle.EncodeOptions{
		ObjectArray: func(v any) ([]int, []any, bool) {
			if o, ok := v.(*ObjectArray); ok && o != nil {
				return o.Shape, o.Values, true
			}
			return nil, nil, false
		},
	})
	if err != nil {
		var pe *pickle.Error
		if errors.As(err, &pe) {
			return dst, errAt(ErrInvalidArray, -1, "%s", pe.Detail)
		}
		return dst, err
	}
	return out, nil
}

// WriteObjects writes the object array a as an NPY file to w, as np.save
// writes it; see AppendObjects.
// It fails as AppendObjects does, or with w's write error.
func WriteObjects(w io.Writer, a *ObjectArray) error {
	b, err := AppendObjects(nil, a)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WriteObjects adds the object array a as the member NAME.npy.
// It fails as AppendObjects does, with ErrInvalidArray for an empty or
// repeated name, or with w's write error.
func (z *NPZWriter) WriteObjects(name string, a *ObjectArray) error {
	b, err := AppendObjects(nil, a)
	if err != nil {
		return memberError(name, err)
	}
	mw, err := z.create(name)
	if err != nil {
		return err
	}
	_, err = mw.Write(b)
	return err
}
