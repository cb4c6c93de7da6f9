package npybridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ndpack/ndpack/internal/boundedio"
	"github.com/ndpack/ndpack/ndarray"
)

// sizeKnown reports whether the size given with r is a fact rather than a
// claim: r is a local file or memory, whose bytes are there to be read, so
// that what they hold may be allocated at once. The size of any other
// io.ReaderAt (a remote object, whose size a server stated) is a claim, and
// what is read from it goes into memory that grows as its bytes arrive.
func sizeKnown(r io.ReaderAt) bool {
	switch r := r.(type) {
	case *os.File, *bytes.Reader, *strings.Reader:
		return true
	case *tailReader:
		return sizeKnown(r.r)
	}
	return false
}

// readRange reads the n bytes at off of r (what names them for errors):
// into one allocation when r's size is known, else into memory that grows
// as they arrive, through one stream when r can give one.
func readRange(r io.ReaderAt, off, n int64, what string) ([]byte, error) {
	if sizeKnown(r) || n <= boundedio.FirstChunk {
		data := make([]byte, n)
		return data, readAtFull(r, data, off, what)
	}
	rr, done := rangeReader(r, off, n)
	defer done()
	data, err := boundedio.ReadFull(rr, int(n))
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errAt(ndarray.ErrTruncated, off, "%s needs %d bytes, the input has %d there", what, n, len(data))
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s at byte %d: %w", what, off, err)
	}
	return data, nil
}

// rowSpan resolves the rows start:stop of an array of n rows as Python
// slices along the first axis do: negative indexes count from the end, and
// both are clamped to [0, n]; a stop before the start selects nothing.
func rowSpan(n, start, stop int) (first, count int) {
	clamp := func(i int) int {
		if i < 0 {
			i = max(0, i+n)
		}
		return min(i, n)
	}
	first, last := clamp(start), clamp(stop)
	return first, max(0, last-first)
}

// rows checks that h's rows can be read alone and returns the byte range
// (from the first data byte) of rows start:stop and the header of the
// result.
func (h *Header) rows(start, stop int) (off, n int64, out *Header, err error) {
	if len(h.Shape) == 0 {
		return 0, 0, nil, errAt(ErrInvalidArray, -1, "a 0-d array has no rows")
	}
	first, count := rowSpan(h.Shape[0], start, stop)
	rowBytes := int64(0)
	if h.Shape[0] > 0 {
		rowBytes = h.DataLen() / int64(h.Shape[0])
	}
	out = &Header{DType: h.DType, Shape: append([]int{count}, h.Shape[1:]...), FortranOrder: h.FortranOrder,
		Major: h.Major, Minor: h.Minor, DataOffset: h.DataOffset + int64(first)*rowBytes}
	return int64(first) * rowBytes, int64(count) * rowBytes, out, nil
}

// ReadRowsAt reads the rows start:stop (Python slice rules along the first
// axis: negative indexes count from the end, both are clamped to the
// array, so math.MaxInt means "to the end") of the NPY file of size bytes
// that r holds. It reads the header (one read of at most 4 KiB, more only
// for a longer header) and then exactly the rows' bytes, in one read: on a
// remote object (remote.Object) that is two requests whatever the file's
// size. Of a Fortran-order array, whose rows are spread over all its data,
// it reads the rows' run in each column: in one read of the span from the
// first column's run to the last's when the rows are at least a quarter of
// it, else one read per column. The array is row-major either way.
// It fails as ReadHeader does, with an *ndarray.Error wrapping ndarray.ErrTruncated when
// size or r holds less than the header announces, ErrInvalidArray for a 0-d
// array, or with r's read error.
func (o ReadOptions) ReadRowsAt(r io.ReaderAt, size int64, start, stop int) (*ndarray.Array, error) {
	pre := make([]byte, min(size, memberPrefix))
	if err := readAtFull(r, pre, 0, "the NPY header"); err != nil {
		return nil, err
	}
	var hr io.Reader = bytes.NewReader(pre)
	if size > int64(len(pre)) {
		hr = io.MultiReader(hr, io.NewSectionReader(r, int64(len(pre)), size-int64(len(pre))))
	}
	h, err := o.ReadHeader(hr)
	if err != nil {
		return nil, err
	}
	if end := h.DataOffset + h.DataLen(); end > size {
		return nil, errAt(ndarray.ErrTruncated, h.DataOffset, "the header announces %d data bytes (shape %s of %s), the file has %d",
			h.DataLen(), ndarray.FormatShape(h.Shape), h.DType, max(0, size-h.DataOffset))
	}
	off, n, out, err := h.rows(start, stop)
	if err != nil {
		return nil, err
	}
	if h.columnMajor() {
		data, err := h.fortranRows(r, h.DataOffset, start, stop)
		if err != nil {
			return nil, err
		}
		return o.inOrder(ndarray.FromColumnMajor(h.DType, out.Shape, data))
	}
	at := h.DataOffset + off
	var data []byte
	if at+n <= int64(len(pre)) {
		data = bytes.Clone(pre[at : at+n])
	} else if data, err = readRange(r, at, n, "the rows"); err != nil {
		return nil, err
	}
	return o.inOrder(out.arrayFrom(data))
}

