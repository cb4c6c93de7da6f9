package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndpack/ndpack/remote"
)

// A read of more than two parts is fetched in parts on Concurrency
// connections at once, never more, and handed on in order; each part is
// resumed where its body is cut, and a change of the object fails the read.
func TestParallelStream(t *testing.T) {
	data := testData(20<<20 + 12345)
	s := newServer(t, data)
	o, err := remote.Options{PartSize: 1 << 20, Concurrency: 4}.Open(context.Background(), s.url())
	if err != nil {
		t.Fatal(err)
	}
	// A first ranged answer shows the server takes ranges.
	if _, err := o.ReadAt(make([]byte, 10), 0); err != nil {
		t.Fatal(err)
	}
	// Count the GETs at once; each waits (5 s at most) until a second is
	// in, so that a loaded machine cannot serve them one by one.
	var inFlight, most atomic.Int64
	overlap := make(chan struct{})
	var once sync.Once
	s.mu.Lock()
	s.onGet = func(start bool) {
		if !start {
			inFlight.Add(-1)
			return
		}
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n >= 2 {
			once.Do(func() { close(overlap) })
		}
		select {
		case <-overlap:
		case <-time.After(5 * time.Second):
		}
	}
	s.cutPlan = []int{5000, 0, 100000} // three bodies cut, among the parts
	s.mu.Unlock()
	r := o.Stream(100, int64(len(data)))
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data[100:]) {
		t.Fatalf("Stream: %d bytes, equal %v, %v", len(got), bytes.Equal(got, data[100:]), err)
	}
	if m := most.Load(); m > 4 || m < 2 {
		t.Errorf("%d requests at once, want 2 to 4", m)
	}
	if g := s.gets.Load(); g != 1+21+3 {
		t.Errorf("%d GETs, want 25: the first, 21 parts and 3 resumes", g)
	}
	// A change between parts fails the read.
	s.mu.Lock()
	s.changeAfter = int(s.gets.Load()) + 3
	s.mu.Unlock()
	_, err = io.ReadAll(o.Stream(0, int64(len(data))))
	if !errors.Is(err, remote.ErrChanged) {
		t.Errorf("a change mid-read: %v, want ErrChanged", err)
	}
}

// A server that ignores Range is read once, whole, even by a parallel
// read: the parts after the first wait for it to show it takes ranges.
func TestParallelStreamIgnoredRange(t *testing.T) {
	data := testData(10 << 20)
	s := newServer(t, data)
	s.ignoreRange = true
	o, err := remote.Options{PartSize: 1 << 20, Concurrency: 8, ErrorLog: quietLog()}.Open(context.Background(), s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	got, err := io.ReadAll(o.Stream(5, int64(len(data))))
	if err != nil || !bytes.Equal(got, data[5:]) {
		t.Fatalf("Stream: %d bytes, %v", len(got), err)
	}
	if g := s.gets.Load(); g != 1 {
		t.Errorf("%d GETs, want 1", g)
	}
}

var _ = http.MethodGet

// The faults a read survives, or reports, hold for every part of a
// parallel read, at every concurrency: bodies cut short are resumed, a
// change of the object fails the read, a server that ignores Range is read
// once, an answer of 404 is fs.ErrNotExist and names no secret, and the
// bytes that travel are the bytes asked for.
func TestFaultsAtEveryConcurrency(t *testing.T) {
	data := testData(3<<20 + 777)
	for _, conc := range []int{1, 2, 8} {
		opts := remote.Options{PartSize: 64 << 10, Concurrency: conc, ErrorLog: quietLog()}
		openAt := func(t *testing.T, url string) *remote.Object {
			o, err := opts.Open(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { o.Close() })
			return o
		}
		t.Run(fmt.Sprint(conc), func(t *testing.T) {
			s := newServer(t, data)
			o := openAt(t, s.url())
			if _, err := o.ReadAt(make([]byte, 1), 0); err != nil { // a first range answered
				t.Fatal(err)
			}
			s.mu.Lock()
			s.cutPlan = []int{1000, 0, 20000, 0, 0}
			s.mu.Unlock()
			b0 := s.bytes.Load()
			got := make([]byte, len(data)-10)
			if n, err := o.ReadAt(got, 10); n != len(got) || err != nil || !bytes.Equal(got, data[10:]) {
				t.Fatalf("a read with cut bodies: %d, %v", n, err)
			}
			if served := s.settled(b0+int64(len(got))) - b0; served < int64(len(got)) || served > int64(len(got))+21000 {
				t.Errorf("%d bytes served for %d read", served, len(got))
			}

			s.mu.Lock()
			s.changeAfter = int(s.gets.Load()) + 2*min(conc-1, 1) // a later part, when there are parts
			s.mu.Unlock()
			if _, err := o.ReadAt(got, 10); !errors.Is(err, remote.ErrChanged) {
				t.Errorf("a change mid-read: %v, want ErrChanged", err)
			}

			s = newServer(t, data)
			secret := strings.Replace(s.url(), "http://", "http://u:hunter2@", 1) + "?X-Amz-Signature=sekrit"
			o = openAt(t, secret)
			s.mu.Lock()
			s.status = http.StatusNotFound
			s.mu.Unlock()
			_, err := o.ReadAt(got, 10)
			if !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "sekrit") {
				t.Errorf("404 mid-read: %v", err)
			}

			s = newServer(t, data)
			s.ignoreRange = true
			o = openAt(t, s.url())
			if n, err := o.ReadAt(got, 10); n != len(got) || err != nil || !bytes.Equal(got, data[10:]) {
				t.Fatalf("a server that ignores Range: %d, %v", n, err)
			}
			if g := s.gets.Load(); g != 1 {
				t.Errorf("a server that ignores Range: %d GETs, want 1", g)
			}
		})
	}
}
