package zarr

import (
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ndpack/ndpack/ndarray"
)

// A stream hands on an array's rows in order while workers, one a core,
// read and decode the chunks of the bands after the one being read: a
// band is the chunks along the first axis that hold the same rows,
// decoded into one buffer of those whole rows.

// band is the rows [row, row+n) of the array, decoded into buf.
type band struct {
	row, n  int
	buf     []byte
	pending atomic.Int64 // chunks still to decode
	done    chan struct{}
	mu      sync.Mutex
	err     error // the first chunk's failure
}

func (b *band) fail(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
}

func (b *band) finish() {
	if b.pending.Add(-1) == 0 {
		close(b.done)
	}
}

// chunkJob is one chunk of a band to decode.
type chunkJob struct {
	b   *band
	idx []int
}

type stream struct {
	a           *Array
	first, last int // rows to hand on
	order       chan *band
	free        chan []byte
	quit        chan struct{}
	quitOnce    sync.Once
	wg          sync.WaitGroup
	cur         *band
	pos, end    int // what of cur.buf is left to hand on
	err         error
}

// rowsReader streams rows [first, last).
func (a *Array) rowsReader(first, last int) (io.ReadCloser, error) {
	m := a.Meta
	limit := a.opts.maxSize()
	if int64(m.ChunkSize()) > limit {
		return nil, errAt(ndarray.ErrTooLarge, -1, "a chunk of shape %s of %s is %d bytes, more than the %d ReadOptions.MaxSize allows in memory",
			formatShape(m.Chunks), m.DType, m.ChunkSize(), limit)
	}
	bandBytes := int64(min(m.bandRows(), m.rows())) * int64(m.rowBytes())
	if bandBytes > limit {
		return nil, errAt(ndarray.ErrTooLarge, -1, "%d rows of chunks (shape %s) of the array of shape %s of %s are %d bytes, more than the %d ReadOptions.MaxSize allows in memory",
			m.bandRows(), formatShape(m.Chunks), formatShape(m.Shape), m.DType, bandBytes, limit)
	}
	s := &stream{a: a, first: first, last: last, quit: make(chan struct{})}
	if first >= last || m.rowBytes() == 0 {
		s.err = io.EOF
		return s, nil
	}
	cores := runtime.GOMAXPROCS(0)
	// Bands in flight: one read while the others fill, as many as keep
	// every core busy, within a few times the band's bytes.
	nbuf := 1
	if bandBytes <= limit/2 {
		nbuf = int(min(int64(cores+1), max(2, (32<<20)/max(bandBytes, 1))))
	}
	s.order = make(chan *band, nbuf)
	s.free = make(chan []byte, nbuf)
	for range nbuf {
		s.free <- nil // allocated when first used
	}
	work := make(chan chunkJob, cores)
	s.wg.Add(1)
	go s.dispatch(work, int(bandBytes))
	for range cores {
		s.wg.Add(1)
		go s.decode(work)
	}
	return s, nil
}

// dispatch makes the bands in order and hands their chunks to the
// workers.
func (s *stream) dispatch(work chan<- chunkJob, bandBytes int) {
	defer s.wg.Done()
	defer close(work)
	defer close(s.order)
	m := s.a.Meta
	rows := m.bandRows()
	grid := m.Grid()
	perBand := 1
	for _, g := range grid[min(1, len(grid)):] {
		perBand *= g
	}
	for bi := s.first / rows; bi*rows < s.last; bi++ {
		var buf []byte
		select {
		case buf = <-s.free:
		case <-s.quit:
			return
		}
		if buf == nil {
			buf = make([]byte, bandBytes)
		}
		b := &band{row: bi * rows, n: min(rows, m.rows()-bi*rows), buf: buf, done: make(chan struct{})}
		b.pending.Store(int64(perBand))
		select {
		case s.order <- b:
		case <-s.quit:
			return
		}
		idx := make([]int, len(grid))
		if len(idx) > 0 {
			idx[0] = bi
		}
		for k := 0; k < perBand; k++ {
			select {
			case work <- chunkJob{b: b, idx: append([]int(nil), idx...)}:
			case <-s.quit:
				return
			}
			next(idx, grid, 1)
		}
	}
}

// next steps idx to the next grid index, the last dimension fastest,
// dimensions before from left alone.
func next(idx, grid []int, from int) {
	for d := len(idx) - 1; d >= from; d-- {
		idx[d]++
		if idx[d] < grid[d] {
			return
		}
		idx[d] = 0
	}
}

