package npybridge

import (
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ndpack/ndpack/ndarray"
)

// ReadArray reads the h.DataLen() data bytes of the array h describes from
// r, positioned at its first data byte, and returns the array row-major.
//
// If r reports how many bytes it holds (a Len method, as bytes.Reader and
// the readers of NPZ.Open have), the claim is checked against it before
// anything is read, and the array is read into one allocation of its size,
// a Fortran-order one transposed as it arrives: a reader's Len must be what
// it can really deliver, so that a header cannot make ReadArray allocate
// more than the input holds. Otherwise memory grows only as bytes arrive,
// and a Fortran-order array costs a second copy to transpose.
// It fails with an *ndarray.Error wrapping ndarray.ErrTruncated when r ends (or its Len says
// it will end) before the data does, or with r's read error.
func (h *Header) ReadArray(r io.Reader) (*ndarray.Array, error) {
	return h.readArrayInto(r, nil, false)
}

// readArrayInto is ReadArray that reads into buf when it has the room, and
// with native converts the data to the machine's byte order a chunk at a
// time as it arrives, while the chunk is in the cache.
func (h *Header) readArrayInto(r io.Reader, buf []byte, native bool) (*ndarray.Array, error) {
	n := h.DataLen()
	fortran := h.FortranOrder && len(h.Shape) > 1
	sized, ok := r.(interface{ Len() int })
	if !ok && int64(cap(buf)) < n {
		return h.readData(r)
	}
	if ok {
		if have := int64(sized.Len()); have < n {
			return nil, errAt(ndarray.ErrTruncated, h.DataOffset, "the header announces %d data bytes (shape %s of %s), the file has %d",
				n, ndarray.FormatShape(h.Shape), h.DType, have)
		}
	}
	var data []byte
	if int64(cap(buf)) >= n {
		data = buf[:n] // the caller's memory: nothing allocated, nothing zeroed
	} else {
		data = make([]byte, n)
	}
	var got int
	var err error
	dt := h.DType
	switch {
	case fortran && n > 0:
		got, err = readColumnMajor(r, data, h.Shape, h.DType.ItemSize)
	case native && dt.WithOrder(ndarray.NativeOrder()) != dt && dt.ItemSize > 0:
		if f, ok := r.(*fileWithLen); ok && len(data) >= 2*parallelSwapPart && runtime.GOMAXPROCS(0) > 1 {
			got, err = f.readSwapped(data, dt)
		} else {
			got, err = readSwapped(r, data, dt)
		}
		dt = dt.WithOrder(ndarray.NativeOrder())
	default:
		got, err = io.ReadFull(r, data)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, errAt(ndarray.ErrTruncated, h.DataOffset, "the header announces %d data bytes (shape %s of %s), the file has only %d",
			n, ndarray.FormatShape(h.Shape), h.DType, got)
	}
	if err != nil {
		return nil, err
	}
	return ndarray.New(dt, h.Shape, data)
}

// swapChunk is how much is read before it is byte-swapped: small enough to
// be in the cache still.
const swapChunk = 128 << 10

// parallelSwapPart is the least a core reads and swaps of a large file's
// data: below two of them, one core does it all.
const parallelSwapPart = 4 << 20

// readSwapped reads len(data) bytes of items of dt from r, swapping each
// chunk to the machine's byte order while it is in the cache. It returns
// the bytes read.
func readSwapped(r io.Reader, data []byte, dt ndarray.DType) (int, error) {
	step := max(1, swapChunk/dt.ItemSize) * dt.ItemSize
	got := 0
	for got < len(data) {
		k, err := io.ReadFull(r, data[got:min(len(data), got+step)])
		piece := ndarray.Array{DType: dt, Data: data[got : got+k/dt.ItemSize*dt.ItemSize]}
		piece.SetOrder(ndarray.NativeOrder()) // the fields not in it already, of a record
		got += k
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

// readSwapped is readSwapped for a file, on every core: each reads its
// part of the data (positioned reads, the file's offset untouched until
// the end) and swaps it chunk by chunk as it arrives, so that the reads,
// the page faults of new memory and the swaps all run in parallel. The
// file is then left after the data, as a Read leaves it.
func (f *fileWithLen) readSwapped(data []byte, dt ndarray.DType) (int, error) {
	parts := min(runtime.GOMAXPROCS(0), len(data)/parallelSwapPart)
	step := max(1, swapChunk/dt.ItemSize) * dt.ItemSize
	per := (len(data)/parts + step - 1) / step * step // whole chunks, so whole items
	got := make([]int, parts)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part := data[min(len(data), p*per):min(len(data), (p+1)*per)]
			got[p], errs[p] = readSwapped(io.NewSectionReader(f.File, f.pos+int64(p*per), int64(len(part))), part, dt)
		}()
	}
	wg.Wait()
	total := 0
	for p := range parts {
		total += got[p]
		if errs[p] != nil {
			return total, errs[p] // the bytes before the first part that ended short
		}
	}
	_, err := f.Seek(f.pos+int64(total), io.SeekStart)
	return total, err
}

