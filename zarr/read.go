package zarr

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// ReadOptions bounds what reading a store may cost. The zero value is the
// default.
type ReadOptions struct {
	// MaxSize bounds the bytes held in memory at once: one chunk, the
	// band of chunks along the first axis that streaming an array holds,
	// an array read whole (Read, ReadRows). 0 means
	// ndarray.DefaultMaxSize.
	MaxSize int64
	// MaxArrays bounds the arrays a group may hold, at any depth: 0 means
	// 100,000.
	MaxArrays int
}

func (o ReadOptions) maxSize() int64 {
	if o.MaxSize <= 0 {
		return ndarray.DefaultMaxSize
	}
	return o.MaxSize
}

func (o ReadOptions) maxArrays() int {
	if o.MaxArrays <= 0 {
		return 100_000
	}
	return o.MaxArrays
}

// maxGroupDepth bounds how deep groups nest.
const maxGroupDepth = 32

// Array is an array of a store, opened for reading: its metadata is read,
// its chunks are read when its data is. Its methods may be called from
// several goroutines at once.
type Array struct {
	// Name is the array's path under the path it was opened from, its
	// parts joined by "/": "" for the array opened itself, "image" or
	// "run/image" for the arrays of a group.
	Name string
	// Meta is its .zarray.
	Meta *Meta

	store Store
	path  string // its path in the store, "" at the root
	opts  ReadOptions
}

// Open opens what path of s holds ("" for the store's root): an array
// (its .zarray) alone, or the arrays of a group (.zgroup) at any depth, in
// the order of their names, which needs a Lister. A group's member that is
// neither an array nor a group is passed over, as zarr-python does.
// It fails with an error wrapping ErrNotZarr when path holds neither,
// ParseMeta's and ParseGroup's errors, and the store's.
func (o ReadOptions) Open(s Store, p string) ([]*Array, error) {
	a, err := o.openArray(s, p, "")
	if err == nil {
		return []*Array{a}, nil
	}
	if !isNotExist(err) {
		return nil, err
	}
	g, gerr := s.Get(join(p, ".zgroup"), nil, MaxMetadataSize)
	if isNotExist(gerr) {
		return nil, errAt(ErrNotZarr, -1, "%s holds no .zarray and no .zgroup", describePath(p))
	}
	if gerr != nil {
		return nil, gerr
	}
	if err := ParseGroup(g); err != nil {
		return nil, fmt.Errorf("%s: %w", join(p, ".zgroup"), err)
	}
	l, ok := s.(Lister)
	if !ok {
		return nil, errAt(ErrUnsupported, -1, "%s is a group, and its store cannot list the arrays it holds", describePath(p))
	}
	var arrays []*Array
	if err := o.walk(l, p, "", 1, &arrays); err != nil {
		return nil, err
	}
	return arrays, nil
}

func describePath(p string) string {
	if p == "" {
		return "the store's root"
	}
	return fmt.Sprintf("%q", p)
}

// walk appends the arrays under the group at p, named from name.
func (o ReadOptions) walk(l Lister, p, name string, depth int, out *[]*Array) error {
	if depth > maxGroupDepth {
		return errAt(ErrUnsupported, -1, "groups nest more than %d deep at %q", maxGroupDepth, p)
	}
	children, err := l.List(p)
	if err != nil {
		return err
	}
	for _, c := range children {
		if strings.HasPrefix(c, ".") || strings.Contains(c, "/") {
			continue // metadata, or what no key names
		}
		a, err := o.openArray(l, join(p, c), join(name, c))
		if err == nil {
			if len(*out) >= o.maxArrays() {
				return errAt(ndarray.ErrTooLarge, -1, "the group holds more than %d arrays (ReadOptions.MaxArrays)", o.maxArrays())
			}
			*out = append(*out, a)
			continue
		}
		if !isNotExist(err) {
			return err
		}
		g, err := l.Get(join(join(p, c), ".zgroup"), nil, MaxMetadataSize)
		if isNotExist(err) {
			continue
		}
		if err == nil {
			err = ParseGroup(g)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", join(join(p, c), ".zgroup"), err)
		}
		if err := o.walk(l, join(p, c), join(name, c), depth+1, out); err != nil {
			return err
		}
	}
	return nil
}

