package npybridge

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/ndpack/ndpack/internal/deflate"
)

// The compressor is the module's own (internal/deflate), not the standard
// library's: compress/flate never takes a three-byte match, which zlib
// (numpy's) takes, so on camera frames with Gaussian noise its members
// were 1.03-1.04x numpy's size at the same level; internal/deflate's are
// within 0.1% of zlib's. It Huffman codes a block of noise (random
// floats) whole, as compress/flate's HuffmanOnly did here before: see
// deflate.Encoder.Append.
//
// Parallel deflate, as pigz does it: a member's bytes are cut into blocks
// that are compressed at once on every core, each primed with the 32 KiB
// before it as its dictionary (so matches reach back across the cut and the
// ratio holds), each but the last ended with a sync flush (an empty stored
// block, which ends on a byte boundary), the last with the final block. The
// blocks' outputs joined in order are one valid deflate stream. Memory is
// bounded by the blocks in flight: about 2 x cores x deflateBlock.

// deflateBlock is the uncompressed size of one block. pigz uses 128 KiB;
// larger blocks cost a flush and a goroutine hand-off less often.
const deflateBlock = 1 << 20

// deflateDict is deflate's window: what a block's dictionary holds.
const deflateDict = 32 << 10

// deflateJob is one block: its input (the dictionary first), its output.
type deflateJob struct {
	in   []byte // dictionary then data
	dict int    // bytes of in that are the dictionary
	last bool
	out  []byte
	done chan struct{}
}

// parallelDeflater is an io.WriteCloser of a deflate stream to w.
type parallelDeflater struct {
	w       io.Writer
	level   int
	cur     []byte                // the block being filled, the dictionary first
	curDict int                   // bytes of cur that are the dictionary
	order   chan *deflateJob      // jobs in stream order, for the writer
	work    chan *deflateJob      // jobs for the compressors
	free    chan []byte           // input buffers to reuse
	wg      sync.WaitGroup        // of the compressors
	werr    chan error            // the writer's result
	failed  atomic.Pointer[error] // the writer's error, once it failed
	started bool                  // whether the goroutines run
	closed  bool
	inline  *inlineDeflater // the NPZWriter's, for a member of one block
}

// newParallelDeflater returns a writer of a deflate stream of level
// (zlib's, 1-9) to w. No goroutine starts until the stream exceeds one block: a small member is
// compressed in Close by the caller, with inline (kept from member to
// member), as archive/zip would.
func newParallelDeflater(w io.Writer, level int, inline *inlineDeflater) *parallelDeflater {
	return &parallelDeflater{w: w, level: level, inline: inline}
}

// start starts the compressors and the writer.
func (d *parallelDeflater) start() {
	n := runtime.GOMAXPROCS(0)
	d.order = make(chan *deflateJob, n)
	d.work = make(chan *deflateJob, n)
	d.free = make(chan []byte, 2*n+2)
	d.werr = make(chan error, 1)
	for range n {
		d.wg.Add(1)
		go d.compress()
	}
	go d.write()
	d.started = true
}

func (d *parallelDeflater) buffer() []byte {
	if !d.started {
		return make([]byte, 0, deflateDict+deflateBlock)
	}
	select {
	case b := <-d.free:
		return b[:0]
	default:
		return make([]byte, 0, deflateDict+deflateBlock)
	}
}

// compress compresses jobs until the work ends.
func (d *parallelDeflater) compress() {
	defer d.wg.Done()
	enc, _ := deflate.NewEncoder(d.level) // the level was checked by the NPZWriter
	for j := range d.work {
		j.out = enc.Append(j.out, j.in, j.dict, j.last)
		close(j.done)
	}
}

// write writes the jobs' outputs in order, returning their inputs for
// reuse.
func (d *parallelDeflater) write() {
	var err error
	for j := range d.order {
		<-j.done
		if err == nil {
			_, err = d.w.Write(j.out)
		}
		if err != nil && d.failed.Load() == nil {
			d.failed.Store(&err)
		}
		select {
		case d.free <- j.in:
		default:
		}
	}
	d.werr <- err
}

// dispatch sends the current block to be compressed and starts the next
// with its last 32 KiB as dictionary.
func (d *parallelDeflater) dispatch(last bool) {
	if !d.started {
		d.start()
	}
	j := &deflateJob{in: d.cur, dict: d.curDict, last: last, done: make(chan struct{})}
	j.out = make([]byte, 0, len(d.cur)-d.curDict+len(d.cur)/64+64)
	// The order channel first: the writer waits on jobs in this order, and
	// its capacity bounds the jobs in flight.
	d.order <- j
	d.work <- j
	if last {
		return
	}
	next := d.buffer()
	tail := d.cur[max(0, len(d.cur)-deflateDict):]
	next = append(next, tail...)
	d.cur, d.curDict = next, len(tail)
}

func (d *parallelDeflater) Write(p []byte) (int, error) {
	if d.started {
		if err := d.failed.Load(); err != nil {
			return 0, *err // the stream is lost: stop compressing
		}
	}
	n := 0
	if d.cur == nil && len(p) > 0 {
		d.cur = d.buffer()
	}
	for len(p) > 0 {
		room := d.curDict + deflateBlock - len(d.cur)
		k := min(room, len(p))
		d.cur = append(d.cur, p[:k]...)
		p, n = p[k:], n+k
		if len(d.cur) == d.curDict+deflateBlock {
			d.dispatch(false)
		}
	}
	return n, nil
}

// Close compresses the last block, waits for every block to be written and
// returns the first error.
func (d *parallelDeflater) Close() error {
	if d.closed {
		return nil
	}
	d.closed = true
	if !d.started {
		return d.closeInline()
	}
	d.dispatch(true)
	close(d.order)
	close(d.work)
	d.wg.Wait()
	return <-d.werr
}

// closeInline compresses a stream of at most one block in the caller.
func (d *parallelDeflater) closeInline() error {
	enc := d.inline.enc
	if enc == nil || d.level != d.inline.level {
		var err error
		if enc, err = deflate.NewEncoder(d.level); err != nil {
			return err
		}
		d.inline.enc, d.inline.level = enc, d.level
	}
	d.inline.out = enc.Append(d.inline.out[:0], d.cur, 0, true)
	_, err := d.w.Write(d.inline.out)
	return err
}

// inlineDeflater is the compressor of small members, kept by an NPZWriter
// from member to member, with its output buffer.
type inlineDeflater struct {
	enc   *deflate.Encoder
	level int
	out   []byte
}
