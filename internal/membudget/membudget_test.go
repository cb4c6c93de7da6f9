package membudget

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestBudget: memory is taken while it is there, waited for while others
// hold it, refused after the wait or when it can never be had, and what
// is given back wakes those that wait.
func TestBudget(t *testing.T) {
	b := &Budget{Limit: 100}
	ctx := context.Background()
	if err := b.Take(ctx, 60, "a"); err != nil {
		t.Fatal(err)
	}
	err := b.Take(ctx, 101, "a message")
	var be *Error
	if !errors.As(err, &be) || be.Busy() || !strings.Contains(err.Error(), "more than the server's whole memory budget of 100") {
		t.Errorf("more than the budget: %v", err)
	}
	got := make(chan error, 1)
	go func() { got <- b.Take(ctx, 50, "b") }()
	select {
	case err := <-got:
		t.Fatalf("took 50 of the 40 left: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	b.Give(30)
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if b.InUse() != 80 {
		t.Errorf("in use %d, want 80", b.InUse())
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := b.Take(short, 30, "c"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting past the context: %v", err)
	}
	defer func(w time.Duration) { Wait = w }(Wait)
	Wait = 50 * time.Millisecond
	if err := b.Take(ctx, 30, "an observation"); !errors.As(err, &be) || !be.Busy() || !strings.Contains(err.Error(), "which other connections hold") {
		t.Errorf("waiting past Wait: %v", err)
	}
	// Large takes leave the last 64th to small ones.
	b = &Budget{Limit: 256 << 10}
	if err := b.Take(ctx, 252<<10, "large"); err != nil {
		t.Fatal(err)
	}
	if err := b.Take(ctx, 2<<10, "large"); err == nil {
		t.Error("a take of more than a 256th used the last 64th")
	}
	for range 4 {
		if err := b.Take(ctx, 1<<10, "small"); err != nil {
			t.Errorf("a take of a 256th: %v", err)
		}
	}
	unbounded := &Budget{}
	if err := unbounded.Take(ctx, 1<<60, "x"); err != nil {
		t.Errorf("no limit: %v", err)
	}
}
