package npybridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"

	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// Sentinel errors of appending, besides those in errors.go.
var (
	// ErrLocked: another Appender, of this process or another, holds the
	// file (see AppendOptions.Wait).
	ErrLocked = errors.New("locked by another appender")
	// ErrNotAppended: an Append could not write its rows (a full disk, an
	// I/O error). The file was cut back to its last whole row, and the
	// error says how many rows it holds.
	ErrNotAppended = errors.New("rows not appended")
)

// Appender adds rows to an .npy file in place, for data acquisition: frames
// arrive one by one and land in one file that numpy can load at any moment.
//
// Each Append writes the rows after the data, then rewrites the count of
// rows (the first dimension of the header's shape) in place, inside the
// padding numpy leaves for it. So after every Append returns the file is a
// valid .npy holding every row so far, and a process killed at any moment
// (kill -9 included) leaves one holding the rows of every completed Append:
// the header is rewritten by a single small write, which a dying process
// cannot leave half done, and rows written but not yet counted are bytes
// after the data, which np.load ignores. An Append that fails (a full disk)
// cuts those bytes off again and leaves the count as it was. Nothing is
// fsynced unless Sync is called: that would guard against power loss, at
// disk speed.
//
// An Appender holds an exclusive advisory lock (flock) on its file from
// OpenAppend to Close, so that two writers never append to one file: each
// would write its rows over the other's and count only its own. Readers take
// no lock and are never blocked; numpy, ReadFile and OpenMapped read the
// file at any moment. The lock is advisory: a program that writes the file
// without taking it (np.save over it, another tool) is not stopped. Where
// flock does not exist (Windows) there is no lock.
//
// An Appender is not safe for concurrent use.
type Appender struct {
	f        *os.File
	name     string
	dt       ndarray.DType
	rowShape []int
	rowBytes int64
	rows     int64
	prefix   int    // bytes before the header text: magic, version, length
	textLen  int    // bytes of header text, padding and newline, fixed
	dataOff  int64  // where the data starts
	header   []byte // as on disk
	// The header text around the count, and a buffer for the new line:
	// rewriting the count allocates nothing.
	before, after []byte
	line          []byte
	// writeAt writes the rows; tests replace it to fail as a full disk.
	writeAt func(p []byte, off int64) (int, error)
}

// AppendOptions controls how OpenAppend takes its file. The zero value
// fails at once if another Appender holds the file.
type AppendOptions struct {
	// Wait makes OpenAppend wait for the Appender that holds the file, in
	// this process or another, to close it, instead of failing with
	// ErrLocked. ctx bounds the wait. An Appender waiting
	// for one that the same goroutine holds waits forever.
	Wait bool
}

// OpenAppend opens the .npy file name for appending rows of dtype dt
// and the given row shape, and locks it (see Appender). If another Appender
// holds the file it fails with an error wrapping ErrLocked, or, with
// o.Wait, waits for it until ctx is done (the error then wraps ErrLocked
// and ctx's error).
//
// A file that does not exist is created holding zero rows: it appears under
// its name complete, header and all (it is written beside it, then linked),
// so no reader ever finds it empty. An empty file is taken for one being
// created and given its header. An existing file must be C-order, of
// exactly that dtype and row shape; bytes after its last row (rows of an
// Append that a crash cut short) are dropped.
func (o AppendOptions) OpenAppend(ctx context.Context, name string, dt ndarray.DType, shape ...int) (*Appender, error) {
	fail := func(err error) (*Appender, error) {
		var pe *os.PathError
		if errors.As(err, &pe) && pe.Path == name {
			err = pe.Err // say "append NAME" once
		}
		return nil, &os.PathError{Op: "append", Path: name, Err: err}
	}
	if err := dt.Validate(); err != nil {
		return fail(wrapAt(ErrInvalidArray, -1, err))
	}
	if err := checkWritable(dt); err != nil {
		return fail(err)
	}
	full := append([]int{0}, shape...)
	if _, err := ndarray.ByteSize(dt, full); err != nil {
		return fail(wrapAt(ErrInvalidArray, -1, err))
	}
	a := &Appender{name: name, dt: dt, rowShape: append([]int{}, shape...)}
	a.rowBytes = int64(dt.ItemSize)
	for _, d := range shape {
		a.rowBytes *= int64(d)
	}
	f, created, err := a.lockedFile(ctx, o.Wait)
	if err != nil {
		return fail(err)
	}
	a.f = f
	if created {
		a.useHeader(AppendHeader(nil, a.dt, full))
	} else if err := a.open(); err != nil {
		f.Close()
		return fail(err)
	}
	return a, nil
}

