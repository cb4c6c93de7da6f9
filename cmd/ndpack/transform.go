package main

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"strings"
	"sync"

	"github.com/ndpack/ndpack/ndarray"
)

// This file is --field NAME (a record field, numpy's a['x']) and --astype
// DTYPE with --casting (numpy's a.astype(DTYPE, casting=...)): both make
// an array source into another whose data is converted a block of
// elements at a time as it is read, so that memory stays small whatever
// the size of the array.

// astypeSpec is --astype DTYPE under --casting RULE.
type astypeSpec struct {
	to      ndarray.DType
	text    string          // DTYPE as given, for messages
	casting ndarray.Casting // numpy's rule, same_kind unless given
	// warn is told what numpy would warn of in a block converted (nil:
	// nothing is said).
	warn func(from, to ndarray.DType, w ndarray.CastWarnings)
}

// parseAstype reads --astype and --casting; nil when --astype is not set.
func parseAstype(dtype, casting string) (*astypeSpec, error) {
	rule := ndarray.SameKind
	if casting != "" {
		var err error
		if rule, err = ndarray.ParseCasting(casting); err != nil {
			return nil, usageError("--casting %s: want one of no, equiv, safe, same_kind, unsafe", casting)
		}
	}
	if dtype == "" {
		return nil, nil
	}
	dt, err := parseDTypeFlag(dtype)
	if err != nil {
		return nil, usageError("--astype %v", err)
	}
	return &astypeSpec{to: dt, text: dtype, casting: rule}, nil
}

// check says why from cannot be converted, or nil: numpy's can_cast
// (ndarray's Casting.Allows) decides, and ndarray converts what it allows
// between numbers, and any dtype to itself in the other byte order.
func (s *astypeSpec) check(from ndarray.DType) error {
	if sameDType(from, s.to) || s.casting.Check(from, s.to) == nil {
		return nil
	}
	switch {
	case s.to.IsSubarray():
		return fmt.Errorf("--astype %s: %s is a subarray dtype, whose shape numpy's astype adds to the array's; ndpack converts element to element", s.text, s.to)
	case from.IsRecord() || s.to.IsRecord():
		return fmt.Errorf("--astype %s: cannot convert %s to %s: a record array's values are converted field by field (--field NAME picks one)", s.text, from, s.to)
	case !s.casting.Allows(from, s.to):
		hint := ""
		if ndarray.Unsafe.Check(from, s.to) == nil {
			hint = " (--casting unsafe converts anyway)"
		}
		return fmt.Errorf("--astype %s: cannot cast %s to %s under --casting %s, as numpy's can_cast says%s", s.text, from, s.to, s.casting, hint)
	}
	return fmt.Errorf("--astype %s: cannot convert %s to %s: ndpack converts between bool, integers, floats of up to 8 bytes and complex of up to 16 (and a dtype to itself)", s.text, from, s.to)
}

// convert converts n elements of dtype from.
func (s *astypeSpec) convert(from ndarray.DType, data []byte, n int) ([]byte, error) {
	if sameDType(from, s.to) {
		return data, nil
	}
	in := &ndarray.Array{DType: from, Shape: []int{n}, Data: data}
	if s.warn != nil {
		if w := ndarray.CastWarningsOf(in, s.to); w.Any() {
			s.warn(from, s.to, w)
		}
	}
	a, err := ndarray.Unsafe.AsType(in, s.to)
	if err != nil {
		return nil, err
	}
	return a.Data, nil
}

// castWarner returns an astypeSpec's warn that says on w, once a kind,
// what numpy warns of in an astype of the input named name: numpy's
// words, and the dtypes.
func castWarner(w io.Writer, name string) func(from, to ndarray.DType, cw ndarray.CastWarnings) {
	var mu sync.Mutex
	said := map[string]bool{}
	return func(from, to ndarray.DType, cw ndarray.CastWarnings) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range []struct {
			on         bool
			numpy, why string
		}{
			{cw.Invalid > 0, "invalid value encountered in cast", "NaN, infinity or out of range"},
			{cw.Overflow > 0, "overflow encountered in cast", "values past its range became inf"},
			{cw.DiscardsImaginary, "casting complex values to real discards the imaginary part", "the real parts kept"},
		} {
			if m.on && !said[m.numpy] {
				said[m.numpy] = true
				fmt.Fprintf(w, "ndpack: warning: %s\n", oneLine(fmt.Sprintf("%s: %s (%s to %s: %s), as numpy warns", displayName(name), m.numpy, from, to, m.why)))
			}
		}
	}
}

