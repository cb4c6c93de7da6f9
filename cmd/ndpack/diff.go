package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

const diffUsage = `Usage: ndpack diff [--rtol R] [--atol A] [--equal-nan] A B

Compare the arrays of A and B, in any two formats (.npy, .npz, msgpack;
IN:NAME picks an npz member or a msgpack path, as convert takes it; A
and B may be URLs: http://, https:// or s3://BUCKET/KEY, read by Range
requests): exit 0 when their shapes and values are equal, 1 with a short
report when not (the first index that differs, how many do, the largest
absolute and relative differences), 2 on errors, as cmp and diff do.
Archives and maps are compared member by member, by name.

Values are equal as numpy.array_equal compares them (0.0 equals -0.0, NaN
and NaT equal nothing); with --rtol or --atol, as numpy.allclose does:
|a - b| <= atol + rtol * |b|, at the precision numpy computes it. Arrays
of different numeric dtypes (float32 and float64, int and float) compare
by value after numpy's promotion, and the report names both dtypes;
strings compare by their text, whatever their lengths. Records compare
field by field by value, as numpy compares them (the same field names in
the same order; padding and offsets never count), the tolerances applied
to each numeric field, and the report names the fields that differ.
timedelta64 values take the tolerances in counts of their unit, as
numpy.isclose takes them; datetime64 values are equal or not.

Options:
  --rtol R      relative tolerance (numpy.allclose's default: 1e-05 when
                --atol is given alone)
  --atol A      absolute tolerance (1e-08 when --rtol is given alone; inf
                for any finite difference)
  --equal-nan   NaN equals NaN, and NaT NaT (at the same place)
  --max-header-size N  read .npy headers of up to N bytes (default 10000,
                numpy's max_header_size)
` + remoteHelp + `  --max-size SIZE  the largest array read into memory whole (a
                Fortran-order one; default half the memory the process
                may use; 512M, 2G ...)

Examples:
  ndpack diff a.npy b.msgpack
  ndpack diff --rtol 1e-6 run.npz:image other.npz:image
  ndpack diff --rtol 1e-6 a.npy a_f4.npy   # a float32 copy against its source
  ndpack diff before.npz after.npz && echo same
  ndpack diff https://data.example.org/run.npz run.npz
`

// errTrouble marks the errors of a command whose exit status 1 already
// means something else (diff: the inputs differ): they exit 2.
var errTrouble = errors.New("trouble")

type troubleError struct{ err error }

func (e troubleError) Error() string   { return e.err.Error() }
func (e troubleError) Unwrap() []error { return []error{e.err, errTrouble} }

// diffOptions are how values are compared.
type diffOptions struct {
	tolerant   bool
	rtol, atol float64
	equalNaN   bool
	maxHeader  int   // --max-header-size
	maxSize    int64 // --max-size
	remote     remoteFlags
}

func runDiff(e env, args []string) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	rtol := fs.String("rtol", "", "")
	atol := fs.String("atol", "", "")
	equalNaN := fs.Bool("equal-nan", false, "")
	maxHeader := addMaxHeaderFlag(fs)
	maxSize := addMaxSizeFlag(fs)
	remoteSet := addRemoteFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := remoteSet.check(); err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError("want A and B, got %d %s", len(pos), plural(int64(len(pos)), "argument"))
	}
	o := diffOptions{equalNaN: *equalNaN, rtol: 1e-5, atol: 1e-8, maxHeader: int(*maxHeader), maxSize: int64(*maxSize), remote: *remoteSet}
	for _, t := range []struct {
		flag, text string
		v          *float64
	}{{"rtol", *rtol, &o.rtol}, {"atol", *atol, &o.atol}} {
		if t.text == "" {
			continue
		}
		f, err := strconv.ParseFloat(t.text, 64)
		if err != nil || f < 0 || math.IsNaN(f) {
			return usageError("--%s %s: want a tolerance of 0 or more", t.flag, t.text)
		}
		*t.v, o.tolerant = f, true
	}
	if pos[0] == "-" && pos[1] == "-" {
		return usageError("only one of A and B can be standard input")
	}
	same, err := o.diff(e, pos[0], pos[1])
	if err != nil {
		return troubleError{err}
	}
	if !same {
		return errReported
	}
	return nil
}

// diffInput is one side: its arrays, the ones asked for.
type diffInput struct {
	name   string // FILE[:NAME] as messages show it (shownName)
	fa     *fileArrays
	arrays []arraySource
}

