// Package connset keeps a server's listeners and connections, so that one
// Close stops them all and waits for their goroutines: the lifecycle that
// yaqrpc's Server and yaq's Daemon share. It is also where both get their
// defences against peers that hold connections: the accept loop backs off
// when the process runs out of descriptors instead of ending, a cap on
// concurrent connections makes room by closing the connection idle the
// longest (and refuses the new one only when none is idle), and each
// connection has an idle timeout, a read timeout for a request that has
// begun, a write timeout for a peer that has stopped reading, and a bound
// on the answers queued for a peer that reads slowly. Clients of both
// protocols use PeerClosed to find, before a call, that a server closed
// their idle connection.
package connset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"sync"
	"syscall"
	"time"
)

// The defaults of Limits' fields, chosen so that no yaq client in normal
// use meets them.
const (
	// DefaultMaxConns is the connection cap, unless three quarters of the
	// process's open-file limit is less (see Limits.MaxConns).
	DefaultMaxConns = 1024
	// DefaultIdleTimeout is how long a connection may wait between
	// requests. yaqc reconnects and repeats its call when it finds its
	// connection closed, so an hour costs a client that comes back after
	// lunch nothing, and lets a daemon forget peers that went away.
	DefaultIdleTimeout = time.Hour
	// DefaultReadTimeout is how long a request may take to arrive whole
	// once it has begun: requests are a few bytes to a few MiB.
	DefaultReadTimeout = time.Minute
	// DefaultWriteTimeout is how long a connection is kept while its peer
	// takes (almost) nothing of the answers waiting for it.
	DefaultWriteTimeout = 20 * time.Second
)

// MinWriteProgress is how much of what it has been sent a peer must take
// within the write timeout to count as reading, unless it has taken all it
// was sent: 64 KiB per 20 s with the default, so that a slow link still
// receives large arrays however long they take, while a peer that has
// stopped reading is cut off within the write timeout (and two seconds)
// of stopping.
const MinWriteProgress = 64 << 10

// MaxSendBacklog is how much of its answers a peer may leave unacknowledged
// in the kernel's send queue (where the kernel says, Linux) before the
// server reads its next request: a peer that pipelines small calls and
// reads just fast enough to pass MinWriteProgress would otherwise keep
// megabytes queued in the server's socket buffers indefinitely. The queue
// then holds at most this and one answer; a client that waits for each
// answer before its next call never waits for it.
const MaxSendBacklog = 256 << 10

// Limits are what a server grants one connection, and how many it serves at
// once. For each field, 0 means its default and a negative value means no
// limit.
type Limits struct {
	// MaxConns caps the connections served at once. At the cap, the
	// connection that has waited between requests the longest (see
	// Conn.Idle) is closed to make room for the new one, so that peers
	// that connect and sit idle cannot lock clients out; clients reconnect
	// when they find their idle connection closed. Only when none is idle
	// (all are mid-request or writing) is the new connection accepted and
	// closed at once, so that a flood cannot fill the listen backlog. Each
	// burst of closings and of refusals is logged in one line.
	// The default is DefaultMaxConns, or three quarters of the process's
	// soft limit on open files (RLIMIT_NOFILE) if that is less, so that the
	// cap is reached before the descriptors run out and the handlers keep
	// some for their own files.
	MaxConns int
	// IdleTimeout bounds the wait for a request between requests (see
	// Conn.Idle).
	IdleTimeout time.Duration
	// ReadTimeout bounds the time from a request's first byte to its last
	// (see Conn.Request).
	ReadTimeout time.Duration
	// WriteTimeout bounds how long a connection is kept whose peer has
	// stopped reading (see Conn.WriteBuffers).
	WriteTimeout time.Duration
}

// resolve turns 0s into defaults and negatives into -1, "none".
func (l Limits) resolve() Limits {
	if l.MaxConns == 0 {
		l.MaxConns = DefaultMaxConns
		if n := openFileLimit(); n > 0 && n/4*3 < l.MaxConns {
			l.MaxConns = max(n/4*3, 1)
		}
	} else if l.MaxConns < 0 {
		l.MaxConns = -1
	}
	dur := func(d *time.Duration, def time.Duration) {
		switch {
		case *d == 0:
			*d = def
		case *d < 0:
			*d = -1
		}
	}
	dur(&l.IdleTimeout, DefaultIdleTimeout)
	dur(&l.ReadTimeout, DefaultReadTimeout)
	dur(&l.WriteTimeout, DefaultWriteTimeout)
	return l
}

