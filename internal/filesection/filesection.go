// Package filesection moves a byte range of a file to a writer, and reads
// the framing of a file through a mapping that touches only its pages.
//
// WriteTo moves the bytes into a file as cp does, kernel to kernel: on
// Linux, splice(2) through a pipe (CopyRange), 8 MiB at a time; into any
// other writer, or where splice cannot be used, through one reused 1 MiB
// buffer, pread from the section and written. Measured converting 512 MiB
// between .npy and ext 110 on this project's ext4 machine (CLI against cp,
// which uses copy_file_range from offset 0 to offset 0; nine rounds in
// turn, best of them): splice 0.95x the speed of cp for .npy to ext 110
// and 1.00x back, where the buffer ran at 0.73x and 0.89x,
// copy_file_range between the payload's offsets at 0.70-0.73x and
// 0.62-0.68x (ext4 copies more slowly between offsets that differ within
// a page, as a header's length before the payload on each side makes
// them), and 4 MiB mapped windows at 0.48x and 0.44x (the pages were
// faulted in 4 KiB at a time). A file truncated by another process while
// it is copied makes the copy come up short, which WriteTo reports as
// ErrTruncated.
//
// # Files truncated while mapped
//
// Reading a mapped page that another process has cut off the file (by
// truncating it) raises SIGBUS, which ends a Go program. Guard turns that
// fault into an error wrapping ErrTruncated, through
// debug.SetPanicOnFault; Map's framing reads go under it. The protection
// is the calling goroutine's only: bytes of a mapping handed to another
// goroutine (an io.Pipe's reader, say) fault there unprotected. A write(2)
// of vanished pages does not fault but fails with EFAULT; Guard reports
// that as the truncation too.
package filesection

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"unsafe"

	"github.com/ndpack/ndpack/internal/codecerr"
)

// Sentinel errors, wrapped by an *Error inside an *os.PathError naming the
// file.
var (
	// ErrTruncated: the file became shorter than the bytes being read
	// from it while they were being read (another process truncated it).
	// It is the module's one ErrTruncated (codecerr's), which every codec
	// reports too.
	ErrTruncated = codecerr.ErrTruncated
	// ErrShort: the file is shorter than the section to read.
	ErrShort = fmt.Errorf("file shorter than the section (%w)", io.ErrUnexpectedEOF)
)

// Error is a failure to read a section of a file: its class (ErrTruncated
// or ErrShort), the offset in the file of the first byte that was not
// there, and what was being read.
type Error struct {
	Err    error  // ErrTruncated or ErrShort
	Offset int64  // the first byte that is missing
	Detail string // the file's size and the bytes being read
	// Size is the file's size when the error was found (-1 if unknown),
	// and From and To the bytes being read: what Detail says, as data,
	// for a caller that words it otherwise.
	Size, From, To int64
}

// Error formats the failure as "filesection: CLASS at byte N: DETAIL".
func (e *Error) Error() string { return codecerr.Format("filesection", e.Err, e.Offset, e.Detail, nil) }

// Unwrap returns the class, for errors.Is.
func (e *Error) Unwrap() error { return e.Err }

// errorAt is the error for the file name of size bytes (-1 if unknown),
// missing byte at, while bytes from to to were being read.
func errorAt(class error, name string, size, at, from, to int64) error {
	detail := fmt.Sprintf("the file holds %d bytes, and bytes %d to %d were to be read", size, from, to)
	if class == ErrTruncated {
		detail = fmt.Sprintf("it now holds %d bytes, and bytes %d to %d were being read", size, from, to)
		if size < 0 {
			detail = fmt.Sprintf("bytes %d to %d were being read", from, to)
		}
	}
	return &os.PathError{Op: "read", Path: name, Err: &Error{Err: class, Offset: at, Detail: detail, Size: size, From: from, To: to}}
}

// Section is n bytes of a file starting at off, read through Read or, fast,
// moved with WriteTo, which io.Copy uses.
type Section struct {
	f      *os.File
	off, n int64
	pos    int64
}

