package npybridge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// ErrPageNotStored: a page of a read-write map could not be stored in the
// file (the disk is full, or failing), which faults like a truncation;
// Mapped.Guard returns it.
var ErrPageNotStored = errors.New("mapped page not stored")

// MapOptions controls CreateMapped and OpenMappedWritable, the read-write
// maps. The zero value creates only new files and maps only arrays whose
// typed views write through to the file.
//
// # Several processes writing one file
//
// A read-write map is MAP_SHARED: what one process writes into Array.Data
// is the file's page cache, which every other process that maps or reads
// the file sees at once, without Flush. This is NEP 1's "Polly Parallel":
// one process creates the file with CreateMapped (or `ndpack create`),
// then each worker opens it with OpenMappedWritable and fills its own rows,
// from Rows(lo, hi), with nothing else coordinating them. Writers of
// disjoint rows (disjoint bytes, in general) never disturb each other. Two
// writers of the same element race, as two goroutines would, and the file
// ends up holding either's bytes or a mix of both: that is the caller's to
// prevent. Nothing locks the file.
//
// # What faults
//
// Writing or reading a page that is no longer in the file raises SIGBUS,
// which kills a Go program: if another process truncates the file while it
// is mapped (np.save over it, an editor, `truncate`), and also if the disk
// fills up, since the data of a new file takes no disk space until it is
// written. Mapped.Guard turns that fault into an error (wrapping
// ndarray.ErrTruncated, or ErrPageNotStored for the full disk) for the code it
// runs, on its goroutine; keep the file from being truncated, and the disk
// from filling, for everything else.
type MapOptions struct {
	// Replace lets CreateMapped replace an existing file. The new file is
	// renamed over it once complete, so a process that has the old one
	// mapped keeps writing to the old one.
	Replace bool
	// RawByteOrder accepts arrays whose byte order is not the machine's.
	// For them ndarray.Values returns a swapped copy, and what is written
	// to the copy never reaches the file, so by default they are refused;
	// with RawByteOrder the caller writes Array.Data's bytes itself.
	RawByteOrder bool
}

// CreateMapped creates the NPY file name for a C-order array of dtype dt
// and the given shape, its data all zero bytes, and maps the data
// read-write (see MapOptions for what several processes may do with it).
//
// The header is byte for byte what numpy's
// np.lib.format.open_memmap(name, mode="w+", dtype=dt, shape=shape) writes,
// and the file has the same size. The zeros are not written: the file is
// extended with ftruncate, so on a file system with holes a 64 GiB array
// takes no disk space until its pages are written, and creating it takes
// as long as creating an empty file. The file appears under its name
// complete: it is made beside it and linked there (or, with o.Replace,
// renamed over the old one), never seen short or without its header.
//
// An existing file is refused (an error wrapping fs.ErrExist)
// unless o.Replace is set. A dtype whose byte order is not the machine's is
// refused unless o.RawByteOrder is set.
func (o MapOptions) CreateMapped(name string, dt ndarray.DType, shape ...int) (*Mapped, error) {
	fail := func(err error) (*Mapped, error) {
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Path == name {
			err = pe.Err // say "create NAME" once
		}
		return nil, &os.PathError{Op: "create", Path: name, Err: err}
	}
	if err := dt.Validate(); err != nil {
		return fail(wrapAt(ErrInvalidArray, -1, err))
	}
	if err := checkWritable(dt); err != nil {
		return fail(err)
	}
	n, err := ndarray.ByteSize(dt, shape)
	if err != nil {
		return fail(wrapAt(ErrInvalidArray, -1, err))
	}
	if err := o.checkOrder(dt); err != nil {
		return fail(err)
	}
	if n > 0 && !canMap {
		return fail(errAt(ErrNotMappable, -1, "this platform has no mmap"))
	}
	exists := func() error {
		return errAt(fs.ErrExist, -1, "CreateMapped replaces a file only with MapOptions.Replace")
	}
	if !o.Replace {
		if _, err := os.Lstat(name); err == nil {
			return fail(exists())
		}
	}
	header := AppendHeader(nil, dt, shape)
	size := int64(len(header)) + int64(n)
	t, err := atomicfile.Create(name, 0o666)
	if err != nil {
		return fail(err)
	}
	if err := fillNew(t.File, header, size); err != nil {
		t.Abort()
		return fail(err)
	}
	// The file is mapped before it is committed, so that a map that fails
	// (an address-space limit, as batch schedulers set) leaves nothing at
	// name and the file it would have replaced in place. The map is made
	// through a descriptor of its own: the temporary one holds
	// atomicfile's lock, which would keep Appenders out for as long as the
	// map is open.
	f, err := os.OpenFile(t.File.Name(), os.O_RDWR, 0)
	if err != nil {
		t.Abort()
		return fail(err)
	}
	h := &Header{DType: dt, Shape: append([]int{}, shape...), Major: int(header[6]), DataOffset: int64(len(header))}
	m, err := mapWritable(name, f, h)
	if err != nil {
		f.Close()
		t.Abort()
		return fail(err)
	}
	if o.Replace {
		err = t.Commit()
	} else if err = t.CommitNew(); err == nil {
		t.File.Close()
	}
	switch {
	case err == nil:
		return m, nil
	case errors.Is(err, fs.ErrExist):
		m.Close()
		return fail(exists())
	case o.Replace:
		m.Close()
		return fail(err)
	}
	// No hard links (FAT): create it in place, where another process may
	// see it for a moment without its header; a failure removes it.
	m.Close()
	if f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fail(exists())
		}
		return fail(err)
	}
	if err := fillNew(f, header, size); err != nil {
		f.Close()
		os.Remove(name)
		return fail(err)
	}
	if m, err = mapWritable(name, f, h); err != nil {
		f.Close()
		os.Remove(name)
		return fail(err)
	}
	return m, nil
}

