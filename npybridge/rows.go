package npybridge

import (
	"bytes"
	"io"

	"github.com/ndpack/ndpack/ndarray"
)

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
	if h.FortranOrder && len(h.Shape) > 1 {
		return 0, 0, nil, errAt(ErrNotRowMajor, -1, "shape %s: each row is spread over the whole data; read the whole array", ndarray.FormatShape(h.Shape))
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
// size. A Fortran-order array of more than one dimension fails with
// ErrNotRowMajor, since its rows are spread over all its data.
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
		return nil, errAt(ErrTruncated, h.DataOffset, "the header announces %d data bytes (shape %s of %s), the file has %d",
			h.DataLen(), ndarray.FormatShape(h.Shape), h.DType, max(0, size-h.DataOffset))
	}
	off, n, out, err := h.rows(start, stop)
	if err != nil {
		return nil, err
	}
	data := make([]byte, n)
	at := h.DataOffset + off
	if at+n <= int64(len(pre)) {
		copy(data, pre[at:])
	} else if err := readAtFull(r, data, at, "the rows"); err != nil {
		return nil, err
	}
	return o.inOrder(out.arrayFrom(data))
}

// ReadRows reads the rows start:stop (Python slice rules along the first
// axis, as ReadOptions.ReadRowsAt) of the member called name. Of a stored
// member (np.savez) it reads the header and then exactly the rows' bytes,
// in one read; a deflated member (np.savez_compressed) is decompressed as
// far as the last row, in bounded memory beyond the rows. A Fortran-order
// member of more than one dimension fails with ErrNotRowMajor.
func (z *NPZ) ReadRows(name string, start, stop int) (*ndarray.Array, error) {
	e, err := z.member(name)
	if err != nil {
		return nil, err
	}
	h, m, err := z.openMember(name, e)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	off, n, out, err := h.rows(start, stop)
	if err != nil {
		return nil, memberError(name, err)
	}
	data := make([]byte, n)
	if e.method == zipStore {
		// The data lies as is at m.dataAt + h.DataOffset; the member's
		// size was checked against its header when it was opened.
		if err := readAtFull(z.r, data, m.dataAt+h.DataOffset+off, "the rows"); err != nil {
			return nil, memberError(name, err)
		}
	} else {
		d := &memberData{m: m, left: h.DataLen(), h: h, name: name}
		if _, err := io.CopyN(io.Discard, d, off); err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(d, data); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = memberError(name, errAt(ErrTruncated, h.DataOffset+off, "the member ends inside the rows"))
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
