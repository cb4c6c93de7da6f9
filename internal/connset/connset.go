// Package connset keeps a server's listeners and connections, so that one
// Close stops them all and waits for their goroutines: the lifecycle that
// yaqrpc's Server and yaq's Daemon share.
package connset

import (
	"context"
	"errors"
	"net"
	"sync"
)

// Set is the listeners and connections of one server. Make it with New.
type Set struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	listeners map[net.Listener]bool
	conns     map[net.Conn]bool // true while the connection handles a request
	closed    bool
	draining  bool // Shutdown: idle connections close
	wg        sync.WaitGroup
}

// New returns an empty, open Set.
func New() *Set {
	ctx, cancel := context.WithCancel(context.Background())
	return &Set{ctx: ctx, cancel: cancel, listeners: map[net.Listener]bool{}, conns: map[net.Conn]bool{}}
}

// Context is cancelled when the Set closes: the context of the server's
// handlers.
func (s *Set) Context() context.Context { return s.ctx }

// Serve accepts connections on l and serves each with serve on its own
// goroutine until Close, after which it returns closedErr; or it returns
// the accept error. Temporary accept errors (timeouts) are retried.
func (s *Set) Serve(l net.Listener, serve func(net.Conn), closedErr error) error {
	s.mu.Lock()
	if s.closed || s.draining {
		s.mu.Unlock()
		return closedErr
	}
	s.listeners[l] = true
	s.mu.Unlock()
	for {
		conn, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed || s.draining
			s.mu.Unlock()
			if closed {
				return closedErr
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.mu.Lock()
		if s.closed || s.draining {
			s.mu.Unlock()
			conn.Close()
			return closedErr
		}
		s.conns[conn] = false
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			serve(conn)
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
		}()
	}
}

// Busy marks conn as handling a request (busy) or done with it. It reports
// whether the connection should go on: false once Shutdown has begun and
// the connection is idle, when its goroutine should return.
func (s *Set) Busy(conn net.Conn, busy bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[conn]; ok {
		s.conns[conn] = busy
	}
	return busy || !s.draining
}

// Shutdown stops the listeners and closes idle connections at once, lets
// busy ones finish the request in hand (see Busy), then closes as Close
// does. If ctx ends first, it closes everything at once and returns
// ctx.Err().
func (s *Set) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.draining = true
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
