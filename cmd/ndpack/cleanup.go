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
	// making is held while a file is made and its cleanup registered, and
	// by run: a signal in between waits, so that no file is made that no
	// cleanup knows of.
	making sync.Mutex
	mu     sync.Mutex
	next   int
	fns    map[int]func()
}

// make runs create, which makes a file and returns what removes it, and
// registers that removal before any interrupt can run the cleanups; it
// returns the function that unregisters it once the file is complete. On
// a nil *cleanups (a command run in a test) it only runs create.
func (c *cleanups) make(create func() (undo func(), err error)) (remove func(), err error) {
	if c == nil {
		_, err := create()
		return func() {}, err
	}
	c.making.Lock()
	defer c.making.Unlock()
	undo, err := create()
	if err != nil {
		return nil, err
	}
	return c.add(undo), nil
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
	c.making.Lock() // a file being made is registered first; it is never released: the process exits
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
