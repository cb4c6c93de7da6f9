package remote

import (
	"context"
	"errors"
	"io"
	"sync"
)

// parallel reads the bytes [off, end) of an object in parts of part bytes,
// conc of them fetched at once, each by a stream of its own (resumed,
// checked against the object's version, as any), and hands them on in
// order. At most conc parts are held: the dispatcher starts a part only
// when the reader has given one back.
type parallel struct {
	order  chan *partFetch // started parts, in order
	cancel context.CancelFunc
	cur    *partFetch // the part being read
	pos    int        // in cur
	err    error      // sticky
	bufs   *sync.Pool
	done   chan struct{} // closed when the dispatcher has ended
}

// partFetch is one part being fetched.
type partFetch struct {
	buf  []byte
	n    int
	err  error
	done chan struct{} // closed when buf[:n] or err is final
}

func newParallel(r *Object, off, end, part int64, conc int) *parallel {
	ctx, cancel := context.WithCancel(r.ctx)
	p := &parallel{order: make(chan *partFetch, conc-1), cancel: cancel, done: make(chan struct{}),
		bufs: &sync.Pool{New: func() any { b := make([]byte, part); return &b }}}
	go p.dispatch(ctx, r, off, end, part)
	return p
}

// dispatch starts the parts in order, each as soon as the reader leaves
// room for it.
func (p *parallel) dispatch(ctx context.Context, r *Object, off, end, part int64) {
	defer close(p.done)
	defer close(p.order)
	var first *partFetch
	for at := off; at < end; at += part {
		if first != nil {
			// More than one request at once only to a server that
			// answers ranges: one that ignores them is read whole, once,
			// by the first part, into the spool the others then read.
			select {
			case <-r.ranged:
			case <-first.done:
			case <-ctx.Done():
				return
			}
		}
		f := &partFetch{done: make(chan struct{})}
		select {
		case p.order <- f:
		case <-ctx.Done():
			return
		}
		if first == nil {
			first = f
		}
		bp := p.bufs.Get().(*[]byte)
		f.buf = (*bp)[:min(part, end-at)]
		go f.fetch(ctx, r, at)
	}
}

// fetch reads the part at off of r into f.buf.
func (f *partFetch) fetch(ctx context.Context, r *Object, off int64) {
	defer close(f.done)
	s := &stream{obj: r, off: off, end: off + int64(len(f.buf)), ctx: ctx}
	f.n, f.err = io.ReadFull(s, f.buf)
	s.close()
	if f.err == io.ErrUnexpectedEOF || f.err == io.EOF {
		f.err = s.err // the stream's own error says where and why
		if f.err == nil {
			f.err = io.ErrUnexpectedEOF
		}
	}
}

func (p *parallel) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	for p.cur == nil || p.pos == p.cur.n {
		if p.cur != nil {
			if p.cur.err != nil {
				p.err = p.cur.err
				return 0, p.err
			}
			p.release(p.cur)
			p.cur = nil
		}
		f, ok := <-p.order
		if !ok {
			p.err = io.EOF
			return 0, io.EOF
		}
		<-f.done
		p.cur, p.pos = f, 0
		if f.n == 0 && f.err != nil {
			p.err = f.err
			return 0, p.err
		}
	}
	n := copy(b, p.cur.buf[p.pos:p.cur.n])
	p.pos += n
	return n, nil
}

// release gives a part's buffer back.
func (p *parallel) release(f *partFetch) {
	b := f.buf[:cap(f.buf)]
	p.bufs.Put(&b)
	f.buf = nil
}

// Close ends the parts still being fetched.
func (p *parallel) Close() error {
	p.cancel()
	if p.err == nil || p.err == io.EOF {
		p.err = errors.New("remote: read after Close")
	}
	return nil
}