// apply makes src the array converted to the spec's dtype. Element order is
// kept, a Fortran-order array's included.
func (s *astypeSpec) apply(src arraySource) arraySource {
	if s == nil || src.err != nil {
		return src
	}
	if src.objects != nil {
		return refuseObjects(src, "--astype")
	}
	if err := s.check(src.dtype); err != nil {
		src.err = err
		return src
	}
	from := src.dtype
	return mapElements(src, s.to, nil, false, func(data []byte, n int) ([]byte, error) {
		return s.convert(from, data, n)
	})
}

// applyField makes src the field name of its records, numpy's a[name]: of
// the field's dtype, its shape src's followed by the field's subarray
// shape. A path "outer.inner" names a field of a nested record.
func applyField(src arraySource, name string) arraySource {
	if name == "" || src.err != nil {
		return src
	}
	if src.objects != nil {
		return refuseObjects(src, "--field")
	}
	rec := src.dtype
	if !rec.IsRecord() {
		src.err = fmt.Errorf("--field %s: %s is not a record dtype; it has no fields", name, rec)
		return src
	}
	v, err := (&ndarray.Array{DType: rec, Shape: []int{0}}).Field(name)
	if err != nil {
		var fields []string
		for _, f := range rec.Fields() {
			fields = append(fields, peertext.Line(f.Name))
		}
		src.err = fmt.Errorf("--field %s: no such field; the records have %s", name, strings.Join(fields, ", "))
		return src
	}
	sub := v.Shape[1:]
	return mapElements(src, v.DType, sub, len(sub) > 0, func(data []byte, n int) ([]byte, error) {
		fv, err := (&ndarray.Array{DType: rec, Shape: []int{n}, Data: data}).Field(name)
		if err != nil {
			return nil, err
		}
		a, err := fv.Array()
		if err != nil {
			return nil, err
		}
		return a.Data, nil
	})
}

// refuseObjects marks an object array as one --field or --astype cannot
// take.
func refuseObjects(src arraySource, flag string) arraySource {
	src.objects = nil
	src.err = fmt.Errorf("%s: an object array (numpy dtype O) holds Python objects, not numbers or records", flag)
	return src
}

// mapElements makes src an array of dtype to, each element of src
// becoming sub-shaped elements of to (sub nil: one), converted by conv a
// block of elements at a time. With rowMajor, a Fortran-order src is read
// whole and transposed first, since its elements' order would change.
func mapElements(src arraySource, to ndarray.DType, sub []int, rowMajor bool, conv func(data []byte, n int) ([]byte, error)) arraySource {
	inSize := src.dtype.ItemSize
	per := 1
	for _, d := range sub {
		per *= d
	}
	outSize := to.ItemSize * per
	elems := int64(0)
	if inSize > 0 {
		elems = src.size / int64(inSize)
	} else {
		elems = 1
		for _, d := range src.shape {
			elems *= int64(d)
		}
	}
	orig := src
	whole := func(a *ndarray.Array) (*ndarray.Array, error) {
		n := a.Len()
		data, err := conv(a.Data, n)
		if err != nil {
			return nil, err
		}
		return &ndarray.Array{DType: to, Shape: append(append([]int{}, a.Shape...), sub...), Data: data}, nil
	}
	src.dtype = to
	src.shape = append(append([]int{}, orig.shape...), sub...)
	src.size = elems * int64(outSize)
	switch {
	case orig.fortran && rowMajor, inSize == 0:
		src.fortran = false
		src.open = func() (io.ReadCloser, error) {
			a, err := readArray(orig)
			if err != nil {
				return nil, err
			}
			if a, err = whole(a); err != nil {
				return nil, err
			}
			return nopCloser{bytes.NewReader(a.Data)}, nil
		}
	default:
		src.open = func() (io.ReadCloser, error) {
			rc, err := orig.open()
			if err != nil {
				return nil, err
			}
			block := max(1, (256<<10)/max(inSize, outSize))
			br := &blockReader{rc: rc, inSize: inSize, inLeft: elems * int64(inSize), buf: make([]byte, block*inSize), conv: conv, left: src.size}
			if _, ok := rc.(interface{ Len() int }); ok {
				return sizedBlockReader{br}, nil
			}
			return br, nil
		}
	}
	if orig.rows != nil {
		rows := orig.rows
		src.rows = func(start, stop int) (*ndarray.Array, error) {
			a, err := rows(start, stop)
			if err != nil {
				return nil, err
			}
			return whole(a)
		}
	}
	return src
}

