package gr00tpolicy

import (
	"io"
	"log"
	"sync"
)

// syncWriter lets a server's goroutines log to one buffer.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func newLogger(w io.Writer) *log.Logger { return log.New(&syncWriter{w: w}, "", 0) }
