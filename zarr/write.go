package zarr

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// WriteOptions says how an array is written. The zero value writes
// uncompressed chunks of about 1 MiB (DefaultChunks).
type WriteOptions struct {
	// Chunks is the chunks' shape; nil means DefaultChunks.
	Chunks []int
	// Compressor compresses each chunk (Zlib(level)); nil stores them as
	// they are.
	Compressor *Compressor
	// Attrs, when not nil, is written as the array's .zattrs (see
	// MarshalAttrs for the values it may hold).
	Attrs map[string]any
	// Concurrency is how many chunks are handed to the store's Set at
	// once: 0 means one a core. A store that waits on a network wants
	// more.
	Concurrency int
	// MaxSize bounds the rows held while their chunks fill: one band of
	// chunks along the first axis. 0 means ndarray.DefaultMaxSize.
	MaxSize int64
}

// DefaultChunks returns chunks of about 1 MiB for an array of dt and
// shape: whole rows, as many as fit (at least one), or when a row is
// larger, whole runs of the last dimensions and a part of the first that
// is not whole. A dimension of length 0 gets chunks of 1.
func DefaultChunks(dt ndarray.DType, shape []int) []int {
	budget := max(1, (1<<20)/max(dt.ItemSize, 1))
	chunks := make([]int, len(shape))
	inner := 1
	for d := len(shape) - 1; d >= 0; d-- {
		s := max(shape[d], 1)
		if s <= budget/inner {
			chunks[d] = s
			inner *= s
			continue
		}
		chunks[d] = max(1, budget/inner)
		for e := 0; e < d; e++ {
			chunks[e] = 1
		}
		break
	}
	return chunks
}

// Writer writes one array into a store: Write takes its data, row-major,
// and each band of chunks along the first axis is cut into chunks,
// compressed on every core and stored as soon as its rows are there;
// Close stores the metadata (.zattrs, then .zarray) once every chunk is
// stored, so that no .zarray ever points at chunks not yet written. Each
// chunk is compressed alone, so the store holds the same bytes whatever
// the cores. A Writer is not for concurrent use, but Abort may be called
// from another goroutine.
type Writer struct {
	s     WritableStore
	path  string
	meta  *Meta
	attrs map[string]any

	band   []byte // the rows being filled
	filled int    // bytes of band filled
	row    int    // the first row of band
	direct bool   // a band is one whole chunk, row-major: stored as it is

	raw     chan []byte  // free chunk buffers (and band buffers, when direct)
	encoded chan *[]byte // free buffers for compressed chunks
	jobs    chan writeJob
	sets    chan writeJob
	workers sync.WaitGroup
	setters sync.WaitGroup

	mu     sync.Mutex
	err    error         // the first failure
	failed chan struct{} // closed with it
	done   bool
}

type writeJob struct {
	key string
	raw []byte // the chunk, to return to raw once stored or encoded
	enc *[]byte
}

var errAborted = errors.New("zarr: the write was aborted")

// errNotCreated is what the methods of a Writer not made by Create return.
var errNotCreated = errors.New("zarr: the Writer writes to nothing: make one with WriteOptions.Create")

// Create starts writing an array of dt and shape at path ("" for the
// store's root) of s.
// It fails with an *ndarray.Error wrapping errMetadata or ErrUnsupported
// when the array cannot be written so (Meta.Validate), or ndarray.ErrTooLarge
// when a band of chunks is larger than MaxSize.
func (o WriteOptions) Create(s WritableStore, path string, dt ndarray.DType, shape []int) (*Writer, error) {
	chunks := o.Chunks
	if chunks == nil {
		chunks = DefaultChunks(dt, shape)
	}
	m := &Meta{Shape: slices.Clone(shape), Chunks: slices.Clone(chunks), DType: dt, Order: 'C', Compressor: o.Compressor}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	limit := o.MaxSize
	if limit <= 0 {
		limit = ndarray.DefaultMaxSize
	}
	bandBytes := int64(min(m.bandRows(), m.rows())) * int64(m.rowBytes())
	if bandBytes > limit || int64(m.ChunkSize()) > limit {
		return nil, errAt(ndarray.ErrTooLarge, -1, "chunks of shape %s of an array of shape %s of %s take %d bytes of rows (a chunk %d), more than the %d allowed in memory",
			formatShape(m.Chunks), formatShape(m.Shape), dt, bandBytes, m.ChunkSize(), limit)
	}
	w := &Writer{s: s, path: path, meta: m, attrs: o.Attrs, failed: make(chan struct{})}
	if bandBytes == 0 || m.NumChunks() == 0 {
		return w, nil // no chunks: metadata alone
	}
	w.direct = true
	for d := 1; d < len(m.Shape); d++ {
		w.direct = w.direct && m.Chunks[d] == m.Shape[d]
	}
	cores := runtime.GOMAXPROCS(0)
	conc := o.Concurrency
	if conc <= 0 {
		conc = cores
	}
	// Chunks in flight, handed on without queues: one a compressor (or,
	// uncompressed, a setter) and one being cut from the band; compressed
	// ones, one a compressor and a setter. The buffers are reused, so
	// that the memory stays what they hold.
	n := cores + 1
	if m.Compressor == nil {
		n = conc + 1
	}
	w.raw = make(chan []byte, n+1) // and the band's own buffer, when it goes as a chunk
	for range n {
		w.raw <- nil // allocated when first used
	}
	w.encoded = make(chan *[]byte, cores+conc)
	for range cores + conc {
		w.encoded <- new([]byte)
	}
	w.band = make([]byte, bandBytes)
	w.jobs = make(chan writeJob)
	w.sets = make(chan writeJob)
	if m.Compressor != nil {
		for range cores {
			w.workers.Add(1)
			go w.compress()
		}
	}
	for range conc {
		w.setters.Add(1)
		go w.set()
	}
	return w, nil
}