// columnChunk is how many bytes of a column-major array are read before
// they are transposed: a matrix's whole columns up to about this size, so
// that the tiles below write many items of each row they visit (with 16
// KiB columns, 64 of them: 512 bytes per row, measured twice as fast as 16
// per row) while the chunk still fits in a core's L2 cache.
const columnChunk = 1 << 20

// readColumnMajor reads len(dst) bytes of column-major data from r and
// writes them row-major into dst, a chunk at a time: no second copy of the
// array is made. It returns the bytes read.
func readColumnMajor(r io.Reader, dst []byte, shape []int, item int) (int, error) {
	t := newColumnScatter(dst, shape, item)
	size := max(item, columnChunk/item*item)
	if col := shape[0] * item; len(shape) == 2 && col > 0 && col <= columnChunk {
		size = columnChunk / col * col // whole columns, so none is split between chunks
	}
	chunk := make([]byte, min(len(dst), size))
	done := 0
	for done < len(dst) {
		k, err := io.ReadFull(r, chunk[:min(len(chunk), len(dst)-done)])
		whole := k / item * item
		t.write(chunk[:whole])
		done += k
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// columnScatter writes a column-major array's bytes, arriving in order,
// to their row-major places: the first index runs fastest in the input,
// so each item lands a row stride after the last, and an odometer over the
// other indices moves the start of each run.
type columnScatter struct {
	dst     []byte
	shape   []int
	item    int
	strides []int // row-major byte strides
	idx     []int // the index of the next item in dimensions 1..
	i0      int   // its index in dimension 0
	base    int   // dst offset of the item at (0, idx[1:]...)
}

func newColumnScatter(dst []byte, shape []int, item int) *columnScatter {
	t := &columnScatter{dst: dst, shape: shape, item: item, strides: make([]int, len(shape)), idx: make([]int, len(shape))}
	s := item
	for k := len(shape) - 1; k >= 0; k-- {
		t.strides[k] = s
		s *= shape[k]
	}
	return t
}

// write places src, whole items, after those already written.
func (t *columnScatter) write(src []byte) {
	item, stride, rows := t.item, t.strides[0], t.shape[0]
	for len(src) > 0 {
		if len(t.shape) == 2 && t.i0 == 0 && rows > 0 {
			// Whole columns of a matrix: transposed tile by tile, so that
			// both the columns read and the rows written stay in the
			// cache.
			if k := min(len(src)/(rows*item), t.shape[1]-t.idx[1]); k > 0 {
				transposeTiles(t.dst[t.base:], t.shape[1]*item, src[:k*rows*item], rows, k, item)
				src = src[k*rows*item:]
				t.idx[1] += k
				t.base += k * t.strides[1]
				if t.idx[1] == t.shape[1] {
					t.idx[1], t.base = 0, 0
				}
				continue
			}
		}
		run := min(rows-t.i0, len(src)/item)
		o := t.base + t.i0*stride
		switch item {
		case 1:
			for i := 0; i < run; i++ {
				t.dst[o] = src[i]
				o += stride
			}
		case 2:
			for i := 0; i < run; i++ {
				binary.NativeEndian.PutUint16(t.dst[o:], binary.NativeEndian.Uint16(src[2*i:]))
				o += stride
			}
		case 4:
			for i := 0; i < run; i++ {
				binary.NativeEndian.PutUint32(t.dst[o:], binary.NativeEndian.Uint32(src[4*i:]))
				o += stride
			}
		case 8:
			for i := 0; i < run; i++ {
				binary.NativeEndian.PutUint64(t.dst[o:], binary.NativeEndian.Uint64(src[8*i:]))
				o += stride
			}
		default:
			for i := 0; i < run; i++ {
				copy(t.dst[o:o+item], src[i*item:])
				o += stride
			}
		}
		src = src[run*item:]
		t.i0 += run
		if t.i0 < rows {
			continue
		}
		t.i0 = 0
		for k := 1; k < len(t.shape); k++ {
			t.idx[k]++
			t.base += t.strides[k]
			if t.idx[k] < t.shape[k] {
				break
			}
			t.base -= t.idx[k] * t.strides[k]
			t.idx[k] = 0
		}
	}
}

// transposeTiles writes k column-major columns of rows items (src) into
// dst, row-major with rows rowBytes apart, the columns side by side from
// dst's start. It moves 4 by 4 blocks through registers, within tiles of
// 128 rows by 64 columns: a column at a time would write each item to
// another cache line (and, for power-of-two row lengths, to the same cache
// set); this writes 4 items of a row at once and reads 4 of each column.
func transposeTiles(dst []byte, rowBytes int, src []byte, rows, k, item int) {
	if len(src) < rows*k*item || len(dst) < (rows-1)*rowBytes+k*item {
		panic("npybridge: internal error: transpose of a block larger than its buffers")
	}
	switch item {
	case 1:
		tiles[[1]byte](dst, rowBytes, src, rows, k)
	case 2:
		tiles[[2]byte](dst, rowBytes, src, rows, k)
	case 4:
		tiles[[4]byte](dst, rowBytes, src, rows, k)
	case 8:
		tiles[[8]byte](dst, rowBytes, src, rows, k)
	case 16:
		tiles[[16]byte](dst, rowBytes, src, rows, k)
	default:
		const tile = 32
		for ib := 0; ib < rows; ib += tile {
			for jb := 0; jb < k; jb += tile {
				for j := jb; j < min(jb+tile, k); j++ {
					for i := ib; i < min(ib+tile, rows); i++ {
						copy(dst[i*rowBytes+j*item:i*rowBytes+j*item+item], src[(j*rows+i)*item:])
					}
				}
			}
		}
	}
}

// tiles is transposeTiles for items of T, a byte array: its alignment of 1
// makes any address fine, and the compiler moves it as one word. The
// caller has checked both buffers' lengths, so the moves go by address,
// without a bounds check each.
func tiles[T any](dstBytes []byte, rowBytes int, srcBytes []byte, rows, k int) {
	const tileRows, tileCols = 128, 64
	size := unsafe.Sizeof(*new(T))
	sp := unsafe.Pointer(unsafe.SliceData(srcBytes))
	dp := unsafe.Pointer(unsafe.SliceData(dstBytes))
	col, row := uintptr(rows)*size, uintptr(rowBytes)
	at := func(p unsafe.Pointer, off uintptr) *T { return (*T)(unsafe.Add(p, off)) }
	for jb := 0; jb < k; jb += tileCols {
		je := min(jb+tileCols, k)
		for ib := 0; ib < rows; ib += tileRows {
			ie := min(ib+tileRows, rows)
			j := jb
			for ; j+4 <= je; j += 4 {
				i := ib
				for ; i+4 <= ie; i += 4 {
					s := unsafe.Add(sp, uintptr(j)*col+uintptr(i)*size)
					a00, a01, a02, a03 := *at(s, 0), *at(s, size), *at(s, 2*size), *at(s, 3*size)
					s = unsafe.Add(s, col)
					a10, a11, a12, a13 := *at(s, 0), *at(s, size), *at(s, 2*size), *at(s, 3*size)
					s = unsafe.Add(s, col)
					a20, a21, a22, a23 := *at(s, 0), *at(s, size), *at(s, 2*size), *at(s, 3*size)
					s = unsafe.Add(s, col)
					a30, a31, a32, a33 := *at(s, 0), *at(s, size), *at(s, 2*size), *at(s, 3*size)
					d := unsafe.Add(dp, uintptr(i)*row+uintptr(j)*size)
					*at(d, 0), *at(d, size), *at(d, 2*size), *at(d, 3*size) = a00, a10, a20, a30
					d = unsafe.Add(d, row)
					*at(d, 0), *at(d, size), *at(d, 2*size), *at(d, 3*size) = a01, a11, a21, a31
					d = unsafe.Add(d, row)
					*at(d, 0), *at(d, size), *at(d, 2*size), *at(d, 3*size) = a02, a12, a22, a32
					d = unsafe.Add(d, row)
					*at(d, 0), *at(d, size), *at(d, 2*size), *at(d, 3*size) = a03, a13, a23, a33
				}
				for ; i < ie; i++ { // the last rows of the tile, fewer than 4
					for c := j; c < j+4; c++ {
						*at(dp, uintptr(i)*row+uintptr(c)*size) = *at(sp, uintptr(c)*col+uintptr(i)*size)
					}
				}
			}
			for ; j < je; j++ { // the last columns, fewer than 4
				for i := ib; i < ie; i++ {
					*at(dp, uintptr(i)*row+uintptr(j)*size) = *at(sp, uintptr(j)*col+uintptr(i)*size)
				}
			}
		}
	}
}
