package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/internal/msgarrays"
	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/ndarray"
)

// A msgpack document's arrays as a command's members: one array, or the
// entries of a map, or the arrays a list holds, with those nested at any
// depth in lists and maps named by their paths. What is an array, and
// where the arrays are, is internal/msgarrays' to say.

// errNoMsgArray is a msgpack value that is no array of any encoding.
var errNoMsgArray = fmt.Errorf("a msgpack value that is no array: %w", ndarray.ErrNotArray)

// describer returns the function that describes the array (ext 110 or a
// dialect's map) at b[at:] and returns its length; section opens its
// data. A value that is no array fails with errNoMsgArray.
func (fa *fileArrays) describer(b []byte, section func(off, n int64) io.ReadCloser) describeFunc {
	return func(name string, at int) (arraySource, int, error) {
		h, ok, err := msgarrays.All.At(b[at:])
		if errors.Is(err, dialect.ErrPickle) {
			fa.noteDialect(dialect.MsgpackNumpy.String())
			maxObjects := fa.maxObjects
			if !fa.objects {
				maxObjects = -1
			}
			return pickledObjects(name, b[at:], err, maxObjects)
		}
		if err != nil {
			return arraySource{}, 0, err
		}
		if !ok {
			return arraySource{}, 0, errNoMsgArray
		}
		fa.noteDialect(h.Encoding.String())
		off, n := int64(at+h.DataOffset), int64(h.DataLen)
		open := func() (io.ReadCloser, error) { return section(off, n), nil }
		if h.Scalar != nil {
			open = func() (io.ReadCloser, error) { return nopCloser{bytes.NewReader(h.Scalar.Data)}, nil }
		}
		return arraySource{name: name, dtype: h.DType, shape: h.Shape, fortran: h.Fortran, size: n, dataOffset: off, open: open}, h.Len, nil
	}
}

// msgpackArrays describes the arrays of a msgpack document that fills b:
// one array, or a map of names to arrays, each as ext 110 or as a map of
// the msgpack-numpy or OpenPI dialect. Every entry of a map is checked now,
// but kept only as where it starts and described again when asked for (under
// guard, which reads b safely), so that a map of millions of small arrays
// costs eight bytes an entry, not a description each.
func (fa *fileArrays) msgpackArrays(b []byte, section func(off, n int64) io.ReadCloser, guard func(func() error) error) error {
	describe := fa.describer(b, section)
	if _, isArray, _ := msgarrays.All.At(b); isArray {
		a, n, err := describe("", 0)
		if err == nil && a.err != nil && a.objects == nil {
			err = a.err // a lone object array, without --objects: as a lone .npy of one
		}
		if err != nil {
			return err
		}
		if n != len(b) {
			return fmt.Errorf("msgpack: %d %s after the array", len(b)-n, plural(int64(len(b)-n), "byte"))
		}
		fa.arrays = []arraySource{a}
		return nil
	}
	if len(b) > 0 && mpwire.NextType(b) == mpwire.ArrayType {
		// A list (of arrays, of maps holding arrays ...): every array in
		// it, at any depth, by its path.
		nested, n, err := fa.nestedArrays(b, 0, "", describe)
		if err != nil {
			return err
		}
		if n != len(b) {
			return fmt.Errorf("msgpack: %d %s after the document", len(b)-n, plural(int64(len(b)-n), "byte"))
		}
		if len(nested) == 0 && fa.objects {
			fa.noteDialect("a list of values")
			fa.arrays = []arraySource{listObjects(b)}
			return nil
		}
		if len(nested) == 0 && fa.values {
			fa.arrays = []arraySource{loneValue(b)}
			return nil
		}
		if len(nested) == 0 {
			return fmt.Errorf("msgpack: a list holding no array: %w", errNotArrays)
		}
		fa.lazyMembers(0, nil, nested, describe, guard)
		return nil
	}
	if len(b) > 0 && fa.values && mpwire.NextType(b) != mpwire.MapType {
		// A message that is one value (a number, a string): itself.
		if n, err := mpwalk.Len(b, mpwalk.Limits{MaxDepth: mpwalk.DefaultMaxDepth}); err == nil && n == len(b) {
			fa.arrays = []arraySource{loneValue(b)}
			return nil
		}
	}
	return fa.msgpackMap(b, describe, guard)
}

