package npybridge

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/internal/filesection"
	"github.com/ndpack/ndpack/ndarray"
)

// Mapped is an NPY file opened for reading with its data memory-mapped:
// Array.Data aliases the file's pages and nothing is copied, so opening
// costs the same whatever the size. OpenMapped's mapping is read-only:
// writing to Array.Data faults. CreateMapped and OpenMappedWritable map
// read-write, for processes that fill one file together (see MapOptions).
// Close unmaps; the Array must not be used after.
//
// A Fortran-order file cannot be viewed row-major in place: for it (with
// two or more dimensions) OpenMapped reads and transposes the data into
// ordinary memory, as Read does, and Aliased reports false. So do platforms
// without mmap.
//
// # A file truncated while mapped
//
// If another process truncates the file while it is mapped, the pages it
// cut off are gone, and reading one raises SIGBUS, which ends a Go program
// with "unexpected fault address" unless the goroutine that reads has asked
// the runtime (debug.SetPanicOnFault) to make it a panic. WriteTo and Guard
// do so and return an error wrapping ndarray.ErrTruncated instead, naming the file
// and the first byte that is gone. Everything else that reads Array.Data
// (indexing it, ndarray's typed views, sums, a copy handed to another
// goroutine) is not protected: run it inside Guard, on the goroutine that
// called Guard, or keep the file from being truncated while it is mapped
// (an Appender never truncates rows it has counted, so a file being
// appended to is safe to map). Writing a file in place (np.save over it)
// truncates it first.
type Mapped struct {
	Array   *ndarray.Array // the file's array; its Data aliases the mapping when Aliased
	Header  *Header        // the file's header, as ReadHeader reads it
	mapping []byte         // nil when nothing is mapped
	name    string         // the file mapped, for errors
	off     int64          // the file offset of mapping[0]
	// file is the descriptor of a read-write map (CreateMapped,
	// OpenMappedWritable), kept for Flush where there is no msync; nil
	// for a read-only one, whose mapping outlives its descriptor.
	file *os.File
}

// OpenMapped opens the NPY file name, checks its header and size, and maps
// its data read-only.
// It fails with os.Open's error, with an *os.PathError around ReadHeader's
// errors, or around ndarray.ErrTruncated when the file is shorter than its header
// announces, or around the mmap error.
func (o ReadOptions) OpenMapped(name string) (*Mapped, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close() // a mapping outlives its descriptor
	h, err := o.readHeader(f, false, "OpenNPZFile")
	if err != nil {
		return nil, fileError(name, err)
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if end := h.DataOffset + h.DataLen(); fi.Size() < end {
		return nil, fileError(name, errAt(ndarray.ErrTruncated, h.DataOffset, "the header announces %d data bytes, the file has %d",
			h.DataLen(), max(0, fi.Size()-h.DataOffset)))
	}
	if (h.FortranOrder && len(h.Shape) > 1) || h.DataLen() == 0 || !canMap {
		a, err := h.readData(sizedReader(f))
		if err != nil {
			return nil, fileError(name, err)
		}
		return &Mapped{Array: a, Header: h}, nil
	}
	m, err := mapFile(f, int(h.DataOffset+h.DataLen()))
	if err != nil {
		return nil, fileError(name, err)
	}
	a, err := ndarray.New(h.DType, h.Shape, m[h.DataOffset:])
	if err != nil {
		unmap(m)
		return nil, fileError(name, err)
	}
	return &Mapped{Array: a, Header: h, mapping: m, name: name}, nil
}

// Guard runs fn, which reads m.Array.Data, and turns the fault of reading
// pages that another process has meanwhile truncated off the file into an
// error wrapping ndarray.ErrTruncated (see Mapped), where without Guard the program
// would die of SIGBUS. fn must read the data on the goroutine that called
// Guard. An error of fn's own is returned as it is, unless the file has
// become shorter than the mapping: a write(2) from vanished pages fails
// with EFAULT rather than faulting, and that is the truncation too. On a
// read-write map, a page that could not be stored (a full disk) faults
// too, and is an error wrapping ErrPageNotStored.
func (m *Mapped) Guard(fn func() error) error {
	if m.mapping == nil {
		return fn()
	}
	name := m.name
	if name == "" {
		name = "the mapped file"
	}
	return m.writeFault(mappedError(filesection.Guard(name, m.mapping, m.off, fn), m.file != nil))
}

// WriteTo writes the array's data to w, under Guard: a file truncated while
// it is written is an error wrapping ndarray.ErrTruncated, not a crash. The data
// must be read by w on the calling goroutine (an *os.File, a
// bufio.Writer, a bytes.Buffer do; an io.PipeWriter does not).
func (m *Mapped) WriteTo(w io.Writer) (int64, error) {
	if m.Array == nil {
		return 0, &os.PathError{Op: "read", Path: m.name, Err: os.ErrClosed}
	}
	var n int
	err := m.Guard(func() (err error) {
		n, err = w.Write(m.Array.Data)
		return err
	})
	return int64(n), err
}

// mappedError gives a file truncated while being read through a mapping
// this package's error class.
func mappedError(err error, writable bool) error {
	var fe *filesection.Error
	var pe *os.PathError
	if !errors.As(err, &fe) || fe.Err != filesection.ErrTruncated || !errors.As(err, &pe) {
		return err
	}
	op, how, detail := pe.Op, "read", fe.Detail
	if writable {
		// Under Guard, a read-write map's pages may have been written as
		// well as read.
		op, how = "access", "read or written"
		detail = fmt.Sprintf("it now holds %d bytes, and bytes %d to %d were being read or written", fe.Size, fe.From, fe.To)
		if fe.Size < 0 {
			detail = fmt.Sprintf("bytes %d to %d were being read or written", fe.From, fe.To)
		}
	}
	return &os.PathError{Op: op, Path: pe.Path, Err: &ndarray.Error{Pkg: "npybridge", Err: ndarray.ErrTruncated, Offset: fe.Offset,
		Detail: "another process truncated the file while it was being " + how + ": " + detail}}
}

// Aliased reports whether Array.Data is the file's mapped pages (true) or a
// copy in ordinary memory (false).
func (m *Mapped) Aliased() bool { return m.mapping != nil }

// Close unmaps the file. A read-write map's written pages are first handed
// to the kernel's writeback (msync MS_ASYNC: what os.File.Write and Close
// give, without waiting for the disk; call Flush for that) and its
// descriptor closed. It is safe to call more than once; the Array, and
// every array Rows returned, must not be used after.
// Its error joins the msync, munmap and close errors, if any.
func (m *Mapped) Close() error {
	err := m.flushAsync()
	if m.mapping != nil {
		err = errors.Join(err, unmap(m.mapping))
		m.mapping = nil
	}
	if m.file != nil {
		err = errors.Join(err, m.file.Close())
		m.file = nil
	}
	m.Array = nil
	return err
}

func fileError(name string, err error) error {
	return &os.PathError{Op: "open", Path: name, Err: err}
}
