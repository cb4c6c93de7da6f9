package npybridge

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/filesection"
)

// ConvertOptions controls conversion between NPY and ext 110.
type ConvertOptions struct {
	// ReadOptions apply to the NPY header.
	ReadOptions
	// Ext110 applies to the ext 110 object written (AllowNonstandard lets
	// S, U, V, M and m arrays through).
	Ext110 ext110.Options
}

// NPYToExt110 reads one NPY file from r and writes it to w as one ext 110
// object.
//
// A row-major file is streamed: after the header, exactly the data bytes are
// copied from r to w in bounded memory; from a file they are written
// straight from 4 MiB memory-mapped windows, one copy and no buffer. A
// Fortran-order file is read whole into memory and transposed, since ext
// 110 data is row-major. If r is a file shorter than its header announces, nothing is
// written.
func (o ConvertOptions) NPYToExt110(w io.Writer, r io.Reader) error {
	h, err := o.ReadHeader(r)
	if err != nil {
		return err
	}
	enc := ext110.NewEncoder(w)
	enc.Options = o.Ext110
	data := sizedReader(r)
	if h.FortranOrder && len(h.Shape) > 1 {
		a, err := h.readData(data)
		if err != nil {
			return err
		}
		return enc.Encode(a)
	}
	if l, ok := data.(interface{ Len() int }); ok && int64(l.Len()) < h.DataLen() {
		return errAt(ErrTruncated, h.DataOffset, "the header announces %d data bytes, the file has %d", h.DataLen(), l.Len())
	}
	src := data
	if f, ok := data.(*fileWithLen); ok {
		src = filesection.New(f.File, f.pos, h.DataLen())
	}
	if err := enc.EncodeFrom(h.DType, h.Shape, src); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return errAt(ErrTruncated, h.DataOffset, "the data ends before the %d bytes the header announces", h.DataLen())
		}
		return mappedError(err)
	}
	return nil
}

// Ext110ToNPY reads one ext 110 object, which must be all of r, and writes
// it to w as an NPY file (version 1.0 unless the header needs 2.0, as
// np.save would).
//
// The canonical key order puts the data before the dtype and shape, so a
// stream cannot be converted before its end has been read. When r is a
// regular file it is memory-mapped to read only the framing, and the data
// is then written from the file a mapped window at a time: memory stays
// bounded whatever the size. Any other reader is decoded into
// memory first.
func (o ConvertOptions) Ext110ToNPY(w io.Writer, r io.Reader) error {
	if f, ok := r.(*os.File); ok && canMap {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return ext110FileToNPY(w, f, fi.Size())
		}
	}
	dec := ext110.NewDecoder(r)
	a, err := dec.Decode()
	if err == io.EOF {
		return newConvertError("the input is empty")
	}
	if err != nil {
		return err
	}
	if _, err := dec.Decode(); err != io.EOF {
		return newConvertError("the input holds more than one ext 110 object")
	}
	return Write(w, a)
}

func newConvertError(detail string) error {
	return &Error{Err: ext110.ErrMalformed, Offset: -1, Detail: detail}
}

// ext110FileToNPY converts the ext 110 object that fills f (size bytes).
func ext110FileToNPY(w io.Writer, f *os.File, size int64) error {
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	m, err := mapFile(f, int(size))
	if err != nil {
		return err
	}
	// The parser reads only the framing: the pages of the data are never
	// touched, so they are not brought into memory.
	var h ext110.Header
	err = filesection.Guard(f.Name(), m, 0, func() (err error) {
		h, err = ext110.DecodeHeader(m[start:])
		return err
	})
	unmap(m)
	if err != nil {
		return mappedError(err)
	}
	if int64(h.Len) != size-start {
		return newConvertError(fmt.Sprintf("%d bytes after the ext 110 object", size-start-int64(h.Len)))
	}
	if _, err := w.Write(AppendHeader(nil, h.DType, h.Shape)); err != nil {
		return err
	}
	n, err := filesection.New(f, start+int64(h.DataOffset), int64(h.DataLen)).WriteTo(w)
	if err == nil && n != int64(h.DataLen) {
		err = fmt.Errorf("npybridge: the file shrank while being converted (%d of %d data bytes)", n, h.DataLen)
	}
	return mappedError(err)
}

// NPYToExt110 is ConvertOptions{}.NPYToExt110: standard dtypes only.
func NPYToExt110(w io.Writer, r io.Reader) error { return ConvertOptions{}.NPYToExt110(w, r) }

// Ext110ToNPY is ConvertOptions{}.Ext110ToNPY.
func Ext110ToNPY(w io.Writer, r io.Reader) error { return ConvertOptions{}.Ext110ToNPY(w, r) }