// New returns the section of f holding n bytes from off.
func New(f *os.File, off, n int64) *Section { return &Section{f: f, off: off, n: n} }

// Len returns the number of bytes not yet read.
func (s *Section) Len() int { return int(s.n - s.pos) }

// Read reads from the section, as an io.SectionReader would. If the file
// ends inside the section, the error wraps ErrShort (and so
// io.ErrUnexpectedEOF).
func (s *Section) Read(p []byte) (int, error) {
	if s.pos >= s.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), s.n-s.pos)]
	k, err := s.f.ReadAt(p, s.off+s.pos)
	s.pos += int64(k)
	if err == io.EOF && s.pos < s.n {
		at := s.off + s.pos
		return k, errorAt(ErrShort, s.f.Name(), at, at, s.off, s.off+s.n)
	}
	if err == io.EOF {
		err = nil
	}
	return k, err
}

// A RangeWriter is a writer that can take a range of a file from the
// kernel itself (CopyRange, when it ends in a file), so that
// Section.WriteTo's bytes never pass through this process. Wrappers (one
// that counts progress, one that renames errors) implement it by passing
// the call on.
type RangeWriter interface {
	io.Writer
	// WriteRange writes n bytes of f, read from offset off, as Write
	// would write them. It returns the bytes written, fewer than n with
	// a nil error when f ends first, and errors.ErrUnsupported, having
	// written nothing, when it cannot: the caller then calls Write.
	WriteRange(f *os.File, off int64, n int) (int, error)
}

// WriteTo writes the rest of the section to w. If the file is shorter than
// the section, it fails at once with an error wrapping ErrShort; if it is
// truncated while being read, with one wrapping ErrTruncated (see the
// package documentation), not a crash.
//
// When w is a file, or a RangeWriter, the bytes go from file to file in
// the kernel (CopyRange), a chunk at a time, as cp moves them; otherwise
// through one reused buffer.
func (s *Section) WriteTo(w io.Writer) (written int64, err error) {
	fi, err := s.f.Stat()
	if err != nil {
		return 0, err
	}
	if fi.Size() < s.off+s.n {
		return 0, errorAt(ErrShort, s.f.Name(), fi.Size(), fi.Size(), s.off, s.off+s.n)
	}
	rw, _ := w.(RangeWriter)
	if f, ok := w.(*os.File); ok {
		rw = fileRangeWriter{f}
	}
	if rw != nil {
		for s.pos < s.n {
			at := s.off + s.pos
			want := min(rangeChunk, s.n-s.pos)
			k, err := rw.WriteRange(s.f, at, int(want))
			if k == 0 && errors.Is(err, errors.ErrUnsupported) {
				break // the buffer does the rest
			}
			written += int64(k)
			s.pos += int64(k)
			if err != nil {
				return written, err
			}
			if int64(k) < want {
				return written, s.truncated(at + int64(k))
			}
		}
		if s.pos == s.n {
			return written, nil
		}
	}
	// The bytes go through one reused buffer, read at the section's
	// offsets and written to w, never through w's ReadFrom: for a file,
	// that is copy_file_range, which ext4 runs slower between offsets
	// that differ within a page (a header's length before the payload on
	// each side) than splice, or read and write.
	buf := make([]byte, min(copyChunk, s.n-s.pos))
	for s.pos < s.n {
		at := s.off + s.pos
		want := min(int64(len(buf)), s.n-s.pos)
		k, rerr := s.f.ReadAt(buf[:want], at)
		if k > 0 {
			m, werr := w.Write(buf[:k])
			written += int64(m)
			s.pos += int64(m)
			if werr != nil {
				return written, werr
			}
		}
		if rerr == io.EOF || (rerr == nil && int64(k) < want) {
			return written, s.truncated(at + int64(k))
		}
		if rerr != nil {
			return written, rerr
		}
	}
	return written, nil
}

