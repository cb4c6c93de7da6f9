package openpi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ndpack/ndpack/ndarray"
)

// budgetWait is how long a connection waits for memory that other
// connections hold before its message is refused: long enough for a
// hostile peer's refused message to be freed, short enough that a peer
// cannot hold a connection waiting.
var budgetWait = 5 * time.Second

// budget is the memory all the connections of a server may take at once
// for their messages: those being read, their decoded values, and the
// actions being sent.
type budget struct {
	limit int64 // bytes; 0 or less: no bound

	mu      sync.Mutex
	used    int64
	waiters int
	freed   chan struct{} // closed when memory is given back while some wait
}

// budgetError is what a message that could not have its memory in time
// fails with; it matches ndarray.ErrTooLarge.
type budgetError struct {
	limit, need int64
	what        string
	never       bool // need is more than the whole budget
}

func (e *budgetError) Error() string {
	if e.never {
		return fmt.Sprintf("%s needs %d bytes, more than the server's whole memory budget of %d (MaxMemory)", e.what, e.need, e.limit)
	}
	return fmt.Sprintf("%s needs %d bytes of the server's memory budget of %d (MaxMemory), which other connections hold: try again", e.what, e.need, e.limit)
}

func (e *budgetError) Unwrap() error { return ndarray.ErrTooLarge }

// take takes n bytes, waiting up to budgetWait (or until ctx ends) for
// other connections to give back what they hold. Memory the caller holds
// stays held while it waits. Takes of more than a 256th of the budget
// leave its last 64th to smaller ones: a flood of large messages cannot
// keep a robot's small observation waiting.
func (b *budget) take(ctx context.Context, n int64, what string) error {
	if b.limit <= 0 || n <= 0 {
		return nil
	}
	room := b.limit
	if n > b.limit/256 {
		room -= b.limit / 64
	}
	if n > room {
		return &budgetError{limit: b.limit, need: n, what: what, never: true}
	}
	var timer *time.Timer
	for {
		b.mu.Lock()
		if b.used+n <= room {
			b.used += n
			b.mu.Unlock()
			return nil
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		b.waiters++
		b.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(budgetWait)
			defer timer.Stop()
		}
		var err error
		select {
		case <-freed:
		case <-timer.C:
			err = &budgetError{limit: b.limit, need: n, what: what}
		case <-ctx.Done():
			err = ctx.Err()
		}
		b.mu.Lock()
		b.waiters--
		b.mu.Unlock()
		if err != nil {
			return err
		}
	}
}

// give gives back n bytes, waking those that wait for memory.
func (b *budget) give(n int64) {
	if b.limit <= 0 || n <= 0 {
		return
	}
	b.mu.Lock()
	b.used -= n
	if b.waiters > 0 && b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}

// inUse returns the bytes taken, for tests.
func (b *budget) inUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// lease is what one connection holds of a budget.
type lease struct {
	b    *budget
	held int64
}

// take takes n more bytes for the connection (see budget.take).
func (l *lease) take(ctx context.Context, n int64, what string) error {
	if err := l.b.take(ctx, n, what); err != nil {
		return err
	}
	l.held += n
	return nil
}

// give gives back n of the bytes the connection holds.
func (l *lease) give(n int64) {
	n = min(n, l.held)
	l.held -= n
	l.b.give(n)
}

// force takes n more bytes for the connection whether or not the budget
// has them: for memory already allocated.
func (l *lease) force(n int64) {
	if n <= 0 || l.b.limit <= 0 {
		return
	}
	l.b.mu.Lock()
	l.b.used += n
	l.b.mu.Unlock()
	l.held += n
}
