package msgarrays

import (
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
)

// Found is a value Find took for an array: where it is and, if asked for,
// by what path.
type Found struct {
	// Path is the map keys and list indices that lead to it from the value
	// Find began at, joined by "/" ("obs/image", "frames/0"); a key that
	// is not a string is "#" and its entry's index. It is "" for the value
	// itself, and when Find was not asked for paths.
	Path string
	At   int // offset of its first byte in the message
	Len  int // its length
}

// Find walks the msgpack value at b[at:] and returns what in it, at any
// depth, is taken for an array of s (see the package doc), in byte order,
// and where the value ends. It reads only the framing: At then reads each
// array and says whether it is a valid one. Lists and maps may nest
// maxDepth deep below the value (the value itself, a list, is at depth 1),
// and every length is checked against the bytes b holds before it is
// used. paths says whether to name what it finds.
//
// It fails with an *Error matching ndarray.ErrTruncated (b ends inside a
// value or a length claims more than it holds), ErrTooDeep, or
// ErrMalformed (a byte msgpack never uses), whose Offset is where in b,
// and whose Path is that of the value at fault when paths are asked for.
func (s Set) Find(b []byte, at, maxDepth int, paths bool) ([]Found, int, error) {
	f := finder{s: s, b: b, maxDepth: maxDepth, paths: paths}
	end, err := f.value(at, 0)
	if err != nil {
		return nil, 0, err
	}
	return f.found, end, nil
}

type finder struct {
	s        Set
	b        []byte
	maxDepth int
	paths    bool
	segs     []seg
	found    []Found
}

// seg is one step of the path to a value: a map key (bytes of the
// message, not copied) or a list index. Paths are made into strings only
// for what is found, so that walking millions of small values allocates
// nothing.
type seg struct {
	key   []byte
	index int
}

func (f *finder) path() string {
	var sb strings.Builder
	for i, s := range f.segs {
		if i > 0 {
			sb.WriteByte('/')
		}
		if s.key != nil {
			sb.Write(s.key)
		} else {
			sb.WriteString(strconv.Itoa(s.index))
		}
	}
	return sb.String()
}

func (f *finder) add(at, n int) {
	found := Found{At: at, Len: n}
	if f.paths {
		found.Path = f.path()
	}
	f.found = append(f.found, found)
}

// fail is the error of the value the walk is at, at offset at.
func (f *finder) fail(class error, at int, detail string) error {
	e := &Error{Class: class, Offset: at, Detail: detail}
	if f.paths {
		e.Path = f.path()
	}
	return e
}

// skip steps over the value at b[at:] without looking into it, inside
// depth lists and maps, and returns where it ends.
func (f *finder) skip(at, depth int) (int, error) {
	limit := f.maxDepth - depth
	if limit <= 0 {
		if t := mpwire.NextType(f.b[at:]); t == mpwire.ArrayType || t == mpwire.MapType {
			return 0, f.tooDeep(at)
		}
		limit = 1 // not a list or map: it nests nothing
	}
	n, err := mpwalk.Len(f.b[at:], mpwalk.Limits{MaxDepth: limit})
	if err != nil {
		c := walkClasses.Classify(err)
		if c.Kind == mpwalk.TooDeep {
			return 0, f.tooDeep(at + int(c.Offset))
		}
		return 0, f.fail(c.Class, at, c.Detail)
	}
	return at + n, nil
}

func (f *finder) tooDeep(at int) error {
	return f.fail(ndarray.ErrTooDeep, at, "lists and maps nest more than "+strconv.Itoa(f.maxDepth)+" deep")
}

var walkClasses = mpwalk.Classes{
	Invalid:     ndarray.ErrMalformed,
	OverBudget:  ndarray.ErrTruncated,
	TooDeep:     ndarray.ErrTooDeep,
	TooCostly:   ndarray.ErrTooLarge,
	Ended:       ndarray.ErrTruncated,
	EndedDetail: "the message ends inside a value",
	Other:       ndarray.ErrTruncated,
}

// value walks the value at b[at:], inside depth lists and maps.
func (f *finder) value(at, depth int) (int, error) {
	if at >= len(f.b) {
		return 0, f.fail(ndarray.ErrTruncated, at, "the message ends where a value should start")
	}
	switch mpwire.HeadOf(f.b[at]).Type {
	case mpwire.ExtType:
		end, err := f.skip(at, depth)
		if err == nil && f.s.takesExt(f.b[at:]) {
			f.add(at, end-at)
		}
		return end, err
	case mpwire.ArrayType:
		return f.list(at, depth)
	case mpwire.MapType:
		return f.dict(at, depth)
	}
	return f.skip(at, depth)
}

func (f *finder) list(at, depth int) (int, error) {
	if depth >= f.maxDepth {
		return 0, f.tooDeep(at)
	}
	n, rest, err := mpwire.ReadArrayHeaderBytes(f.b[at:])
	if err != nil {
		return 0, f.wireError(err, at, "list")
	}
	next := len(f.b) - len(rest)
	for i := range n {
		f.segs = append(f.segs, seg{index: i})
		next, err = f.value(next, depth+1)
		f.segs = f.segs[:len(f.segs)-1]
		if err != nil {
			return 0, err
		}
	}
	return next, nil
}

// dict walks a map: one with a marker first is taken for an array at
// once; in one of 3 to 16 entries a later marker makes what was found in
// the entries before it void, and the map is taken for an array.
func (f *finder) dict(at, depth int) (int, error) {
	if depth >= f.maxDepth {
		return 0, f.tooDeep(at)
	}
	n, rest, err := mpwire.ReadMapHeaderBytes(f.b[at:])
	if err != nil {
		return 0, f.wireError(err, at, "map")
	}
	next := len(f.b) - len(rest)
	mark, marked := len(f.found), false
	for i := range n {
		key, after, kerr := mpwire.ReadStringOrBinZC(f.b[next:])
		valueAt := len(f.b) - len(after)
		if kerr != nil {
			// A key that is not a string: stepped over, its value named
			// by its place.
			if valueAt, err = f.skip(next, depth+1); err != nil {
				return 0, err
			}
			key = []byte("#" + strconv.Itoa(i))
		} else if f.s.markerOf(key) && (i == 0 || n >= minMarked && n <= maxMarked) {
			marked = true
		}
		if marked {
			// What is left of an array's map is its fields: stepped over.
			next, err = f.skip(valueAt, depth+1)
		} else {
			f.segs = append(f.segs, seg{key: key})
			next, err = f.value(valueAt, depth+1)
			f.segs = f.segs[:len(f.segs)-1]
		}
		if err != nil {
			return 0, err
		}
	}
	if marked {
		f.found = f.found[:mark]
		f.add(at, next-at)
	}
	return next, nil
}

// wireError is a wire reader's failure to read the header of a list or
// map (what) at offset at: a count past the bytes present, the input
// ending.
func (f *finder) wireError(err error, at int, what string) error {
	off, detail, truncated := mpwire.Describe(err, what, what, what)
	if truncated {
		return f.fail(ndarray.ErrTruncated, at+off, detail)
	}
	return f.fail(ndarray.ErrMalformed, at+off, detail)
}
