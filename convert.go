package ndpack

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/internal/filesection"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// ConvertOptions controls conversion between .npy files and ext 110
// objects. The zero value converts the YEP's standard dtypes with the
// default limits.
type ConvertOptions struct {
	// Read applies to the .npy header.
	Read npybridge.ReadOptions
	// Ext110 applies to the ext 110 object written (AllowNonstandard lets
	// S, U, V, M and m arrays through).
	Ext110 ext110.Options
	// MaxSize bounds, in bytes, an array that a conversion must hold in
	// memory whole: an ext 110 object read from a reader that is not a
	// regular file (a pipe, a network stream), whose key order puts the
	// dtype and shape after the data, and a Fortran-order .npy, which is
	// transposed. Zero means ndarray.DefaultMaxSize (64 MiB). A larger one
	// fails with ndarray.ErrTooLarge before its data is read. The
	// conversions that stream (row-major .npy, ext 110 from a regular
	// file) hold no array, whatever its size.
	MaxSize int64
}

func (o ConvertOptions) maxSize() int64 {
	if o.MaxSize > 0 {
		return o.MaxSize
	}
	return ndarray.DefaultMaxSize
}

// tooLarge refuses an array of n bytes that a conversion would hold in
// memory, over MaxSize.
func (o ConvertOptions) tooLarge(pkg string, n int64, what string) error {
	return &ndarray.Error{Pkg: pkg, Err: ndarray.ErrTooLarge, Offset: -1, Option: "ConvertOptions.MaxSize",
		Detail: fmt.Sprintf("%s of %d bytes exceeds the limit of %d on what a conversion holds in memory", what, n, o.maxSize())}
}

// NPYToExt110 reads one .npy file from r and writes it to w as one ext 110
// object.
//
// A row-major file is streamed: after the header, exactly the data bytes
// are copied from r to w in bounded memory; from a regular file into a
// regular file kernel to kernel, as cp copies (splice on Linux), else
// through one reused 1 MiB buffer, read at the data's offsets. A
// Fortran-order file is read whole into memory, within MaxSize, and
// transposed, since ext 110 data is row-major. If r is a file shorter than
// its header announces, nothing is written.
//
// It fails with the errors of package npybridge for the header
// (npybridge.ErrNotNPY, ndarray.ErrMalformed, npybridge.ErrUnsupported,
// ndarray.ErrTooLarge, ...) and with its ndarray.ErrTruncated, whose
// Offset is the first data byte, when r holds fewer data bytes than the
// header announces (or a mapped file is truncated by another process while
// it is read: then inside an *os.PathError naming the file); with
// ndarray.ErrTooLarge for a Fortran-order array over MaxSize. A dtype or
// size ext 110 cannot carry fails with the errors of package ext110
// (ndarray.ErrNonstandard unless Ext110.AllowNonstandard is set,
// ErrMalformed, ErrTooLarge for a payload over ext32's 4 GiB). The errors
// of r and w are returned as they are; after one of w's, w holds part of
// an object.
func (o ConvertOptions) NPYToExt110(w io.Writer, r io.Reader) error {
	h, err := o.Read.ReadHeader(r)
	if err != nil {
		return err
	}
	enc := ext110.NewEncoder(w)
	enc.Options = o.Ext110
	short := func(have string) error {
		return &ndarray.Error{Pkg: "npybridge", Err: ndarray.ErrTruncated, Offset: h.DataOffset,
			Detail: fmt.Sprintf("the header announces %d data bytes (shape %s of %s), the file has %s",
				h.DataLen(), ndarray.FormatShape(h.Shape), h.DType, have)}
	}
	src := r
	f, size, isFile := regularFile(r)
	var pos int64
	if isFile {
		if pos, err = f.Seek(0, io.SeekCurrent); err != nil {
			return err
		}
		src = filesection.New(f, pos, size-pos) // with Len, so that a false claim is refused at once
	}
	if l, ok := src.(interface{ Len() int }); ok && int64(l.Len()) < h.DataLen() {
		return short(fmt.Sprint(l.Len()))
	}
	if h.FortranOrder && len(h.Shape) > 1 {
		if h.DataLen() > o.maxSize() {
			return o.tooLarge("npybridge", h.DataLen(), "a Fortran-order array, transposed in memory,")
		}
		a, err := h.ReadArray(src)
		if err != nil {
			return err
		}
		return enc.Encode(a)
	}
	if isFile {
		// Exactly the data, so that the encoder has Section.WriteTo move
		// it from the file.
		src = filesection.New(f, pos, h.DataLen())
	}
	if err := enc.EncodeFrom(h.DType, h.Shape, src); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return short("fewer: it ended while being read")
		}
		return truncatedWhileRead(err)
	}
	return nil
}

