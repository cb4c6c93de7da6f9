package render

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/ndpack/ndpack/ndarray"
)

// Source is an array that is read rather than held: its dtype, its shape,
// and Open, which returns a reader of its data from the first element,
// row-major (C order), in DType's byte order (the bytes of an .npy file
// after its header, for one that is not in Fortran order). The Source
// encoders read it at most twice, once for the range of its values and
// once to draw them (once when the range is given and no value can lack a
// level), plus once a line for a Plot's x values, and hold a few rows at a
// time: an array larger than memory draws in a few megabytes.
type Source struct {
	DType ndarray.DType
	Shape []int
	// Open starts a new read of the data from its first byte. A reader
	// that ends before the data does is an error wrapping ndarray.ErrTruncated.
	Open func() (io.ReadCloser, error)
}

// ArraySource returns the Source of an array held in memory, whose reads
// take no copy of it.
func ArraySource(a *ndarray.Array) Source {
	return Source{DType: a.DType, Shape: a.Shape, Open: func() (io.ReadCloser, error) {
		return &memReader{b: a.Data}, nil
	}}
}

// memReader reads a byte slice; the encoders take its bytes in place
// through take, without copying them.
type memReader struct{ b []byte }

func (m *memReader) Read(p []byte) (int, error) {
	if len(m.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, m.b)
	m.b = m.b[n:]
	return n, nil
}

func (m *memReader) Close() error { return nil }

// take returns the next n bytes in place, or fewer at the end.
func (m *memReader) take(n int) []byte {
	n = min(n, len(m.b))
	b := m.b[:n]
	m.b = m.b[n:]
	return b
}

// Limits on what is drawn.
const (
	// MaxSide is the most pixels on a side of a PNG that EncodePNG
	// writes: libpng's default limit on the images it reads (1,000,000),
	// which the viewers that build on it keep.
	MaxSide = 1_000_000
	// MaxPixels is the most pixels of a PNG (65536 x 65536): a larger
	// picture cannot be looked at whole, and a (1M, 1M) array would make
	// a PNG of a gigabyte even if all zeros.
	MaxPixels = 1 << 32
)

// chunk is a run of whole rows read from a Source, on its way to a worker
// and back, in order, to the writer.
type chunk struct {
	first, n int    // the rows
	raw      []byte // their bytes
	above    []byte // the bytes of the row above the first (nil for row 0)
	buf      []byte // what raw and above are read into, for a stream
	done     chan struct{}
	err      error
	// What the worker made of them.
	out     []byte // a PNG's compressed rows
	sum     uint32 // adler32 of the filtered rows
	sumLen  int    // their length
	lo, hi  float64
	missing bool
}

// chunkRows returns how many rows of rowBytes bytes each a chunk holds:
// about 512 KiB, at least one row.
func chunkRows(rowBytes int) int { return max(1, (512<<10)/max(1, rowBytes)) }

// pipeline reads src's h rows of rowBytes bytes in chunks of per rows (with
// the row above each chunk's first when above is set), lets up to workers
// goroutines process them in parallel (work is told which, 0 to
// workers-1), and gives them to consume in order. At most a
// few chunks a worker are in memory at once.
func pipeline(src Source, h, rowBytes, per, workers int, above bool, work func(worker int, c *chunk), consume func(c *chunk) error) (err error) {
	rc, err := src.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	mem, _ := rc.(*memReader)
	if h <= per {
		workers = 1
	}
	inflight := 2 * workers
	free := make(chan *chunk, inflight)
	for range inflight {
		free <- &chunk{}
	}
	todo := make(chan *chunk, inflight)
	order := make(chan *chunk, inflight)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range todo {
				work(w, c)
				close(c.done)
			}
		}()
	}
	go func() { // the reader
		defer close(order)
		defer close(todo)
		var prev []byte // the last row read
		for first := 0; first < h; first += per {
			var c *chunk
			select {
			case c = <-free:
			case <-quit:
				return
			}
			n := min(per, h-first)
			c.first, c.n, c.err, c.above, c.done = first, n, nil, nil, make(chan struct{})
			if mem != nil {
				if above {
					c.above = prev // the row before, in place
				}
				c.raw = mem.take(n * rowBytes)
				if len(c.raw) < n*rowBytes {
					c.err = truncated(int64(first)*int64(rowBytes)+int64(len(c.raw)), int64(h)*int64(rowBytes))
				} else {
					prev = c.raw[len(c.raw)-rowBytes:]
				}
			} else {
				need := n * rowBytes
				if above {
					need += rowBytes
				}
				if cap(c.buf) < need {
					c.buf = make([]byte, need)
				}
				c.buf = c.buf[:need]
				c.raw = c.buf[:n*rowBytes]
				if above {
					c.above = c.buf[n*rowBytes:]
					if first > 0 {
						copy(c.above, prev)
					} else {
						c.above = nil
					}
				}
				k, rerr := io.ReadFull(rc, c.raw)
				if rerr != nil {
					if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
						rerr = truncated(int64(first)*int64(rowBytes)+int64(k), int64(h)*int64(rowBytes))
					}
					c.err = rerr
				}
				prev = c.raw[len(c.raw)-rowBytes:]
			}
			if c.err != nil {
				close(c.done)
				order <- c
				return
			}
			todo <- c
			order <- c
		}
	}()
	defer func() {
		close(quit)
		for c := range order { // let the reader and the workers finish
			<-c.done
		}
		wg.Wait()
	}()
	for c := range order {
		<-c.done
		if c.err != nil {
			return c.err
		}
		if err := consume(c); err != nil {
			return err
		}
		free <- c
	}
	return nil
}

func truncated(at, want int64) error {
	return &ndarray.Error{Pkg: "render", Offset: -1, Err: ndarray.ErrTruncated, Detail: fmt.Sprintf("the data ends after %d of its %d bytes", at, want)}
}