// lockedFile opens the file, creating it if it does not exist, and locks
// it. created reports that it was created with its header.
func (a *Appender) lockedFile(ctx context.Context, wait bool) (f *os.File, created bool, err error) {
	for range 100 {
		f, err := os.OpenFile(a.name, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			f, created, err = a.createFile()
			if errors.Is(err, fs.ErrExist) {
				continue // another process created it first: open that
			}
			if err != nil || created {
				return f, created, err
			}
		} else if err != nil {
			return nil, false, err
		}
		if err := a.lock(ctx, f, wait); err != nil {
			f.Close()
			return nil, false, err
		}
		// While this Appender waited, the name may have been given to
		// another file (a conversion replacing it): rows appended to this
		// one would be lost with it.
		held, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, false, err
		}
		if now, err := os.Stat(a.name); err == nil && os.SameFile(held, now) {
			return f, false, nil
		}
		f.Close()
	}
	return nil, false, errors.New("the file was replaced or removed 100 times while being opened")
}

func (a *Appender) lock(ctx context.Context, f *os.File, wait bool) error {
	ok, err := atomicfile.TryLock(f)
	if err != nil || ok {
		return err
	}
	if !wait {
		return errAt(ErrLocked, -1, "another Appender, in this process or another, is adding rows to the file, "+
			"and rows from two writers would overwrite each other")
	}
	if err := atomicfile.Lock(ctx, f); err != nil {
		if ctx.Err() != nil {
			return &ndarray.Error{Pkg: "npybridge", Err: ErrLocked, Offset: -1, Detail: "gave up waiting for the Appender that holds the file", Cause: err}
		}
		return err
	}
	return nil
}