// Ext110ToNPY reads one ext 110 object, which must be all of r, and writes
// it to w as an .npy file (version 1.0 unless the header needs 2.0, as
// np.save would).
//
// The canonical key order puts the data before the dtype and shape, so a
// stream cannot be converted before its end has been read. When r is a
// regular file it is memory-mapped to read only the framing, and the data
// is then moved from the file as NPYToExt110 moves it: memory
// stays bounded whatever the size. Any other reader is decoded into memory
// first, within MaxSize.
//
// It fails with the errors of package ext110 when r is not one ext 110
// object (ndarray.ErrNotArray, ErrTruncated, ErrMalformed, ext110.ErrStrided,
// ErrOffset: see ext110.Unmarshal), with ndarray.ErrTooLarge for an object
// over MaxSize read from a reader that is not a regular file, and with
// this package's ndarray.ErrMalformed for an empty r and for bytes after
// the object; a
// file truncated by another process while it is read fails with
// ErrTruncated inside an *os.PathError. The errors of r (or of mapping the
// file) and of w are returned as they are.
func (o ConvertOptions) Ext110ToNPY(w io.Writer, r io.Reader) error {
	if f, size, ok := regularFile(r); ok && size > 0 {
		return ext110FileToNPY(w, f, size)
	}
	dec := ext110.NewDecoder(r)
	dec.MaxSize = o.maxSize()
	a, err := dec.Decode()
	if err == io.EOF {
		return notOneObject("the input is empty")
	}
	var e *ndarray.Error
	if errors.As(err, &e) && e.Option == "Decoder.MaxSize" {
		relabeled := *e // the bound is this conversion's, set by its MaxSize
		relabeled.Option = "ConvertOptions.MaxSize"
		return &relabeled
	}
	if err != nil {
		return err
	}
	if _, err := dec.Decode(); err != io.EOF {
		return notOneObject("the input holds more than one ext 110 object")
	}
	return npybridge.Write(w, a)
}

func notOneObject(detail string) error {
	return &ndarray.Error{Pkg: "ndpack", Err: ndarray.ErrMalformed, Offset: -1, Detail: detail}
}

// regularFile returns r as a regular file and its size.
func regularFile(r io.Reader) (*os.File, int64, bool) {
	f, ok := r.(*os.File)
	if !ok {
		return nil, 0, false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, 0, false
	}
	return f, fi.Size(), true
}

// ext110FileToNPY converts the ext 110 object that fills f (size bytes)
// from its read position on.
func ext110FileToNPY(w io.Writer, f *os.File, size int64) error {
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	m, release, err := filesection.Map(f, size)
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
	release()
	if err != nil {
		return truncatedWhileRead(err)
	}
	if int64(h.Len) != size-start {
		return notOneObject(codecerr.Count(size-start-int64(h.Len), "byte") + " after the ext 110 object")
	}
	if _, err := w.Write(npybridge.AppendHeader(nil, h.DType, h.Shape)); err != nil {
		return err
	}
	n, err := filesection.New(f, start+int64(h.DataOffset), int64(h.DataLen)).WriteTo(w)
	if err == nil && n != int64(h.DataLen) {
		err = &ndarray.Error{Pkg: "ext110", Err: ndarray.ErrTruncated, Offset: start + int64(h.DataOffset),
			Detail: fmt.Sprintf("the file shrank while being converted (%d of %d data bytes)", n, h.DataLen)}
	}
	return truncatedWhileRead(err)
}

// truncatedWhileRead gives a file truncated by another process while it
// was read through a mapping the shared ErrTruncated class, keeping the
// file's name.
func truncatedWhileRead(err error) error {
	var fe *filesection.Error
	var pe *os.PathError
	if !errors.As(err, &fe) || fe.Err != filesection.ErrTruncated || !errors.As(err, &pe) {
		return err
	}
	return &os.PathError{Op: pe.Op, Path: pe.Path, Err: &ndarray.Error{Pkg: "npybridge", Err: ndarray.ErrTruncated, Offset: fe.Offset,
		Detail: "another process truncated the file while it was being read: " + fe.Detail}}
}