// Meta returns the metadata the array is written with.
func (w *Writer) Meta() *Meta { return w.meta }

// fail records the first failure and stops the work.
func (w *Writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
		close(w.failed)
	}
}

func (w *Writer) failure() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// compress is a worker: it encodes chunks and hands them to the setters.
func (w *Writer) compress() {
	defer w.workers.Done()
	for j := range w.jobs {
		if w.failure() == nil {
			enc := <-w.encoded // there is one for each compressor and setter
			if *enc == nil {
				// Room for the most a chunk compresses to, so that the
				// buffer never grows by doubling past it.
				*enc = make([]byte, 0, w.meta.maxStored())
			}
			var err error
			if *enc, err = w.meta.EncodeChunk((*enc)[:0], j.raw); err != nil {
				w.fail(err)
				w.encoded <- enc
			} else {
				j.enc = enc
			}
		}
		w.raw <- j.raw
		j.raw = nil
		if j.enc != nil {
			w.sets <- j
		}
	}
}

// set is a setter: it stores chunks.
func (w *Writer) set() {
	defer w.setters.Done()
	for j := range w.sets {
		value := j.raw
		if j.enc != nil {
			value = *j.enc
		}
		if w.failure() == nil {
			if err := w.s.Set(j.key, value); err != nil {
				w.fail(fmt.Errorf("%s: %w", j.key, err))
			}
		}
		if j.enc != nil {
			w.encoded <- j.enc
		}
		if j.raw != nil {
			w.raw <- j.raw
		}
	}
}

// bandLen is the bytes of the band being filled.
func (w *Writer) bandLen() int {
	return min(w.meta.bandRows(), w.meta.rows()-w.row) * w.meta.rowBytes()
}

// left is the bytes of the array still to come.
func (w *Writer) left() int64 {
	if w.band == nil {
		return 0
	}
	return int64(w.meta.rows()-w.row)*int64(w.meta.rowBytes()) - int64(w.filled)
}

