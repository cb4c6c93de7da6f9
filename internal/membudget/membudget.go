// Package membudget is the memory a server's connections may take at once
// for their messages (openpi's and gr00t's MaxMemory): a connection takes
// what a message needs before the memory is made, waits a while for
// others to give some back, and is refused with an error matching
// ndarray.ErrTooLarge when they do not.
package membudget

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ndpack/ndpack/ndarray"
)

// Wait is how long a connection waits for memory that other
// connections hold before its message is refused: long enough for a
// hostile peer's refused message to be freed, short enough that a peer
// cannot hold a connection waiting.
var Wait = 5 * time.Second

// Budget is the memory all the connections of a server may take at once
// for their messages: those being read, their decoded values, and the
// actions being sent.
type Budget struct {
	Limit int64 // bytes; 0 or less: no bound

	mu      sync.Mutex
	used    int64
	waiters int
	freed   chan struct{} // closed when memory is given back while some wait
}

// Error is what a message that could not have its memory in time
// fails with; it matches ndarray.ErrTooLarge.
type Error struct {
	limit, need int64
	what        string
	never       bool // need is more than the whole budget
}

func (e *Error) Error() string {
	if e.never {
		return fmt.Sprintf("%s needs %d bytes, more than the server's whole memory budget of %d (MaxMemory)", e.what, e.need, e.limit)
	}
	return fmt.Sprintf("%s needs %d bytes of the server's memory budget of %d (MaxMemory), which other connections hold: try again", e.what, e.need, e.limit)
}

func (e *Error) Unwrap() error { return ndarray.ErrTooLarge }

// Busy reports whether the memory was refused because others held it, so
// that trying again later may succeed; a message that needs more than the
// whole budget is not busy.
func (e *Error) Busy() bool { return !e.never }

// Take takes n bytes, waiting up to Wait (or until ctx ends) for
// other connections to give back what they hold. Memory the caller holds
// stays held while it waits. Takes of more than a 256th of the budget
// leave its last 64th to smaller ones: a flood of large messages cannot
// keep a robot's small observation waiting.
func (b *Budget) Take(ctx context.Context, n int64, what string) error {
	if b.Limit <= 0 || n <= 0 {
		return nil
	}
	room := b.Limit
	if n > b.Limit/256 {
		room -= b.Limit / 64
	}
	if n > room {
		return &Error{limit: b.Limit, need: n, what: what, never: true}
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
			timer = time.NewTimer(Wait)
			defer timer.Stop()
		}
		var err error
		select {
		case <-freed:
		case <-timer.C:
			err = &Error{limit: b.Limit, need: n, what: what}
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

// Give gives back n bytes, waking those that wait for memory.
func (b *Budget) Give(n int64) {
	if b.Limit <= 0 || n <= 0 {
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

// InUse returns the bytes taken.
func (b *Budget) InUse() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Lease is what one connection holds of a budget.
type Lease struct {
	B    *Budget
	held int64
}

// Take takes n more bytes for the connection (see Budget.Take).
func (l *Lease) Take(ctx context.Context, n int64, what string) error {
	if err := l.B.Take(ctx, n, what); err != nil {
		return err
	}
	l.held += n
	return nil
}

// Give gives back n of the bytes the connection holds.
func (l *Lease) Give(n int64) {
	n = min(n, l.held)
	l.held -= n
	l.B.Give(n)
}

// Force takes n more bytes for the connection whether or not the budget
// has them: for memory already allocated.
func (l *Lease) Force(n int64) {
	if n <= 0 || l.B.Limit <= 0 {
		return
	}
	l.B.mu.Lock()
	l.B.used += n
	l.B.mu.Unlock()
	l.held += n
}

// Held returns the bytes the connection holds.
func (l *Lease) Held() int64 { return l.held }
