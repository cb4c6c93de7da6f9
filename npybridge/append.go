package npybridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"

	"github.com/ndpack/ndpack/ndarray"
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
// after the data, which np.load ignores. Nothing is fsynced unless Sync is
// called: that would guard against power loss, at disk speed.
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
}

// OpenAppend opens the .npy file name for appending rows of dtype dt and
// the given row shape (the file's shape less its first dimension: no
// dimensions for a file of scalars). A file that does not exist is created
// holding zero rows. An existing file must be C-order, of exactly that
// dtype and row shape; bytes after its last row (rows of an Append that a
// crash cut short) are dropped.
func OpenAppend(name string, dt ndarray.DType, shape ...int) (*Appender, error) {
	if err := dt.Validate(); err != nil {
		return nil, &os.PathError{Op: "append", Path: name, Err: wrapAt(ErrInvalidArray, -1, err)}
	}
	full := append([]int{0}, shape...)
	if _, err := ndarray.ByteSize(dt, full); err != nil {
		return nil, &os.PathError{Op: "append", Path: name, Err: wrapAt(ErrInvalidArray, -1, err)}
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	created := err == nil
	if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(name, os.O_RDWR, 0)
	}
	if err != nil {
		return nil, err
	}
	a := &Appender{f: f, name: name, dt: dt, rowShape: append([]int{}, shape...)}
	a.rowBytes = int64(dt.ItemSize)
	for _, d := range shape {
		a.rowBytes *= int64(d)
	}
	if created {
		err = a.create()
	} else {
		err = a.open()
	}
	if err != nil {
		f.Close()
		if created {
			os.Remove(name)
		}
		return nil, &os.PathError{Op: "append", Path: name, Err: err}
	}
	return a, nil
}

func (a *Appender) create() error {
	a.header = AppendHeader(nil, a.dt, append([]int{0}, a.rowShape...))
	a.prefix = 10
	if a.header[6] == 2 {
		a.prefix = 12
	}
	a.textLen = len(a.header) - a.prefix
	a.dataOff = int64(len(a.header))
	_, err := a.f.WriteAt(a.header, 0)
	return err
}

func (a *Appender) open() error {
	h, err := ReadHeader(io.NewSectionReader(a.f, 0, 1<<62))
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
	a.rows, a.dataOff = int64(h.Shape[0]), h.DataOffset
	a.prefix = 10
	if h.Major > 1 {
		a.prefix = 12
	}
	a.textLen = int(h.DataOffset) - a.prefix
	a.header = make([]byte, h.DataOffset)
	if _, err := a.f.ReadAt(a.header, 0); err != nil {
		return err
	}
	fi, err := a.f.Stat()
	if err != nil {
		return err
	}
	end := a.dataOff + a.rows*a.rowBytes
	switch {
	case fi.Size() < end:
		return errAt(ErrTruncated, a.dataOff, "the header announces %d rows (%d bytes), the file holds %d bytes of data", a.rows, a.rows*a.rowBytes, fi.Size()-a.dataOff)
	case fi.Size() > end:
		return a.f.Truncate(end) // rows a crash left uncounted
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
	if _, err := a.f.WriteAt(arr.Data, a.dataOff+a.rows*a.rowBytes); err != nil {
		return &os.PathError{Op: "append", Path: a.name, Err: err}
	}
	if err := a.writeCount(a.rows + n); err != nil {
		return &os.PathError{Op: "append", Path: a.name, Err: err}
	}
	a.rows += n
	return nil
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
		return errAt(ErrHeaderTooLarge, int64(a.prefix), "the header has no room for a count of %d rows; "+
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
func (a *Appender) Sync() error {
	if a.f == nil {
		return &os.PathError{Op: "sync", Path: a.name, Err: os.ErrClosed}
	}
	return a.f.Sync()
}

// Close closes the file. The file is complete after every Append; Close
// adds nothing to it.
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