// openDiffInput opens the arrays spec names (FILE or FILE:NAME), only the
// rows of rows if it is not nil.
func openDiffInput(e env, spec string, rows *rowRange, o inputOptions) (*diffInput, error) {
	path, member := splitMember(spec, "")
	f := formatOf(path)
	if isRegularFile(path) {
		f = "" // its first bytes tell, as for inspect: show and diff have no --from
	}
	fa, err := openInputArrays(path, e.stdin, f, o)
	if err != nil {
		return nil, errors.New(describe(path, err))
	}
	fa.withRows(rows)
	arrays, err := convertOptions{member: member}.pickFrom(fa)
	if err != nil {
		fa.close()
		return nil, errors.New(describe(path, err))
	}
	return &diffInput{name: shownName(path, member), fa: fa, arrays: arrays}, nil
}

// diff compares a and b, printing what differs; it reports whether they
// are the same.
func (o diffOptions) diff(e env, a, b string) (bool, error) {
	A, err := openDiffInput(e, a, nil, inputOptions{maxHeader: o.maxHeader, maxSize: o.maxSize, stderr: e.stderr, remote: o.remote})
	if err != nil {
		return false, err
	}
	defer A.fa.close()
	B, err := openDiffInput(e, b, nil, inputOptions{maxHeader: o.maxHeader, maxSize: o.maxSize, stderr: e.stderr, remote: o.remote})
	if err != nil {
		return false, err
	}
	defer B.fa.close()
	if len(A.arrays) == 1 && len(B.arrays) == 1 {
		return o.compare(e.stdout, A.name, B.name, A.arrays[0], B.arrays[0])
	}
	same := true
	byName := map[string]arraySource{}
	for _, x := range B.arrays {
		byName[x.name] = x
	}
	for _, x := range A.arrays {
		y, ok := byName[x.name]
		if !ok {
			fmt.Fprintf(e.stdout, "%s: only in %s\n", peertext.Line(x.name), peertext.Line(A.name))
			same = false
			continue
		}
		delete(byName, x.name)
		eq, err := o.compare(e.stdout, A.name+":"+x.name, B.name+":"+y.name, x, y)
		if err != nil {
			return false, err
		}
		same = same && eq
	}
	for _, y := range B.arrays {
		if _, left := byName[y.name]; left {
			fmt.Fprintf(e.stdout, "%s: only in %s\n", peertext.Line(y.name), peertext.Line(B.name))
			same = false
		}
	}
	return same, nil
}

// rowMajor returns a reader of an array's data in row-major order.
func rowMajor(s arraySource) (io.Reader, func(), error) {
	if s.fortran {
		arr, err := readArray(s)
		if err != nil {
			return nil, nil, err
		}
		return bytes.NewReader(arr.Data), func() {}, nil
	}
	rc, err := s.open()
	if err != nil {
		return nil, nil, err
	}
	return rc, func() { rc.Close() }, nil
}

// indexText is a flat row-major index as numpy's index tuple: (2, 0, 5).
func indexText(flat int64, shape []int) string {
	if len(shape) == 0 {
		return "()"
	}
	idx := make([]string, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		n := int64(max(shape[d], 1))
		idx[d] = strconv.FormatInt(flat%n, 10)
		flat /= n
	}
	if len(idx) == 1 {
		return "(" + idx[0] + ",)"
	}
	return "(" + strings.Join(idx, ", ") + ")"
}

// plural is noun for n things: "1 element", "2 elements", "3 entries",
// pluralised as the codecs' messages are (codecerr.Plural).
func plural(n int64, noun string) string {
	if n == 1 {
		return noun
	}
	return codecerr.Plural(noun)
}

// asValues converts n items of dt to T's dtype (float64 for real items,
// complex128 for complex ones).
func asValues[T ndarray.Element](b []byte, dt ndarray.DType, n int) ([]T, error) {
	arr, err := ndarray.New(dt, []int{n}, b)
	if err != nil {
		return nil, err
	}
	conv, err := ndarray.Unsafe.AsType(arr, ndarray.DTypeOf[T]())
	if err != nil {
		return nil, err
	}
	return ndarray.Values[T](conv)
}

// normalized is an item's bytes in little-endian order, so that items of
// the two byte orders of one dtype compare.
func normalized(item []byte, dt ndarray.DType) []byte {
	if dt.Order != '>' {
		return item
	}
	out := slices.Clone(item)
	unit := dt.ItemSize
	switch dt.Kind {
	case 'c':
		unit /= 2
	case 'U':
		unit = 4
	}
	for i := 0; i+unit <= len(out); i += unit {
		slices.Reverse(out[i : i+unit])
	}
	return out
}

// pyItem is an item as Python prints the numpy scalar: a float keeps its
// ".0" (nan, inf), a string is quoted as repr quotes it ('ab', b'ab').
func pyItem(dt ndarray.DType, item []byte) string {
	if dt.Kind == 'U' || dt.Kind == 'S' {
		return pyRepr(dt, item)
	}
	return scalarString(dt, item, numpyDefaults)
}