// fillNew writes header to the new, empty file f and extends it to size
// bytes: the data is a hole, read as zeros, that takes no disk space.
func fillNew(f *os.File, header []byte, size int64) error {
	if _, err := f.Write(header); err != nil {
		return err
	}
	return f.Truncate(size)
}

// OpenMappedWritable opens the existing NPY file name and maps its data
// read-write, as numpy's open_memmap(name, mode="r+") does, for a worker
// that fills part of it (see MapOptions).
//
// The file must hold exactly the bytes its header announces: a shorter one
// is refused (ndarray.ErrTruncated), since writing past its end would fault, and so
// is a longer one (ErrNotMappable), whose extra bytes no reader would see.
// Also refused with ErrNotMappable: Fortran-order files of two or more
// dimensions, whose rows are not contiguous (numpy maps them column-major;
// ndpack's arrays are row-major only), data that does not start on a
// multiple of its item's alignment, over which ndarray.Values would copy
// instead of aliasing the file (numpy's files always start it on a multiple
// of 64 bytes), and a byte order that is not the machine's, unless
// o.RawByteOrder is set.
func (o MapOptions) OpenMappedWritable(name string) (*Mapped, error) {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	m, err := o.openWritable(name, f)
	if err != nil {
		f.Close()
		return nil, fileError(name, err)
	}
	return m, nil
}

func (o MapOptions) openWritable(name string, f *os.File) (*Mapped, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		// A FIFO would block the header's read for as long as no one
		// writes to it; a device has no size to check.
		return nil, errAt(ErrNotMappable, -1, "not a regular file (%s)", fi.Mode().Type())
	}
	h, err := ReadOptions{}.ReadHeader(f)
	if err != nil {
		return nil, err
	}
	end := h.DataOffset + h.DataLen()
	switch {
	case fi.Size() < end:
		return nil, errAt(ndarray.ErrTruncated, fi.Size(), "the header announces %d data bytes from byte %d, the file holds %d bytes in all (%d of data)",
			h.DataLen(), h.DataOffset, fi.Size(), max(0, fi.Size()-h.DataOffset))
	case fi.Size() > end:
		return nil, errAt(ErrNotMappable, end, "the file holds %d bytes after the %d data bytes its header announces, which no reader of the array would see",
			fi.Size()-end, h.DataLen())
	case h.FortranOrder && len(h.Shape) > 1:
		return nil, errAt(ErrNotMappable, -1, "the file is in Fortran order, so its rows are not contiguous; only C-order files are mapped read-write")
	}
	if err := o.checkOrder(h.DType); err != nil {
		return nil, err
	}
	if a := int64(itemAlignment(h.DType)); h.DataOffset%a != 0 {
		return nil, errAt(ErrNotMappable, h.DataOffset, "the data starts at byte %d, not a multiple of %d, so typed views of it would be copies; "+
			"numpy's files start it on a multiple of 64", h.DataOffset, a)
	}
	if h.DataLen() > 0 && !canMap {
		return nil, errAt(ErrNotMappable, -1, "this platform has no mmap")
	}
	return mapWritable(name, f, h)
}