// createFile creates the file holding zero rows, locked. It writes it
// beside its name and links it there, so that it never appears without its
// header; where the file system has no hard links, it creates it in place
// with no header (created false: whoever locks it first writes it).
func (a *Appender) createFile() (f *os.File, created bool, err error) {
	t, err := atomicfile.Create(a.name, 0o666)
	if err != nil {
		return nil, false, err
	}
	if _, err := t.File.Write(AppendHeader(nil, a.dt, append([]int{0}, a.rowShape...))); err != nil {
		t.Abort()
		return nil, false, err
	}
	err = t.CommitNew()
	if err == nil {
		return t.File, true, nil // locked since atomicfile created it
	}
	if errors.Is(err, fs.ErrExist) {
		return nil, false, err
	}
	f, err = os.OpenFile(a.name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	return f, false, err
}

// useHeader takes header, as on disk, for the file's.
func (a *Appender) useHeader(header []byte) {
	a.header = header
	a.prefix = 10
	if header[6] > 1 {
		a.prefix = 12
	}
	a.textLen = len(header) - a.prefix
	a.dataOff = int64(len(header))
}

func (a *Appender) open() error {
	fi, err := a.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		// Created where there are no hard links, or by a process that
		// died before it wrote the header.
		header := AppendHeader(nil, a.dt, append([]int{0}, a.rowShape...))
		if _, err := a.f.WriteAt(header, 0); err != nil {
			return err
		}
		a.useHeader(header)
		return nil
	}
	h, err := ReadOptions{}.ReadHeader(io.NewSectionReader(a.f, 0, fi.Size()))
	if err != nil {
		return err
	}
	switch {
	case h.FortranOrder && len(h.Shape) > 1:
		return errAt(ErrUnsupported, -1, "the file is in Fortran order: rows cannot be appended to it")
	case len(h.Shape) == 0:
		return errAt(ErrInvalidArray, -1, "the file holds a 0-d array, which has no rows")
	case h.DType != a.dt:
		return errAt(ErrInvalidArray, -1, "the file holds %s, not %s", h.DType, a.dt)
	case !slices.Equal(h.Shape[1:], a.rowShape):
		return errAt(ErrInvalidArray, -1, "the file's rows have shape %s, not %s", ndarray.FormatShape(h.Shape[1:]), ndarray.FormatShape(a.rowShape))
	}
	header := make([]byte, h.DataOffset)
	if _, err := a.f.ReadAt(header, 0); err != nil {
		return errAt(ndarray.ErrTruncated, 0, "the %d-byte header could not be read again: %v", len(header), err)
	}
	a.useHeader(header)
	a.rows = int64(h.Shape[0])
	end := a.dataOff + a.rows*a.rowBytes
	switch {
	case fi.Size() < end:
		return errAt(ndarray.ErrTruncated, a.dataOff, "the header announces %s (%s), the file holds %s of data", codecerr.Count(a.rows, "row"), codecerr.Count(a.rows*a.rowBytes, "byte"), codecerr.Count(fi.Size()-a.dataOff, "byte"))
	case fi.Size() > end:
		// Rows a crash left uncounted: the lock says no writer is
		// adding them.
		return a.f.Truncate(end)
	}
	// Rewriting the header now checks that the count can be rewritten at
	// all (a header written without numpy's room to grow may be full).
	return a.writeCount(a.rows)
}

// Rows returns the number of rows in the file.
func (a *Appender) Rows() int64 { return a.rows }

// Append adds the rows of arr: one row (arr's shape is the row shape) or a
// block (arr's shape is any number of rows, then the row shape). arr's
// dtype must be the file's, byte order included.
// It fails with an error wrapping ErrInvalidArray when arr is nil, invalid,
// or of another dtype or row shape, and with an *os.PathError wrapping
// ErrNotAppended (the file cut back, the write's error as cause) or
// ndarray.ErrTooLarge (no room in the header for the new count) when the rows
// could not be written; after Close, with one wrapping os.ErrClosed.
func (a *Appender) Append(arr *ndarray.Array) error {
	if a.f == nil {
		return &os.PathError{Op: "append", Path: a.name, Err: os.ErrClosed}
	}
	if arr == nil {
		return errAt(ErrInvalidArray, -1, "cannot append a nil *ndarray.Array")
	}
	if err := arr.Validate(); err != nil {
		return wrapAt(ErrInvalidArray, -1, err)
	}
	if arr.DType != a.dt {
		return errAt(ErrInvalidArray, -1, "cannot append %s rows to a file of %s", arr.DType, a.dt)
	}
	var n int64
	switch {
	case slices.Equal(arr.Shape, a.rowShape):
		n = 1
	case len(arr.Shape) == len(a.rowShape)+1 && slices.Equal(arr.Shape[1:], a.rowShape):
		n = int64(arr.Shape[0])
	default:
		return errAt(ErrInvalidArray, -1, "cannot append an array of shape %s to rows of shape %s",
			ndarray.FormatShape(arr.Shape), ndarray.FormatShape(a.rowShape))
	}
	writeAt := a.writeAt
	if writeAt == nil {
		writeAt = a.f.WriteAt
	}
	if _, err := writeAt(arr.Data, a.dataOff+a.rows*a.rowBytes); err != nil {
		return a.rollback(n, err)
	}
	if err := a.writeCount(a.rows + n); err != nil {
		return a.rollback(n, err)
	}
	a.rows += n
	return nil
}

