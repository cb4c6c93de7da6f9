package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// cleanups are what must be undone if the process is interrupted: the
// temporary files of outputs not yet complete.
type cleanups struct {
	mu   sync.Mutex
	next int
	fns  map[int]func()
}

// add registers f and returns a function that unregisters it. On a nil
// *cleanups (a command run in a test) it does nothing.
func (c *cleanups) add(f func()) (remove func()) {
	if c == nil {
		return func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.fns == nil {
		c.fns = map[int]func(){}
	}
	id := c.next
	c.next++
	c.fns[id] = f
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.fns, id)
	}
}

func (c *cleanups) run() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, f := range c.fns {
		f()
		delete(c.fns, id)
	}
}

// onInterrupt runs c when SIGINT or SIGTERM arrives, then exits as shells
// expect of a process killed by that signal: 130 or 143.
func onInterrupt(c *cleanups) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sigs
		c.run()
		code := 130
		if s == syscall.SIGTERM {
			code = 143
		}
		os.Exit(code)
	}()
}