// Write takes the next bytes of the array's data.
// It fails when more bytes come than the array holds, with the store's
// errors and after Abort.
func (w *Writer) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		if err := w.check(); err != nil {
			return n, err
		}
		if w.left() == 0 {
			return n, w.tooMuch()
		}
		k := copy(w.band[w.filled:w.bandLen()], p)
		w.filled += k
		n += k
		p = p[k:]
		if err := w.bandDone(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// ReadFrom reads the array's data from r into the bands directly, until
// r ends; it fails when r holds more than the array.
func (w *Writer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	if w.meta == nil {
		return 0, errNotCreated
	}
	for w.left() > 0 {
		if err := w.check(); err != nil {
			return total, err
		}
		k, err := io.ReadFull(r, w.band[w.filled:w.bandLen()])
		w.filled += k
		total += int64(k)
		if berr := w.bandDone(); berr != nil {
			return total, berr
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return total, nil // Close says it is short
		}
		if err != nil {
			return total, err
		}
	}
	var one [1]byte
	if k, _ := io.ReadFull(r, one[:]); k > 0 {
		return total, w.tooMuch()
	}
	return total, nil
}

// errWriteClosed reports a Write after Close.
var errWriteClosed = codecerr.Closed("zarr: write after Close")

func (w *Writer) tooMuch() error {
	return errAt(ndarray.ErrDataLength, -1, "more data than the %d bytes of an array of shape %s of %s", int64(w.meta.rows())*int64(w.meta.rowBytes()), formatShape(w.meta.Shape), w.meta.DType)
}

func (w *Writer) check() error {
	if w.meta == nil {
		return errNotCreated
	}
	if w.done {
		return errWriteClosed
	}
	return w.failure()
}

// bandDone hands the band's chunks on once its rows are all there.
func (w *Writer) bandDone() error {
	if w.filled < w.bandLen() {
		return nil
	}
	m := w.meta
	grid := m.Grid()
	idx := make([]int, len(grid))
	if len(idx) > 0 {
		idx[0] = w.row / m.bandRows()
	}
	rows := w.bandLen() / m.rowBytes()
	if w.direct && rows == m.bandRows() {
		// The band is the chunk: it goes as it is, and a free buffer
		// becomes the next band.
		if err := w.hand(writeJob{key: join(w.path, m.ChunkKey(idx)), raw: w.band}); err != nil {
			return err
		}
		buf, err := w.take()
		if err != nil {
			return err
		}
		w.band = buf[:cap(buf)]
	} else {
		b := &band{row: w.row, n: rows, buf: w.band}
		perBand := m.NumChunks() / max(1, grid[0])
		for k := 0; k < perBand; k++ {
			buf, err := w.take()
			if err != nil {
				return err
			}
			chunk := buf[:m.ChunkSize()]
			fillChunk(chunk, m.Fill)
			copyRegion(b, chunk, idx, m, false)
			if err := w.hand(writeJob{key: join(w.path, m.ChunkKey(idx)), raw: chunk}); err != nil {
				return err
			}
			next(idx, grid, 1)
		}
	}
	w.row += rows
	w.filled = 0
	return nil
}

// take returns a free chunk buffer of the chunk's size (or of the band's,
// when a band is a chunk).
func (w *Writer) take() ([]byte, error) {
	select {
	case buf := <-w.raw:
		if buf == nil {
			buf = make([]byte, w.meta.ChunkSize())
		}
		return buf, nil
	case <-w.failed:
		return nil, w.failure()
	}
}

// hand passes a chunk to the compressors, or without a compressor to the
// setters.
func (w *Writer) hand(j writeJob) error {
	to := w.jobs
	if w.meta.Compressor == nil {
		to = w.sets
	}
	select {
	case to <- j:
		return nil
	case <-w.failed:
		w.raw <- j.raw
		return w.failure()
	}
}

// stop ends the workers and waits for them.
func (w *Writer) stop() {
	if w.jobs == nil {
		return
	}
	close(w.jobs)
	w.workers.Wait()
	close(w.sets)
	w.setters.Wait()
	w.jobs = nil
}

// Close waits for every chunk to be stored, then stores .zattrs (when
// WriteOptions.Attrs is set) and .zarray. If anything failed, or the data
// was short, no metadata is stored and Close says why.
func (w *Writer) Close() error {
	if w.meta == nil {
		return errNotCreated
	}
	if w.done {
		return w.failure()
	}
	w.done = true
	if left := w.left(); left > 0 && w.failure() == nil {
		w.fail(errAt(ndarray.ErrTruncated, -1, "the data ended %d bytes short of the %d of an array of shape %s of %s",
			left, int64(w.meta.rows())*int64(w.meta.rowBytes()), formatShape(w.meta.Shape), w.meta.DType))
	}
	w.stop()
	if err := w.failure(); err != nil {
		return err
	}
	if w.attrs != nil {
		if err := w.s.Set(join(w.path, ".zattrs"), MarshalAttrs(w.attrs)); err != nil {
			return err
		}
	}
	meta, err := w.meta.Marshal()
	if err != nil {
		return err
	}
	return w.s.Set(join(w.path, ".zarray"), meta)
}

// Abort stops the writing: chunks being stored are let finish, nothing
// more is stored, and no metadata. Write and Close fail after it.
func (w *Writer) Abort() {
	if w.meta == nil {
		return
	}
	w.fail(errAborted)
}

// copyRegion copies between a chunk at grid index idx (row-major, of the
// chunks' shape) and band b (whole rows of the array): into the chunk
// with toBand false, into the band with toBand true; only the elements
// that lie in the array.
func copyRegion(b *band, chunk []byte, idx []int, m *Meta, toBand bool) {
	item := m.DType.ItemSize
	n := len(m.Shape)
	if n == 0 {
		if toBand {
			copy(b.buf, chunk[:item])
		} else {
			copy(chunk, b.buf[:item])
		}
		return
	}
	ext := make([]int, n)
	start := make([]int, n)
	cstride := make([]int, n)
	bstride := make([]int, n)
	cs, bs := item, item
	for d := n - 1; d >= 0; d-- {
		start[d] = idx[d] * m.Chunks[d]
		ext[d] = min(m.Chunks[d], m.Shape[d]-start[d])
		cstride[d], bstride[d] = cs, bs
		cs *= m.Chunks[d]
		bs *= m.Shape[d]
	}
	start[0] -= b.row // rows count from the band's first
	run := ext[n-1] * item
	pos := make([]int, n) // within the chunk
	for {
		co, bo := 0, 0
		for d := 0; d < n; d++ {
			co += pos[d] * cstride[d]
			bo += (start[d] + pos[d]) * bstride[d]
		}
		if toBand {
			copy(b.buf[bo:bo+run], chunk[co:co+run])
		} else {
			copy(chunk[co:co+run], b.buf[bo:bo+run])
		}
		d := n - 2
		for ; d >= 0; d-- {
			pos[d]++
			if pos[d] < ext[d] {
				break
			}
			pos[d] = 0
		}
		if d < 0 {
			return
		}
	}
}