// loneValue is the message b, which is no array and holds none, as the
// one member of its file: listed by its value.
func loneValue(b []byte) arraySource {
	return arraySource{err: fmt.Errorf("msgpack: %w", errNotArray), value: b}
}

// msgpackMap describes the entries of the map that fills b, and the
// arrays nested in its lists and maps.
func (fa *fileArrays) msgpackMap(b []byte, describe describeFunc, guard func(func() error) error) error {
	count, at, err := mapHeader(b)
	if err != nil {
		return err
	}
	// entry describes the map entry whose key starts at b[at:], and returns
	// where the next one starts.
	entry := func(i, at int) (arraySource, int, error) {
		key, next, err := mapKey(b, at)
		if err != nil {
			return arraySource{}, 0, fmt.Errorf("msgpack: map key %d: %w (%w)", i, err, errNotArrays)
		}
		a, n, err := describe(key, next)
		if errors.Is(err, errNoMsgArray) {
			// Another value (a prompt, an id, a list or map that may hold
			// arrays, found by nestedArrays): listed, not read.
			n, err = mpwalk.Len(b[next:], mpwalk.Limits{MaxDepth: mpwalk.DefaultMaxDepth})
			a = arraySource{name: key, err: fmt.Errorf("map value %q: %w", key, errNotArray)}
			if err == nil {
				a.value = b[next : next+n]
			}
		}
		if err != nil {
			return arraySource{}, 0, fmt.Errorf("msgpack: map value %q: %w", key, err)
		}
		return a, next + n, nil
	}
	starts := make([]int, 0, min(count, len(b)/2))
	var nested []msgarrays.Found
	anArray := false
	for i := 0; i < count; i++ {
		starts = append(starts, at)
		a, next, err := entry(i, at)
		if err != nil {
			return err
		}
		if a.err != nil && !errors.Is(a.err, dialect.ErrPickle) && isContainer(b, at) {
			// A list or map under this key: the arrays inside it are
			// members too, named by their paths.
			_, valueAt, _ := mapKey(b, at)
			found, _, err := fa.nestedArrays(b, valueAt, a.name, describe)
			if err != nil {
				return err
			}
			nested = append(nested, found...)
		}
		anArray = anArray || a.err == nil
		at = next
	}
	if at != len(b) {
		return fmt.Errorf("msgpack: %d %s after the document", len(b)-at, plural(int64(len(b)-at), "byte"))
	}
	if !anArray && len(nested) == 0 && !fa.values {
		return fmt.Errorf("msgpack: a map holding no array: %w", errNotArrays)
	}
	fa.lazyMembers(count, func(i int) (arraySource, error) {
		a, _, err := entry(i, starts[i])
		return a, err
	}, nested, describe, guard)
	return nil
}

type describeFunc func(name string, at int) (arraySource, int, error)

// nestedArrays finds the arrays in the msgpack value at b[at:], a list or
// a map, at any depth below (within the message depth limit), checks each
// with describe, and returns them with their paths (base, then keys and
// list indices joined by "/") and where the value ends.
func (fa *fileArrays) nestedArrays(b []byte, at int, base string, describe describeFunc) ([]msgarrays.Found, int, error) {
	depth := mpwalk.DefaultMaxDepth
	if base != "" {
		depth-- // below a key of the document's map
	}
	found, end, err := msgarrays.All.Find(b, at, depth, true)
	var e *msgarrays.Error
	if errors.As(err, &e) {
		e.Path = joinPath(base, e.Path)
		return nil, 0, err
	}
	for i := range found {
		found[i].Path = joinPath(base, found[i].Path)
		if _, _, err := describe(found[i].Path, found[i].At); err != nil {
			return nil, 0, fmt.Errorf("msgpack: %s: %w", peertext.Line(found[i].Path), err)
		}
	}
	return found, end, nil
}