// The accept loop's waits after a temporary error, as net/http's: from the
// first, doubling up to the most.
const (
	firstAcceptDelay = 5 * time.Millisecond
	maxAcceptDelay   = time.Second
)

// Set is the listeners and connections of one server. Make it with New.
type Set struct {
	ctx    context.Context
	cancel context.CancelFunc
	logf   func(format string, args ...any)
	// sleep waits d, or until the Set stops, when it reports false; tests
	// replace it to see the accept loop's backoff.
	sleep func(d time.Duration) bool

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[*Conn]bool // true while the connection handles a request
	// idle holds the connections waiting between requests, with when they
	// began to: those the cap may close to make room.
	idle     map[*Conn]time.Time
	closed   bool
	draining bool          // Shutdown: idle connections close
	stop     chan struct{} // closed at Shutdown or Close: ends backoff waits
	wg       sync.WaitGroup

	// The throttled log: when it last wrote, and what it left out since.
	lastNote     time.Time
	notesSkipped int
}

// New returns an empty, open Set that logs with logf (nil: the log
// package's standard logger). The lines it logs begin with the listener's
// or the peer's address; logf adds the server's prefix.
func New(logf func(format string, args ...any)) *Set {
	ctx, cancel := context.WithCancel(context.Background())
	if logf == nil {
		logf = log.Printf
	}
	s := &Set{ctx: ctx, cancel: cancel, logf: logf, listeners: map[net.Listener]bool{}, conns: map[*Conn]bool{}, idle: map[*Conn]time.Time{}, stop: make(chan struct{})}
	s.sleep = func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-s.stop:
			return false
		}
	}
	return s
}

// Context is cancelled when the Set closes: the context of the server's
// handlers.
func (s *Set) Context() context.Context { return s.ctx }

// Len returns how many connections are open.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Idle returns how many connections wait between requests: those the cap
// may close to make room.
func (s *Set) Idle() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.idle)
}

// Unserved returns how many accepted connections their server has not yet
// marked (Idle, Greet or Request). Such a connection counts as neither
// idle nor waiting; a test that waits until connections are mid-request
// waits for none to be unserved as well.
func (s *Set) Unserved() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		if !c.marked {
			n++
		}
	}
	return n
}

// Serve accepts connections on l and serves each with serve on its own
// goroutine, as a *Conn under lim, until Close, after which it returns
// closedErr. Errors that pass (running out of descriptors or buffers, an
// aborted connection, a timeout) are retried after a wait that doubles from
// 5 ms to 1 s, logged once per run of failures, as net/http's Server does:
// a daemon at its open-file limit serves again as soon as connections
// close. Any other accept error is returned.
func (s *Set) Serve(l net.Listener, lim Limits, serve func(net.Conn), closedErr error) error {
	lim = lim.resolve()
	s.mu.Lock()
	if s.closed || s.draining {
		s.mu.Unlock()
		return closedErr
	}
	s.listeners[l] = true
	s.mu.Unlock()
	var delay time.Duration // the wait after the last failed accept; 0 after a success
	refusing := false       // the last connection was over the cap
	var lastEviction time.Time
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.stopping() {
				return closedErr
			}
			if !passing(err) {
				return err
			}
			if delay == 0 {
				delay = firstAcceptDelay
				s.logf("%s: %v; retrying after %v, doubling to %v, until accept succeeds", l.Addr(), err, delay, maxAcceptDelay)
			} else {
				delay = min(2*delay, maxAcceptDelay)
			}
			if !s.sleep(delay) {
				return closedErr
			}
			continue
		}
		delay = 0
		s.mu.Lock()
		if s.closed || s.draining {
			s.mu.Unlock()
			nc.Close()
			return closedErr
		}
		var evicted *Conn
		var evictedIdle time.Duration
		if lim.MaxConns > 0 && len(s.conns) >= lim.MaxConns {
			evicted, evictedIdle = s.evictLocked()
		}
		if evicted == nil && lim.MaxConns > 0 && len(s.conns) >= lim.MaxConns {
			s.mu.Unlock()
			// Reset rather than close: nothing lingers, neither the
			// descriptor nor a TIME_WAIT entry.
			if tc, ok := nc.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			nc.Close()
			if !refusing {
				refusing = true
				s.logf("%s: %d connections open, the limit: refusing new ones until some close", l.Addr(), lim.MaxConns)
			}
			continue
		}
		refusing = false
		c := &Conn{Conn: nc, set: s, lim: lim, markAt: time.Now()}
		s.conns[c] = false
		s.wg.Add(1)
		s.mu.Unlock()
		if evicted != nil {
			evicted.Close()
			// A burst is evictions less than a second apart: one line for
			// a flood, one for each client that comes alone.
			now := time.Now()
			if now.Sub(lastEviction) >= time.Second {
				s.logf("%s: %d connections open, the limit: closing the one idle longest (for %v) to accept a new one, and so on while the limit holds", l.Addr(), lim.MaxConns, evictedIdle.Round(time.Millisecond))
			}
			lastEviction = now
		}
		go func() {
			defer s.wg.Done()
			serve(c)
			s.mu.Lock()
			delete(s.conns, c)
			delete(s.idle, c)
			s.mu.Unlock()
		}()
	}
}

