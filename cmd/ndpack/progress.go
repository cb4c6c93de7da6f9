package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// progress shows, on a terminal, how far a long command has come: nothing
// for its first progressAfter, then a line rewritten in place with the
// bytes done, the total and the rate, erased when the work ends. It is
// silent when standard error is not a terminal or with --quiet.
type progress struct {
	w     io.Writer
	label string
	total int64
	done  atomic.Int64
	start time.Time
	stop  chan struct{}
	wg    sync.WaitGroup
	shown bool // written only by run, read after wg.Wait
}

// progressAfter is how long work runs before progress shows.
const progressAfter = 2 * time.Second

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// startProgress starts showing progress of work on total bytes (0 if
// unknown) when e's standard error is a terminal and quiet is false. The
// returned progress is never nil; call finish when the work ends. The
// label is shown as every message is (oneLine): a name in it holds no
// secret and no control character.
func (e env) startProgress(label string, total int64, quiet bool) *progress {
	p := &progress{w: e.stderr, label: oneLine(label), total: total, start: time.Now(), stop: make(chan struct{})}
	if quiet || !e.terminal {
		return p
	}
	after := e.progressAfter
	if after == 0 {
		after = progressAfter
	}
	p.wg.Add(1)
	go p.run(after)
	return p
}

func (p *progress) add(n int64) { p.done.Add(n) }

// Write counts bytes written through the progress (io.MultiWriter, or a
// writer wrapping another), so that it can follow a copy.
func (p *progress) Write(b []byte) (int, error) { p.done.Add(int64(len(b))); return len(b), nil }

func (p *progress) run(after time.Duration) {
	defer p.wg.Done()
	select {
	case <-time.After(after):
	case <-p.stop:
		return
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		p.show()
		select {
		case <-tick.C:
		case <-p.stop:
			return
		}
	}
}

func (p *progress) show() {
	done := p.done.Load()
	rate := float64(done) / time.Since(p.start).Seconds()
	line := fmt.Sprintf("ndpack: %s: %s", p.label, bytesText(done))
	if p.total > 0 {
		line += fmt.Sprintf(" of %s (%d%%)", bytesText(p.total), done*100/p.total)
	}
	line += fmt.Sprintf(", %s/s", bytesText(int64(rate)))
	fmt.Fprintf(p.w, "\r%s\x1b[K", line)
	p.shown = true
}

// finish stops showing progress and erases the line if one was shown.
func (p *progress) finish() {
	select {
	case <-p.stop:
		return // finished already
	default:
	}
	close(p.stop)
	p.wg.Wait()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// bytesText prints a byte count in binary units: "512 B", "1.5 MiB".
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