func joinPath(base, path string) string {
	switch {
	case base == "":
		return path
	case path == "":
		return base
	}
	return base + "/" + path
}

// isContainer reports whether the value of the map entry whose key starts
// at b[at:] is a list or a map (not an array encoding).
func isContainer(b []byte, at int) bool {
	_, valueAt, err := mapKey(b, at)
	if err != nil || valueAt >= len(b) {
		return false
	}
	t := mpwire.NextType(b[valueAt:])
	return t == mpwire.ArrayType || t == mpwire.MapType
}

// lazyMembers makes fa's members: the count entries of a top-level map
// (described by entry when asked for), then the arrays found nested in
// lists and maps, each described when asked for under guard.
func (fa *fileArrays) lazyMembers(count int, entry func(i int) (arraySource, error), nested []msgarrays.Found, describe describeFunc, guard func(func() error) error) {
	fa.n = count + len(nested)
	fa.member = func(i int) arraySource {
		var a arraySource
		err := guard(func() (err error) {
			if i < count {
				a, err = entry(i)
				return err
			}
			a, _, err = describe(nested[i-count].Path, nested[i-count].At)
			return err
		})
		if err != nil {
			return arraySource{err: err}
		}
		return a
	}
}

// noteDialect records how the file's arrays are encoded.
func (fa *fileArrays) noteDialect(d string) {
	switch {
	case fa.dialect == "":
		fa.dialect = d
	case fa.dialect != d && !strings.Contains(fa.dialect, d):
		fa.dialect += " and " + d
	}
}

// mapHeader reads a msgpack map header at the start of b.
func mapHeader(b []byte) (count, at int, err error) {
	if len(b) == 0 {
		return 0, 0, fmt.Errorf("msgpack: the input is empty (%w)", errNotArrays)
	}
	n, rest, err := mpwire.ReadMapHeaderBytes(b)
	var e *mpwire.Error
	switch {
	case err == nil:
		return n, len(b) - len(rest), nil
	case errors.As(err, &e) && e.Claim:
		return 0, 0, fmt.Errorf("msgpack: map claims %d %s, the input holds %d %s", e.Need, plural(int64(e.Need), "entry"), len(b), plural(int64(len(b)), "byte"))
	case errors.Is(err, mpwire.ErrTruncated):
		return 0, 0, fmt.Errorf("msgpack: the input ends inside the map header (%d %s)", len(b), plural(int64(len(b)), "byte"))
	}
	return 0, 0, fmt.Errorf("msgpack: %w", errNotArrays)
}

// mapKey reads a str (or bin) key at b[at:] and returns it and where its
// value starts.
func mapKey(b []byte, at int) (string, int, error) {
	if at >= len(b) {
		return "", 0, fmt.Errorf("the input ends at byte %d, where the key should start", at)
	}
	key, rest, err := mpwire.ReadStringOrBinZC(b[at:])
	var e *mpwire.Error
	switch {
	case err == nil:
		return string(key), len(b) - len(rest), nil
	case !errors.As(err, &e):
		return "", 0, err
	case e.Err == mpwire.ErrType:
		return "", 0, fmt.Errorf("msgpack type byte 0x%02x at byte %d is not a string", b[at], at)
	case e.Claim:
		return "", 0, fmt.Errorf("the key at byte %d is %d %s long, the input ends after %d of them", at, e.Need, plural(int64(e.Need), "byte"), e.Remain)
	}
	return "", 0, fmt.Errorf("the input ends at byte %d, inside the header of the key at byte %d", len(b), at)
}

func isExtHeader(c byte) bool { return mpwire.HeadOf(c).Type == mpwire.ExtType }