// blockReader reads the data of an array converted a block of elements at
// a time.
type blockReader struct {
	rc      io.ReadCloser
	inSize  int
	inLeft  int64 // input bytes not yet read
	buf     []byte
	conv    func(data []byte, n int) ([]byte, error)
	pending []byte
	left    int64 // converted bytes not yet read
	err     error
}

func (b *blockReader) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		if b.inLeft == 0 {
			b.err = io.EOF
			continue
		}
		n, err := io.ReadFull(b.rc, b.buf[:min(int64(len(b.buf)), b.inLeft)])
		if err == io.EOF {
			err = io.ErrUnexpectedEOF // the input said it held more
		}
		if err != nil {
			b.err = err
			return 0, err
		}
		b.inLeft -= int64(n)
		if b.pending, err = b.conv(b.buf[:n], n/b.inSize); err != nil {
			b.err = err
			return 0, err
		}
	}
	k := copy(p, b.pending)
	b.pending = b.pending[k:]
	b.left -= int64(k)
	return k, nil
}

func (b *blockReader) Close() error { return b.rc.Close() }

// sizedBlockReader is a blockReader over data that was checked to be
// there: its Len lets the array be read whole into one allocation.
type sizedBlockReader struct{ *blockReader }

// Len returns the converted bytes left.
func (s sizedBlockReader) Len() int { return int(s.left) }

// mapSources makes every array of fa f of it.
func (fa *fileArrays) mapSources(f func(arraySource) arraySource) {
	if fa.member != nil {
		member, whole := fa.member, fa.wholeMember
		fa.member = func(i int) arraySource { return f(member(i)) }
		if whole != nil {
			fa.wholeMember = func(i int) arraySource { return f(whole(i)) }
		}
		fa.arrays = nil
		return
	}
	for i := range fa.arrays {
		fa.arrays[i] = f(fa.arrays[i])
	}
}

// withFieldAndType makes fa's arrays their field (if field is not "")
// converted as as says (if not nil).
func (fa *fileArrays) withFieldAndType(field string, as *astypeSpec) {
	if field == "" && as == nil {
		return
	}
	fa.mapSources(func(src arraySource) arraySource {
		return as.apply(applyField(src, field))
	})
}

// sameDType reports whether a and b are one dtype (records by their
// fields, not by where they were made).
func sameDType(a, b ndarray.DType) bool { return a == b || a.String() == b.String() }

// maxHeaderFlag is --max-header-size N: the longest .npy header text read,
// as numpy's max_header_size.
type maxHeaderFlag int

func (m *maxHeaderFlag) String() string { return fmt.Sprint(int(*m)) }

func (m *maxHeaderFlag) Set(s string) error {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 || fmt.Sprint(n) != s {
		return fmt.Errorf("want a number of bytes, 1 or more")
	}
	*m = maxHeaderFlag(n)
	return nil
}

// addMaxHeaderFlag adds --max-header-size to fs.
func addMaxHeaderFlag(fs *flag.FlagSet) *maxHeaderFlag {
	m := new(maxHeaderFlag)
	fs.Var(m, "max-header-size", "")
	return m
}

// addMaxSizeFlag adds --max-size SIZE to fs: the largest array a command
// reads into memory whole (0, unset: half the memory the process may use).
func addMaxSizeFlag(fs *flag.FlagSet) *byteSize {
	m := new(byteSize)
	fs.Var(m, "max-size", "")
	return m
}