// decode is a worker: it reads and decodes chunks into their bands.
func (s *stream) decode(work <-chan chunkJob) {
	defer s.wg.Done()
	var stored, chunk []byte
	for j := range work {
		select {
		case <-s.quit:
			j.b.finish()
			continue
		default:
		}
		var err error
		stored, chunk, err = s.decodeOne(j, stored, chunk)
		if err != nil {
			j.b.fail(err)
		}
		j.b.finish()
	}
}

// decodeOne reads the chunk of j and copies its elements into its band.
func (s *stream) decodeOne(j chunkJob, stored, chunk []byte) ([]byte, []byte, error) {
	a, m := s.a, s.a.Meta
	key := a.Key(j.idx)
	size := m.ChunkSize()
	// A chunk that is a whole band's rows, in row-major order, is
	// decoded in place.
	direct := m.order() == 'C' || len(m.Shape) <= 1
	for d := 1; d < len(m.Shape); d++ {
		direct = direct && m.Chunks[d] == m.Shape[d]
	}
	direct = direct && j.b.n == m.bandRows()
	var dst []byte
	if direct {
		dst = j.b.buf[:size]
	} else {
		if cap(chunk) < size {
			chunk = make([]byte, size)
		}
		dst = chunk[:size]
	}
	var err error
	if m.Compressor == nil {
		var got []byte
		got, err = a.store.Get(key, dst[:0], size)
		if err == nil && len(got) != size {
			err = errAt(errChunk, -1, "chunk %q holds %d bytes; a chunk of shape %s of %s holds %d", key, len(got), formatShape(m.Chunks), m.DType, size)
		} else if err == nil && &got[0] != &dst[0] {
			copy(dst, got)
		}
	} else {
		stored, err = a.store.Get(key, stored[:0], m.maxStored())
		if err == nil {
			err = m.DecodeChunk(dst, stored, key)
		}
	}
	if isNotExist(err) {
		fillChunk(dst, m.Fill)
		err = nil
	}
	if err != nil {
		return stored, chunk, fmt.Errorf("%s: %w", key, err)
	}
	if !direct {
		if err := copyChunk(j.b, dst, j.idx, m); err != nil {
			return stored, chunk, err
		}
	}
	return stored, chunk, nil
}

// fillChunk fills dst with the fill item (zero bytes for none).
func fillChunk(dst, fill []byte) {
	if fill == nil {
		clear(dst)
		return
	}
	for i := 0; i < len(dst); i += len(fill) {
		copy(dst[i:], fill)
	}
}

// copyChunk copies the elements of the decoded chunk at idx that lie in
// the array into band b, whose rows are whole rows of the array.
func copyChunk(b *band, chunk []byte, idx []int, m *Meta) error {
	if m.order() == 'F' && len(m.Chunks) > 1 {
		c, err := ndarray.FromColumnMajor(m.DType, m.Chunks, chunk)
		if err != nil {
			return err
		}
		chunk = c.Data
	}
	copyRegion(b, chunk, idx, m, true)
	return nil
}

// Read hands on the rows' bytes in order.
func (s *stream) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	for s.cur == nil || s.pos == s.end {
		if s.cur != nil {
			s.free <- s.cur.buf
			s.cur = nil
		}
		b, ok := <-s.order
		if !ok {
			s.err = io.EOF
			return 0, s.err
		}
		select {
		case <-b.done:
		case <-s.quit:
			s.err = errClosed
			return 0, s.err
		}
		if b.err != nil {
			s.err = b.err
			return 0, s.err
		}
		rb := s.a.Meta.rowBytes()
		s.cur = b
		s.pos = (max(s.first, b.row) - b.row) * rb
		s.end = (min(s.last, b.row+b.n) - b.row) * rb
	}
	n := copy(p, s.cur.buf[s.pos:s.end])
	s.pos += n
	return n, nil
}

// WriteTo writes the rows' bytes to w band by band, without a copy
// between (io.Copy uses it).
func (s *stream) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if s.cur != nil && s.pos < s.end {
			n, err := w.Write(s.cur.buf[s.pos:s.end])
			s.pos += n
			total += int64(n)
			if err == nil && s.pos < s.end {
				err = io.ErrShortWrite
			}
			if err != nil {
				s.err = err
				return total, err
			}
		}
		if _, err := s.Read(nil); err == io.EOF {
			return total, nil
		} else if err != nil {
			return total, err
		}
	}
}

// Close stops the workers and waits for them.
func (s *stream) Close() error {
	s.quitOnce.Do(func() { close(s.quit) })
	if s.order != nil {
		// The dispatcher may wait to hand on a band, or for a free
		// buffer: quit ends both waits.
		s.wg.Wait()
	}
	if s.err == nil || s.err == io.EOF {
		s.err = errClosed
	}
	return nil
}
