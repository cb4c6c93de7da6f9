package remote

import (
	"fmt"
	"io"
	"os"
	"sync"
)

// spool holds an object whose server ignores Range requests: it is read
// once, whole, into a temporary file, and every read of the Object is
// served from there. The file is removed as soon as it is made, so that
// nothing is left behind whatever ends the process; it holds the object's
// bytes from its start up to have, and grows only as far as reads ask.
type spool struct {
	mu   sync.Mutex // held while reading on
	file *os.File
	have int64
	feed *stream // the rest of the object, read on when a read needs it
	buf  []byte
	err  error // sticky: why the spool cannot be read further
}

// spoolChunk is how much the spool reads on at a time.
const spoolChunk = 1 << 20

// spooled reports whether the object is read through its spool.
func (r *Object) spooled() bool {
	r.spoolMu.Lock()
	defer r.spoolMu.Unlock()
	return r.spool != nil
}

// spoolFrom starts reading the object through a spool whose first bytes
// are body's, a whole object's body from its first byte, and says so once
// in the log. If another read started the spool first, body is closed.
func (r *Object) spoolFrom(body io.ReadCloser) {
	r.spoolMu.Lock()
	defer r.spoolMu.Unlock()
	if r.spool != nil {
		body.Close()
		return
	}
	sp := &spool{}
	r.spool = sp
	r.opts.logf("%s ignores Range requests: reading the whole object once", r.src.host())
	f, err := os.CreateTemp("", "ndpack-remote-*")
	if err != nil {
		body.Close()
		sp.err = fmt.Errorf("remote: %s: its server ignores Range requests, so it is read whole into a temporary file, and none could be made: %w", r.name, err)
		return
	}
	os.Remove(f.Name())
	sp.file, sp.buf = f, make([]byte, min(spoolChunk, max(r.size, 1)))
	sp.feed = &stream{obj: r, off: 0, end: r.size, body: body, feeds: true}
}

// readSpool is Read for a stream of an object read through its spool.
func (s *stream) readSpool(p []byte) (int, error) {
	s.spooled = true
	s.close()
	n, err := s.obj.readSpoolAt(p[:min(int64(len(p)), s.end-s.off)], s.off)
	s.off += int64(n)
	if err != nil {
		s.err = err
	}
	return n, err
}

// readSpoolAt reads len(p) bytes at off, which lie within the object,
// from the spool, reading the object on into it as far as they need.
func (r *Object) readSpoolAt(p []byte, off int64) (int, error) {
	r.spoolMu.Lock()
	sp := r.spool
	r.spoolMu.Unlock()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.file == nil {
		return 0, sp.err
	}
	for sp.err == nil && sp.have < off+int64(len(p)) {
		n, err := sp.feed.Read(sp.buf[:min(int64(len(sp.buf)), r.size-sp.have)])
		if n > 0 {
			if _, werr := sp.file.WriteAt(sp.buf[:n], sp.have); werr != nil {
				err = fmt.Errorf("remote: %s: writing the temporary copy of the object (its server ignores Range requests): %w", r.name, werr)
			}
			sp.have += int64(n)
		}
		if err == io.EOF && sp.have < r.size {
			err = io.ErrUnexpectedEOF // cannot be: the stream ends at the object's end
		}
		if err != nil && err != io.EOF {
			sp.err = err
			sp.feed.Close()
		}
	}
	if have := sp.have - off; have < int64(len(p)) {
		k, _ := sp.file.ReadAt(p[:max(0, have)], off)
		return k, sp.err
	}
	return sp.file.ReadAt(p, off)
}

// Close releases what the Object holds: the temporary copy of an object
// whose server ignores Range requests. Reads after it fail.
// It returns nil.
func (r *Object) Close() error {
	r.spoolMu.Lock()
	if r.spool == nil {
		r.spool = &spool{}
	}
	sp := r.spool
	r.spoolMu.Unlock()
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.feed != nil {
		sp.feed.Close()
	}
	if sp.file != nil {
		sp.file.Close()
		sp.file = nil
	}
	sp.err, sp.have = errClosedObject, 0
	return nil
}

// errClosedObject is the error of a read after Close.
var errClosedObject = fmt.Errorf("remote: read after Close: %w", os.ErrClosed)
