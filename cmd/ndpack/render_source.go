package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/render"
)

// selection is what part of an input a command reads: the array (an npz
// member, a msgpack path), its rows and its record field; and the .npy
// header size it accepts.
type selection struct {
	member    string
	rows      *rowRange // --rows, or nil
	field     string    // --field, or ""
	maxHeader int       // --max-header-size; 0 is numpy's 10,000
	remote    remoteFlags
}

// maxFortranBand bounds the rows of a Fortran-order array that are
// gathered at once to be given to render in row order.
const maxFortranBand = 64 << 20

// openSource opens the one array of in (or its member) for render, after
// check (if not nil) has accepted its dtype and shape from the header. The
// Source reads the array's data again each time it is opened, a few rows
// at a time: from the file (an .npy, an .npz member, a msgpack array); an
// .npy from a pipe, which can be read once only, is first copied to a
// temporary file (up to maxSpool), removed at once. A Fortran-order array
// is read in bands of rows gathered column by column from the file; from
// a deflated .npz member, or a band of more than maxFortranBand bytes, it
// is read whole. The returned function releases the input.
func openSource(e env, in string, f format, sel selection, check func(arraySource) error) (render.Source, func(), error) {
	member, rows := sel.member, sel.rows
	fa, err := openInputArrays(in, e.stdin, f, inputOptions{maxHeader: sel.maxHeader, stderr: e.stderr, remote: sel.remote})
	if err != nil {
		if errors.Is(err, npybridge.ErrObjectArray) {
			return render.Source{}, nil, errors.New("an object array (pickled Python objects) cannot be drawn")
		}
		return render.Source{}, nil, err
	}
	fa.withRows(rows)
	fa.withFieldAndType(sel.field, nil)
	arrays, err := convertOptions{member: member}.pickFrom(fa)
	if err == nil && len(arrays) != 1 {
		err = fmt.Errorf("%d arrays (%s): name the one to draw as IN:NAME or with --member", len(arrays), names(arrays))
	}
	if err != nil {
		fa.close()
		return render.Source{}, nil, err
	}
	src := arrays[0]
	if rows != nil && len(src.shape) >= 3 && src.shape[0] == 1 {
		// One row of a stack (--rows 3:4) is the frame it holds.
		src.shape = src.shape[1:]
	}
	if src.err == nil && check != nil {
		err = check(src)
	}
	if err == nil {
		err = src.err
	}
	if err != nil {
		fa.close()
		return render.Source{}, nil, err
	}
	release := fa.close
	if fa.format == formatNPY && fa.size == 0 && src.size > 0 {
		// Standard input or a pipe: copied to a temporary file to be read
		// twice.
		tmp, err := spoolData(src)
		fa.close()
		if err != nil {
			return render.Source{}, nil, err
		}
		release = func() { tmp.Close() }
		size := src.size
		src.open = func() (io.ReadCloser, error) {
			return sizedSection{io.NewSectionReader(tmp, 0, size)}, nil
		}
	}
	shape := src.shape
	s := render.Source{DType: src.dtype, Shape: shape, Open: src.open}
	if !src.fortran {
		return s, release, nil
	}
	// Fortran order: the rows are not contiguous.
	rc, err := src.open()
	if err != nil {
		release()
		return render.Source{}, nil, err
	}
	_, ok := rc.(io.ReaderAt)
	rowBytes := int64(shape[1]) * int64(src.dtype.ItemSize)
	band := max(16, (8<<20)/max(1, rowBytes))
	if len(shape) == 2 && ok && min(band, int64(shape[0]))*rowBytes <= maxFortranBand {
		rc.Close()
		s.Open = func() (io.ReadCloser, error) {
			rc, err := src.open()
			if err != nil {
				return nil, err
			}
			return &fortranRows{rc: rc, ra: rc.(io.ReaderAt), h: shape[0], w: shape[1], size: src.dtype.ItemSize, band: int(min(band, int64(shape[0])))}, nil
		}
		return s, release, nil
	}
	defer rc.Close()
	h := &npybridge.Header{DType: src.dtype, Shape: src.shape, FortranOrder: true, DataOffset: src.dataOffset}
	a, err := h.ReadArray(rc)
	if err != nil {
		release()
		return render.Source{}, nil, err
	}
	return render.ArraySource(a), release, nil
}

// spoolData copies the data of src, which can be read once only, into a
// temporary file removed at once, so that nothing is left behind whatever
// ends the process.
func spoolData(src arraySource) (*os.File, error) {
	if src.size > maxSpool {
		return nil, fmt.Errorf("an array from a pipe is copied to a temporary file to be drawn, up to %d GiB; this one holds %d bytes: save it to a file and name that", maxSpool>>30, src.size)
	}
	tmp, err := os.CreateTemp("", "ndpack-render-*")
	if err != nil {
		return nil, fmt.Errorf("an array from a pipe is copied to a temporary file to be drawn, and none could be made: %w", err)
	}
	os.Remove(tmp.Name())
	rc, err := src.open()
	if err == nil {
		_, err = io.Copy(tmp, rc)
		rc.Close()
	}
	if err != nil {
		tmp.Close()
		return nil, err
	}
	return tmp, nil
}

// fortranRows reads a column-major (h, w) array row by row: a band of rows
// at a time, each column's part of the band read from ra and put in its
// place.
type fortranRows struct {
	rc         io.Closer
	ra         io.ReaderAt
	h, w, size int
	band       int
	next       int // the first row not yet gathered
	buf, col   []byte
	pending    []byte
}

func (f *fortranRows) Read(p []byte) (int, error) {
	if len(f.pending) == 0 {
		if f.next >= f.h {
			return 0, io.EOF
		}
		b := min(f.band, f.h-f.next)
		if f.buf == nil {
			f.buf, f.col = make([]byte, f.band*f.w*f.size), make([]byte, f.band*f.size)
		}
		buf, col, size := f.buf[:b*f.w*f.size], f.col[:b*f.size], f.size
		for j := range f.w {
			if _, err := f.ra.ReadAt(col, (int64(j)*int64(f.h)+int64(f.next))*int64(size)); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return 0, err
			}
			for r := range b {
				copy(buf[(r*f.w+j)*size:(r*f.w+j+1)*size], col[r*size:(r+1)*size])
			}
		}
		f.next += b
		f.pending = buf
	}
	n := copy(p, f.pending)
	f.pending = f.pending[n:]
	return n, nil
}

func (f *fortranRows) Close() error { return f.rc.Close() }