// openArray reads the .zarray at p; an error matching fs.ErrNotExist
// says there is none.
func (o ReadOptions) openArray(s Store, p, name string) (*Array, error) {
	key := join(p, ".zarray")
	b, err := s.Get(key, nil, MaxMetadataSize)
	if err != nil {
		return nil, err
	}
	m, err := ParseMeta(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return &Array{Name: name, Meta: m, store: s, path: p, opts: o}, nil
}

func join(p, name string) string {
	if p == "" {
		return name
	}
	return p + "/" + name
}

// DataLen returns the bytes of the array's data.
func (a *Array) DataLen() int64 {
	if a.Meta == nil {
		return 0
	}
	n, _ := ndarray.ByteSize(a.Meta.DType, a.Meta.Shape)
	return int64(n)
}

// Key returns the store key of the chunk at grid index idx.
func (a *Array) Key(idx []int) string { return join(a.path, a.Meta.ChunkKey(idx)) }

// NewReader returns a reader of the array's data, row-major, read chunk
// by chunk on every core and handed on in order: its memory is a few
// bands of chunks along the first axis. Close it when done.
// It fails when a band or chunk is larger than ReadOptions.MaxSize.
func (a *Array) NewReader() (io.ReadCloser, error) {
	if err := a.opened(); err != nil {
		return nil, err
	}
	return a.rowsReader(0, a.Meta.rows())
}

// Rows returns a reader of the rows start:stop (along the first axis,
// clamped to the array as Python slices are, negative indexes counting
// from the end) of the array's data, row-major, reading only the chunks
// that hold them. It returns the rows' shape too. It fails for a 0-d
// array, and as NewReader does.
func (a *Array) Rows(start, stop int) (io.ReadCloser, []int, error) {
	if err := a.opened(); err != nil {
		return nil, nil, err
	}
	if len(a.Meta.Shape) == 0 {
		return nil, nil, errAt(ErrUnsupported, -1, "a 0-d array has no rows")
	}
	first, count := rowSpan(a.Meta.Shape[0], start, stop)
	shape := append([]int{count}, a.Meta.Shape[1:]...)
	r, err := a.rowsReader(first, first+count)
	return r, shape, err
}

// rowSpan resolves start:stop over n rows as Python slices do.
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

// Read reads the whole array, row-major.
// It fails when the array is larger than ReadOptions.MaxSize, with the
// store's errors and DecodeChunk's.
func (a *Array) Read() (*ndarray.Array, error) {
	return a.ReadRows(0, maxInt)
}

const maxInt = int(^uint(0) >> 1)

// ReadRows reads the rows start:stop as Rows selects them (a 0-d array
// whole). It fails as Read does.
func (a *Array) ReadRows(start, stop int) (*ndarray.Array, error) {
	if err := a.opened(); err != nil {
		return nil, err
	}
	shape := a.Meta.Shape
	var r io.ReadCloser
	var err error
	if len(shape) == 0 {
		r, err = a.NewReader()
	} else {
		r, shape, err = a.Rows(start, stop)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	n, _ := ndarray.ByteSize(a.Meta.DType, shape)
	if int64(n) > a.opts.maxSize() {
		return nil, errAt(ndarray.ErrTooLarge, -1, "%s of %s is %d bytes, more than the %d ReadOptions.MaxSize allows in memory", formatShape(shape), a.Meta.DType, n, a.opts.maxSize())
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return nil, err
	}
	return ndarray.New(a.Meta.DType, shape, data)
}

// errNotOpened is what the readers of an Array not made by
// ReadOptions.Open return.
var errNotOpened = errors.New("zarr: the Array reads from no store: open one with ReadOptions.Open")

// opened fails for an Array that ReadOptions.Open did not make.
func (a *Array) opened() error {
	if a.Meta == nil || a.store == nil {
		return errNotOpened
	}
	return nil
}

// errClosed reports a reader used after Close.
var errClosed = codecerr.Closed("zarr: reader closed")