// evictLocked takes the connection that has waited between requests the
// longest out of the Set, to be closed, and returns it with how long it
// waited; nil if no connection is waiting. s.mu is held.
func (s *Set) evictLocked() (*Conn, time.Duration) {
	var oldest *Conn
	var since time.Time
	for c, t := range s.idle {
		if oldest == nil || t.Before(since) {
			oldest, since = c, t
		}
	}
	if oldest == nil {
		return nil, 0
	}
	delete(s.idle, oldest)
	delete(s.conns, oldest)
	return oldest, time.Since(since)
}

// passing reports whether an accept error is one that goes away by itself,
// as descriptors, buffers or memory are freed; the others (a closed
// listener, say) end Serve.
func passing(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	for _, e := range [...]error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (s *Set) stopping() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed || s.draining
}

// stopLocked ends the accept loops' waits; s.mu is held.
func (s *Set) stopLocked() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
}

// Ended takes the error a connection of the Set ended with. What ends
// connections every day (the peer hung up or reset, the Set closed it, it
// was idle too long) is said nowhere; a timeout a peer caused is logged,
// at most once a second, as attacks come in bursts. Anything else is
// returned, for the server to log with what only it can say.
func (s *Set) Ended(conn net.Conn, err error) error {
	var te *TimeoutError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed):
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		// yaqc leaves the empty frames that end answers unread, so its
		// socket resets when the program exits, and an answer written to
		// a client that left meets a broken pipe: ordinary hang-ups.
	case errors.As(err, &te):
		if te.Op != "idle" {
			s.LogThrottled("%s: %v; closing the connection", conn.RemoteAddr(), te)
		}
	default:
		return err
	}
	return nil
}

// LogThrottled logs as the Set's logf does, at most once a second: what
// many connections may each say at once (a hundred peers timing out
// together) takes one line, and the next line says how many were left
// out.
func (s *Set) LogThrottled(format string, args ...any) {
	s.mu.Lock()
	now := time.Now()
	if now.Sub(s.lastNote) < time.Second {
		s.notesSkipped++
		s.mu.Unlock()
		return
	}
	skipped := s.notesSkipped
	s.lastNote, s.notesSkipped = now, 0
	s.mu.Unlock()
	if skipped > 0 {
		format += fmt.Sprintf(" (and %d lines like it left out)", skipped)
	}
	s.logf(format, args...)
}