// ReadRows reads the rows start:stop (Python slice rules along the first
// axis, as ReadOptions.ReadRowsAt) of the member called name. Of a stored
// member (np.savez) it reads the header and then exactly the rows' bytes,
// in one read; a deflated member (np.savez_compressed) is decompressed as
// far as the last row, in bounded memory beyond the rows. A Fortran-order
// member is read as ReadRowsAt reads a Fortran-order file (a deflated one
// is decompressed whole, in bounded memory beyond the rows).
// It fails as NPZ.Open does, with an error wrapping ErrInvalidArray for a
// 0-d array, ndarray.ErrTruncated when the member ends early, or r's read error.
func (z *NPZ) ReadRows(name string, start, stop int) (*ndarray.Array, error) {
	e, err := z.member(name)
	if err != nil {
		return nil, err
	}
	h, m, err := z.openMember(name, e, e.method == zipDeflate)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	off, n, out, err := h.rows(start, stop)
	if err != nil {
		return nil, memberError(name, err)
	}
	if h.columnMajor() {
		var data []byte
		if e.method == zipStore {
			data, err = h.fortranRows(z.r, m.dataAt+h.DataOffset, start, stop)
		} else {
			data, err = h.fortranRowsFrom(&memberData{m: m, left: h.DataLen(), h: h, name: name}, start, stop, false, sizeKnown(z.r))
		}
		if err != nil {
			return nil, memberError(name, err)
		}
		a, err := ndarray.FromColumnMajor(h.DType, out.Shape, data)
		if err != nil {
			return nil, memberError(name, err)
		}
		return z.opts.inOrder(a, nil)
	}
	var data []byte
	if e.method == zipStore {
		// The data lies as is at m.dataAt + h.DataOffset; the member's
		// size was checked against its header when it was opened.
		if data, err = readRange(z.r, m.dataAt+h.DataOffset+off, n, "the rows"); err != nil {
			return nil, memberError(name, err)
		}
	} else {
		d := &memberData{m: m, left: h.DataLen(), h: h, name: name}
		if _, err := io.CopyN(io.Discard, d, off); err != nil {
			return nil, err
		}
		if data, err = z.readClaimed(d, n); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = memberError(name, errAt(ndarray.ErrTruncated, h.DataOffset+off, "the member ends inside the rows"))
			}
			return nil, err
		}
	}
	a, err := out.arrayFrom(data)
	if err != nil {
		return nil, memberError(name, err)
	}
	return z.opts.inOrder(a, nil)
}

// columnMajor reports whether the data is column-major with more than one
// dimension: its rows are not contiguous.
func (h *Header) columnMajor() bool { return h.FortranOrder && len(h.Shape) > 1 }

// fortranLayout gives, for the rows start:stop of a column-major array,
// the first row, the bytes of the rows in one column (run), the bytes of a
// whole column, and the number of columns; need is run x columns.
func (h *Header) fortranLayout(start, stop int) (first, run, column, cols int64) {
	f, count := rowSpan(h.Shape[0], start, stop)
	item := int64(h.DType.ItemSize)
	if count == 0 || item == 0 {
		return 0, 0, 0, 0
	}
	column = int64(h.Shape[0]) * item
	return int64(f), int64(count) * item, column, h.DataLen() / column
}

// fortranRows reads, from the column-major data at base in r, the rows
// start:stop of every column, column after column (their column-major
// bytes). Of an r whose size is a claim, the span of the rows is streamed
// through, into memory that grows as they arrive.
func (h *Header) fortranRows(r io.ReaderAt, base int64, start, stop int) ([]byte, error) {
	first, run, column, cols := h.fortranLayout(start, stop)
	if run*cols == 0 {
		return []byte{}, nil
	}
	at := base + first*int64(h.DType.ItemSize)
	span := (cols-1)*column + run
	if !sizeKnown(r) {
		rr, done := rangeReader(r, at, span)
		defer done()
		data, err := h.fortranRowsFrom(rr, start, stop, true, false)
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errAt(ndarray.ErrTruncated, at, "the rows need %d bytes from byte %d, the archive ends before them", span, at)
		}
		return data, err
	}
	data := make([]byte, run*cols)
	if int64(len(data))*4 >= span {
		buf := make([]byte, span) // at most 4 times the rows
		if err := readAtFull(r, buf, at, "the rows"); err != nil {
			return nil, err
		}
		for c := int64(0); c < cols; c++ {
			copy(data[c*run:(c+1)*run], buf[c*column:])
		}
		return data, nil
	}
	for c := int64(0); c < cols; c++ {
		if err := readAtFull(r, data[c*run:(c+1)*run], at+c*column, "the rows"); err != nil {
			return nil, err
		}
	}
	return data, nil
}

// fortranRowsFrom is fortranRows from a stream of the column-major data
// from its first byte, or, atRun, from the first row's item in the first
// column. Unless the data's size is known (a local file or memory), the
// rows go into memory that grows as they arrive.
func (h *Header) fortranRowsFrom(r io.Reader, start, stop int, atRun, known bool) ([]byte, error) {
	first, run, column, cols := h.fortranLayout(start, stop)
	var data []byte
	if known {
		data = make([]byte, 0, run*cols)
	}
	for c := int64(0); c < cols; c++ {
		var skip int64
		switch {
		case c > 0:
			skip = column - run // past the rest of a column, to the run in the next
		case !atRun:
			skip = first * int64(h.DType.ItemSize) // to the run in the first column
		}
		if _, err := io.CopyN(io.Discard, r, skip); err != nil {
			return nil, err
		}
		var err error
		if data, err = boundedio.Append(data, r, int(run)); err != nil {
			return nil, err
		}
	}
	if data == nil {
		data = []byte{}
	}
	return data, nil
}