// rollback cuts off what an Append that failed wrote after the last whole
// row (the header still counts only the rows before), and says so.
func (a *Appender) rollback(n int64, cause error) error {
	end := a.dataOff + a.rows*a.rowBytes
	terr := a.f.Truncate(end) // shrinking needs no room on a full disk
	if errors.Is(cause, errHeaderTooLarge) {
		return &os.PathError{Op: "append", Path: a.name, Err: cause}
	}
	var pe *os.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err // the name is said once, below
	}
	what := writeFailure(cause)
	detail := fmt.Sprintf("%s: %s (%d bytes) did not fit; the file was cut back to its last whole row and holds %s", what, rowsText(n), n*a.rowBytes, rowsText(a.rows))
	if terr != nil {
		detail = fmt.Sprintf("%s: %s (%d bytes) were not appended; the header still counts %s, which numpy reads, "+
			"but the bytes written after them could not be cut off (%v): the next OpenAppend drops them", what, rowsText(n), n*a.rowBytes, rowsText(a.rows), terr)
	}
	return &os.PathError{Op: "append", Path: a.name, Err: &ndarray.Error{Pkg: "npybridge", Err: ErrNotAppended, Offset: end, Detail: detail, Cause: cause}}
}

func rowsText(n int64) string {
	if n == 1 {
		return "1 row"
	}
	return strconv.FormatInt(n, 10) + " rows"
}

// writeCount rewrites the header with rows as its first dimension, its
// length unchanged, in one write.
func (a *Appender) writeCount(rows int64) error {
	if a.before == nil {
		// The text for a count of 0, split around the "0".
		text := headerText(a.dt, append([]int{0}, a.rowShape...))
		i := bytes.Index(text, []byte("'shape': (0")) + len("'shape': (")
		a.before, a.after = text[:i], text[i+1:]
		a.line = make([]byte, 0, a.textLen)
	}
	text := strconv.AppendInt(append(a.line[:0], a.before...), rows, 10)
	text = append(text, a.after...)
	if len(text)+1 > a.textLen {
		return errAt(errHeaderTooLarge, int64(a.prefix), "the header has no room for a count of %d rows; "+
			"rewrite the file as np.save or ndpack writes it (with room for any count) to append more", rows)
	}
	// Only the text changes: the dict, then spaces to the newline.
	old := a.header[a.prefix:]
	line := text[:len(old)]
	for i := len(text); i < len(line)-1; i++ {
		line[i] = ' '
	}
	line[len(line)-1] = '\n'
	// Write only the bytes that differ (the count, and what its new
	// length shifts), in one small write a dying process cannot leave
	// half done.
	from, to := 0, len(line)
	for from < to && old[from] == line[from] {
		from++
	}
	for to > from && old[to-1] == line[to-1] {
		to--
	}
	if from == to {
		return nil
	}
	if _, err := a.f.WriteAt(line[from:to], int64(a.prefix+from)); err != nil {
		return err
	}
	copy(old[from:to], line[from:to])
	return nil
}

// headerText is the dict of the header for dtype dt and shape, as np.save
// writes it, without the padding.
func headerText(dt ndarray.DType, shape []int) []byte {
	full := AppendHeader(nil, dt, shape)
	start := 10
	if full[6] == 2 {
		start = 12
	}
	text := full[start:]
	return text[:bytes.IndexByte(text, '}')+1]
}

// Sync commits the file to stable storage (fsync), for data that must
// survive a power loss, not only a crash.
// Its error is the file's fsync error, or one wrapping os.ErrClosed after
// Close.
func (a *Appender) Sync() error {
	if a.f == nil {
		return &os.PathError{Op: "sync", Path: a.name, Err: os.ErrClosed}
	}
	return a.f.Sync()
}

// Close closes the file, which releases its lock. The file is complete
// after every Append; Close adds nothing to it.
// Its error is the file's close error; a second Close returns nil.
func (a *Appender) Close() error {
	if a.f == nil {
		return nil
	}
	err := a.f.Close()
	a.f = nil
	if err != nil {
		return fmt.Errorf("npybridge: closing %s: %w", a.name, err)
	}
	return nil
}