// Shutdown stops the listeners and closes idle connections at once, lets
// busy ones finish the request in hand (see Conn.Busy), then closes as
// Close does. If ctx ends first, it closes everything at once and returns
// ctx.Err().
func (s *Set) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
	s.stopLocked()
	for l := range s.listeners {
		l.Close()
	}
	for c, busy := range s.conns {
		if !busy {
			c.Close()
		}
	}
	s.mu.Unlock()
	finished := make(chan struct{})
	go func() { s.wg.Wait(); close(finished) }()
	var err error
	select {
	case <-finished:
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.Close()
	return err
}

// Close stops the listeners, closes every connection, cancels Context and
// waits for the connections' goroutines to end. Closing twice does nothing.
func (s *Set) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.stopLocked()
	s.cancel()
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

// Conn is a connection as a server's goroutine sees it: the net.Conn, with
// reads bounded by the phase the server says it is in (Idle, Request) and
// writes that give up on a peer that has stopped reading. Its methods are
// for that one goroutine; Close may be called from any.
type Conn struct {
	net.Conn
	set    *Set // nil for a Conn of Wrap
	lim    Limits
	phase  phase
	marked bool // Idle, Greet or Request has been called; guarded by set.mu

	// What the peer has taken of what it was sent: written counts the
	// bytes the kernel accepted; mark is how much of them the peer had
	// taken at markAt, the last time it was seen to keep up (see
	// progress); sampled is when that was last looked at, and owed what
	// had been written then.
	written         int64
	mark, owed      int64
	markAt, sampled time.Time
	queue           sendQueue
	// acked is what the peer had acknowledged when the kernel was last
	// asked, so that the backlog is asked about only when it may be over
	// MaxSendBacklog.
	acked int64
	// received counts the bytes read, to tell a peer that sent nothing.
	received int64
	// failed is the error every Read and Write returns once the peer has
	// let its backlog stall (see Request).
	failed error
}

// phase is what the read deadline in force bounds.
type phase uint8

const (
	phaseNone    phase = iota // no deadline of ours
	phaseIdle                 // between requests
	phaseRequest              // a request is under way
)

// Wrap returns nc as a *Conn: itself if it is one (a connection of Serve),
// else one with no limits and no Set, for serving a connection by hand (a
// test's net.Pipe).
func Wrap(nc net.Conn) *Conn {
	if c, ok := nc.(*Conn); ok {
		return c
	}
	return &Conn{Conn: nc, lim: Limits{MaxConns: -1, IdleTimeout: -1, ReadTimeout: -1, WriteTimeout: -1}, markAt: time.Now()}
}

// Limited returns nc as a *Conn with the limits lim (0s meaning their
// defaults) but no Set: for a connection a server did not accept itself
// (one an http.Handler hijacked), whose reads and writes are still to be
// bounded. MaxConns does not apply.
func Limited(nc net.Conn, lim Limits) *Conn {
	return &Conn{Conn: nc, lim: lim.resolve(), markAt: time.Now()}
}

// Idle says the server waits for the next request: reads may wait
// IdleTimeout from now. Call Request once it has begun, else the whole
// request gets as long. An idle connection is one the Set may close to
// make room under MaxConns, the one idle longest first: call Idle only
// once the last answer has been written.
func (c *Conn) Idle() {
	c.setIdle(true)
	c.deadline(phaseIdle, c.lim.IdleTimeout)
}

// Greet says the connection is new and its peer speaks first: it must
// begin within ReadTimeout, as a request must end within it, and until it
// does the connection may be closed to make room for a new one, as an idle
// one may (the longest waiting first). A peer that connects and says
// nothing then holds no place that a client which speaks needs.
func (c *Conn) Greet() {
	c.setIdle(true)
	c.deadline(phaseRequest, c.lim.ReadTimeout)
}

// Request says a request has begun (its first byte is in hand, or, for a
// protocol whose peer speaks first, the connection is new): it must be
// read whole within ReadTimeout from now, so that a peer cannot hold the
// connection by sending a request a byte at a time.
//
// First, if the peer has left more than MaxSendBacklog of its answers
// unacknowledged (a peer that pipelines calls and reads slowly), Request
// waits until it has taken enough of them, so that what is queued for it
// stays under MaxSendBacklog and one answer. The wait is bounded as a
// write is: a peer that takes less than MinWriteProgress in WriteTimeout
// makes every later Read and Write of the connection fail with a
// *TimeoutError, and the server closes it. A client that waits for each
// answer before its next call has taken them all, and does not wait.
func (c *Conn) Request() {
	c.setIdle(false)
	c.awaitBacklog()
	c.deadline(phaseRequest, c.lim.ReadTimeout)
}