// truncated is the error for a copy that found the file ending at byte
// end, inside the section.
func (s *Section) truncated(end int64) error {
	size := int64(-1)
	if fi, err := s.f.Stat(); err == nil {
		size = fi.Size()
	}
	missing := end // the first byte not there, counted in the file
	if size >= 0 && size < missing {
		missing = max(size, s.off)
	}
	return errorAt(ErrTruncated, s.f.Name(), size, missing, s.off, s.off+s.n)
}

// fileRangeWriter makes a file a RangeWriter through CopyRange.
type fileRangeWriter struct{ *os.File }

func (w fileRangeWriter) WriteRange(f *os.File, off int64, n int) (int, error) {
	return CopyRange(w.File, f, off, n)
}

// copyChunk is WriteTo's buffer: big enough that a syscall's cost is
// nothing beside its copy, small enough to stay in the cache.
const copyChunk = 1 << 20

// rangeChunk is what WriteTo hands a RangeWriter at a time: each call
// makes a pipe, so fewer calls measured faster (8 MiB 0.95x cp, 1 MiB
// 0.80x), and a progress display still moves some 20 times a second.
const rangeChunk = 8 << 20

// Guard runs fn, which reads m, a mapping of the file name from byte off
// (as Map returns it, with off 0), and turns the fault of reading a page
// that another process has meanwhile cut off the file into an error: an
// *os.PathError naming the file around an *Error wrapping ErrTruncated,
// which says at which byte. So does an error from fn (a write(2) of the
// vanished pages fails with EFAULT) when the file has become shorter than
// the mapping.
//
// fn must read m on the calling goroutine: the fault of another goroutine
// still ends the program. Faults outside m are not caught: they panic
// again.
func Guard(name string, m []byte, off int64, fn func() error) error {
	size := func() (int64, error) {
		fi, err := os.Stat(name)
		if err != nil {
			return 0, err
		}
		return fi.Size(), nil
	}
	return guard(name, size, m, off, off, off+int64(len(m)), fn)
}

// guard is Guard, with the file's size from size, and the bytes from to
// to named as those being read.
func guard(name string, size func() (int64, error), m []byte, off, from, to int64, fn func() error) (err error) {
	end := off + int64(len(m))
	truncated := func(at int64) error {
		n, serr := size()
		if serr != nil {
			return errorAt(ErrTruncated, name, -1, at, from, to)
		}
		if n < at {
			at = max(n, from)
		}
		return errorAt(ErrTruncated, name, n, at, from, to)
	}
	// Touching a mapped page past the end of a file truncated meanwhile
	// raises SIGBUS; on this goroutine that becomes a recoverable panic.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		r := recover()
		if r == nil {
			if err != nil {
				if n, serr := size(); serr == nil && n < end {
					err = truncated(n)
				}
			}
			return
		}
		fault, ok := r.(interface{ Addr() uintptr })
		if !ok || len(m) == 0 {
			panic(r)
		}
		// A word-wide access may start up to a page before m.
		base := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
		addr := fault.Addr()
		if addr+uintptr(pageSize) < base || addr >= base+uintptr(len(m)) {
			panic(r)
		}
		at := off
		if addr > base {
			at += int64(addr - base)
		}
		err = truncated(at)
	}()
	return fn()
}

// Map returns the first size bytes of f for reading its framing, and a
// function that releases them. Where mmap is available only the pages that
// are touched are read, and they do not stay resident once released;
// elsewhere the bytes are read into memory. Read them under Guard (with
// off 0): another process may truncate the file meanwhile.
func Map(f *os.File, size int64) ([]byte, func(), error) {
	if size == 0 {
		return nil, func() {}, nil
	}
	if !canMap {
		b := make([]byte, size)
		if n, err := f.ReadAt(b, 0); err != nil {
			if err == io.EOF {
				return nil, nil, errorAt(ErrShort, f.Name(), int64(n), int64(n), 0, size)
			}
			return nil, nil, err
		}
		return b, func() {}, nil
	}
	m, err := mapRange(f, 0, int(size))
	if err != nil {
		return nil, nil, err
	}
	return m, func() { unmap(m) }, nil
}