// mapWritable maps the data of f, whose header h was checked, read-write.
// The Mapped keeps f.
func mapWritable(name string, f *os.File, h *Header) (*Mapped, error) {
	m := &Mapped{Header: h, name: name, file: f}
	data := []byte{}
	if n := h.DataLen(); n > 0 {
		if h.DataOffset+n > int64(maxInt) {
			return nil, errAt(ErrNotMappable, -1, "%d bytes do not fit in this platform's address space", h.DataOffset+n)
		}
		mapping, err := mapFileWritable(f, int(h.DataOffset+n))
		if err != nil {
			return nil, err
		}
		m.mapping = mapping
		data = mapping[h.DataOffset:]
	}
	a, err := ndarray.New(h.DType, h.Shape, data)
	if err != nil {
		if m.mapping != nil {
			unmap(m.mapping)
		}
		return nil, err
	}
	m.Array = a
	return m, nil
}

// checkOrder refuses a dtype whose typed views would be copies unless the
// caller takes raw bytes.
func (o MapOptions) checkOrder(dt ndarray.DType) error {
	// A record is in the machine's order when every field is.
	if o.RawByteOrder || dt.WithOrder(ndarray.NativeOrder()) == dt {
		return nil
	}
	return errAt(ErrNotMappable, -1, "%s is not in the machine's byte order (%c), so values written through ndarray.Values would go to a copy; "+
		"MapOptions.RawByteOrder maps it for writing the bytes directly", dt, ndarray.NativeOrder())
}

// Flush writes what was written to a read-write map to the disk and waits
// for it (msync with MS_SYNC, or fsync where there is no msync), as
// numpy's memmap.flush does. Other processes see the writes without it: it
// guards against the machine's crash, not the process's, and costs a disk
// write of every page written. For a read-only map it does nothing.
// Its error is an *os.PathError holding the msync or fsync error.
func (m *Mapped) Flush() error {
	if m.file == nil {
		return nil
	}
	var err error
	if m.mapping != nil && haveMsync {
		err = msync(m.mapping, true)
	} else {
		err = m.file.Sync()
	}
	if err != nil {
		return &os.PathError{Op: "flush", Path: m.name, Err: err}
	}
	return nil
}

// flushAsync hands the pages written to the kernel's writeback without
// waiting for the disk (MS_ASYNC), for Close: the writes are the file's
// once Close returns, as after an os.File.Write, and reach the disk when
// the kernel writes them, unless Flush was called to wait for that.
func (m *Mapped) flushAsync() error {
	if m.file == nil || m.mapping == nil || !haveMsync {
		return nil
	}
	if err := msync(m.mapping, false); err != nil {
		return &os.PathError{Op: "flush", Path: m.name, Err: err}
	}
	return nil
}

// Rows returns rows lo to hi-1 of the array (the first axis), sharing its
// memory: for a read-write map, what is written to the result is written to
// the file. It is how work is split between processes or goroutines, each
// taking its own rows. The result's capacity ends at row hi, so appending
// to its Data never writes into the next rows. A 0-d array has no rows.
// It fails with an *ndarray.Error wrapping ndarray.ErrIndex for a 0-d array
// or rows out of range, and with an *os.PathError wrapping os.ErrClosed
// after Close.
func (m *Mapped) Rows(lo, hi int) (*ndarray.Array, error) {
	a := m.Array
	if a == nil {
		return nil, &os.PathError{Op: "rows", Path: m.name, Err: os.ErrClosed}
	}
	if len(a.Shape) == 0 {
		return nil, &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrIndex, Detail: "a 0-d array has no rows"}
	}
	if lo < 0 || hi < lo || hi > a.Shape[0] {
		return nil, &ndarray.Error{Pkg: "ndarray", Offset: -1, Err: ndarray.ErrIndex, Detail: fmt.Sprintf("rows %d to %d of an array of %s", lo, hi, codecerr.Count(a.Shape[0], "row"))}
	}
	rowBytes := a.DType.ItemSize
	for _, d := range a.Shape[1:] {
		rowBytes *= d
	}
	shape := append([]int{hi - lo}, a.Shape[1:]...)
	return &ndarray.Array{DType: a.DType, Shape: shape, Data: a.Data[lo*rowBytes : hi*rowBytes : hi*rowBytes]}, nil
}

// writeFault tells, for a read-write map, a fault that Guard took for a
// truncation from a page the file system could not store: the file still
// holds every byte mapped, and writing into a hole of a full disk faults
// just the same.
func (m *Mapped) writeFault(err error) error {
	var e *ndarray.Error
	if m.file == nil || !errors.As(err, &e) || e.Err != ndarray.ErrTruncated {
		return err
	}
	fi, serr := m.file.Stat()
	if serr != nil || fi.Size() < m.off+int64(len(m.mapping)) {
		return err
	}
	return &os.PathError{Op: "write", Path: m.name, Err: errAt(ErrPageNotStored, e.Offset,
		"the page there could not be stored: the disk is full or failing (the file still holds its %d bytes: it was not truncated)", fi.Size())}
}