// Reading says a request has begun, as Request does, without Request's
// wait for a backlog of answers: for a protocol that answers each request
// before it reads the next, and whose connections are written by other
// goroutines too (a websocket's pings), which that wait would race with.
func (c *Conn) Reading() {
	c.setIdle(false)
	c.deadline(phaseRequest, c.lim.ReadTimeout)
}

// setIdle enters the connection in, or takes it out of, its Set's idle
// ones.
func (c *Conn) setIdle(idle bool) {
	s := c.set
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return // closed to make room, or ending
	}
	c.marked = true
	if idle {
		s.idle[c] = time.Now()
	} else {
		delete(s.idle, c)
	}
}

// The waits between looks at a backlog that is draining: from the first,
// doubling up to the most, so that a pipelining client that reads quickly
// waits little and a slow one costs a system call every 50 ms.
const (
	firstBacklogWait = time.Millisecond
	maxBacklogWait   = 50 * time.Millisecond
)

// awaitBacklog waits until at most MaxSendBacklog of what the peer was sent
// is unacknowledged, or sets c.failed when the peer stops taking it.
func (c *Conn) awaitBacklog() {
	wt := c.lim.WriteTimeout
	if wt <= 0 || c.failed != nil || c.written-c.acked <= MaxSendBacklog {
		return
	}
	wait := firstBacklogWait
	for {
		unsent, ok := c.queue.unsent(c.Conn)
		if !ok {
			return // the kernel cannot say (or the connection closed)
		}
		c.acked = c.written - int64(unsent)
		if unsent <= MaxSendBacklog {
			return
		}
		if stalled := c.progress(time.Now(), false); stalled >= wt {
			c.failed = &TimeoutError{Op: "write", Limit: wt, Err: os.ErrDeadlineExceeded}
			return
		}
		if c.set != nil && !c.set.sleep(wait) {
			return // the Set is stopping: Close ends the connection
		} else if c.set == nil {
			time.Sleep(wait)
		}
		wait = min(2*wait, maxBacklogWait)
	}
}

func (c *Conn) deadline(p phase, d time.Duration) {
	c.phase = p
	var t time.Time // zero: none
	if d > 0 {
		t = time.Now().Add(d)
	}
	c.Conn.SetReadDeadline(t)
}

// SetReadDeadline sets a deadline of the caller's own, which Read reports
// as the plain net error it is.
func (c *Conn) SetReadDeadline(t time.Time) error {
	c.phase = phaseNone
	return c.Conn.SetReadDeadline(t)
}

// Read reads from the connection; a read that runs out of the time Idle or
// Request gave fails with a *TimeoutError.
func (c *Conn) Read(p []byte) (int, error) {
	if c.failed != nil {
		return 0, c.failed
	}
	n, err := c.Conn.Read(p)
	c.received += int64(n)
	if err != nil && c.phase != phaseNone && errors.Is(err, os.ErrDeadlineExceeded) {
		switch c.phase {
		case phaseIdle:
			err = &TimeoutError{Op: "idle", Limit: c.lim.IdleTimeout, Err: err}
		case phaseRequest:
			err = &TimeoutError{Op: "read", Limit: c.lim.ReadTimeout, Silent: c.received == 0, Err: err}
		}
	}
	return n, err
}

// Write writes p whole, as WriteBuffers does.
func (c *Conn) Write(p []byte) (int, error) {
	b := net.Buffers{p}
	n, err := c.WriteBuffers(&b)
	return int(n), err
}

// WriteBuffers writes b, with one writev where the connection allows it,
// consuming it as net.Buffers.WriteTo does. The peer may take as long as
// it needs, provided it keeps reading: once it has taken less than
// MinWriteProgress bytes of what it was sent (and not all of it) for
// WriteTimeout, the write fails with a *TimeoutError, and the server
// should close the connection, whose answers would otherwise pile up in
// the kernel's socket buffers (megabytes per connection) for as long as
// the peer pleases.
//
// Where the kernel says how much of the send queue the peer has yet to
// acknowledge (Linux), that is what counts, so the clock starts when the
// peer stops reading, however much the kernel's buffers still absorb
// after; elsewhere, what the kernel accepts of each answer counts.
func (c *Conn) WriteBuffers(b *net.Buffers) (int64, error) {
	if c.failed != nil {
		return 0, c.failed
	}
	wt := c.lim.WriteTimeout
	if wt <= 0 {
		n, err := b.WriteTo(c.Conn)
		c.written += n
		return n, err
	}
	// How often to look at the peer's progress: a blocked write wakes
	// this often, and between answers (where looking costs a system call)
	// it is looked at no more often. The peer is cut off between
	// WriteTimeout and WriteTimeout plus two of these after it stopped.
	window := min(wt/4, time.Second)
	now := time.Now()
	if now.Sub(c.sampled) >= window {
		if stalled := c.progress(now, true); stalled >= wt {
			return 0, &TimeoutError{Op: "write", Limit: wt, Err: os.ErrDeadlineExceeded}
		}
	}
	var total int64
	for {
		c.Conn.SetWriteDeadline(now.Add(window))
		n, err := b.WriteTo(c.Conn)
		total += n
		c.written += n
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			return total, err
		}
		now = time.Now()
		if stalled := c.progress(now, false); stalled >= wt {
			return total, &TimeoutError{Op: "write", Limit: wt, Err: err}
		}
	}
}

// progress notes what the peer has taken of what it was sent and returns
// how long it has been since it was last seen to keep up: to have taken
// everything, or all it was owed when last looked at (a peer that reads
// small answers as they come, over a link slow to acknowledge them), or
// MinWriteProgress bytes more (a slow link, a large answer). start says no
// write is under way: for a kernel that cannot say, everything it accepted
// has gone.
func (c *Conn) progress(now time.Time, start bool) time.Duration {
	taken, keptUp := c.written, start
	if unsent, ok := c.queue.unsent(c.Conn); ok {
		taken = c.written - int64(unsent)
		keptUp = unsent == 0 || taken >= c.owed
	}
	if keptUp || taken-c.mark >= MinWriteProgress {
		c.mark, c.markAt = taken, now
	}
	c.sampled, c.owed = now, c.written
	return now.Sub(c.markAt)
}

// CloseWrite shuts the sending side, when the connection has one.
func (c *Conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Busy marks the connection as handling a request (busy) or done with it.
// It reports whether the connection should go on: false once Shutdown has
// begun and the connection is idle, when its goroutine should return.
func (c *Conn) Busy(busy bool) bool {
	s := c.set
	if s == nil {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; ok {
		s.conns[c] = busy
	}
	return busy || !s.draining
}

// TimeoutError is the error of a read or write that ran out of the time
// Limits give it.
type TimeoutError struct {
	// Op is "idle" (no request came within IdleTimeout), "read" (a request
	// was not whole ReadTimeout after it began) or "write" (the peer took
	// less than MinWriteProgress of what it was sent in WriteTimeout).
	Op    string
	Limit time.Duration
	// Silent says, for "read", that the peer has sent nothing at all since
	// it connected: no handshake, no request.
	Silent bool
	Err    error // os.ErrDeadlineExceeded, as the connection reported it
}

func (e *TimeoutError) Error() string {
	switch e.Op {
	case "idle":
		return fmt.Sprintf("no request for %v (the idle timeout)", e.Limit)
	case "read":
		if e.Silent {
			return fmt.Sprintf("sent nothing (no handshake, no request) within %v of connecting (the read timeout)", e.Limit)
		}
		return fmt.Sprintf("a request still incomplete %v after it began (the read timeout)", e.Limit)
	}
	return fmt.Sprintf("the peer took less than %d KiB of its answers in %v: it has stopped reading (the write timeout)", MinWriteProgress>>10, e.Limit)
}

// Unwrap returns the connection's own error.
func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports true, as a net.Error's does for a deadline.
func (e *TimeoutError) Timeout() bool { return true }
