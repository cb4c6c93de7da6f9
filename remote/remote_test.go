package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/remote"
)

// server serves one object over HTTP on 127.0.0.1 and counts what it
// serves. Its knobs make it misbehave.
type server struct {
	t    *testing.T
	srv  *httptest.Server
	mu   sync.Mutex
	data []byte
	etag string

	requests, bytes atomic.Int64
	ranges          []string // the Range headers of GETs

	ignoreRange bool // answer 200 with the whole body
	cutAfter    int  // cut each of the next cuts bodies after this many bytes
	cuts        int  // how many bodies to cut
	changeAfter int  // after this many GETs, the object changes
	gets        atomic.Int64
	status      int  // answer every request with this status
	noHead      bool // answer HEAD with 405
}

func newServer(t *testing.T, data []byte) *server {
	s := &server{t: t, data: data, etag: `"v1"`}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) url() string { return s.srv.URL + "/obj.bin" }

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

func (s *server) serve(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if s.status != 0 || s.noHead && r.Method == http.MethodHead {
		status := s.status
		if status == 0 {
			status = http.StatusMethodNotAllowed
		}
		http.Error(w, "no", status)
		return
	}
	s.mu.Lock()
	if r.Method == http.MethodGet {
		s.ranges = append(s.ranges, r.Header.Get("Range"))
		if g := s.gets.Add(1); s.changeAfter > 0 && g > int64(s.changeAfter) {
			s.data = bytes.ToUpper(s.data)
			s.etag = `"v2"`
		}
	}
	data, etag := s.data, s.etag
	cut := r.Method == http.MethodGet && s.cuts > 0
	if cut {
		s.cuts--
	}
	s.mu.Unlock()
	w.Header().Set("ETag", etag)
	cw := countingWriter{w, &s.bytes}
	if cut {
		// Answer the range asked for, but stop after cutAfter bytes.
		var first, last int64
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
		last = min(last, int64(len(data))-1)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(data)))
		w.Header().Set("Content-Length", fmt.Sprint(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		cw.Write(data[first:min(last+1, first+int64(s.cutAfter))])
		panic(http.ErrAbortHandler)
	}
	if s.ignoreRange {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		if r.Method == http.MethodGet {
			cw.Write(data)
		}
		return
	}
	http.ServeContent(cw, r, "obj.bin", time.Unix(1700000000, 0), bytes.NewReader(data))
}

func testData(n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = "abcdefghijklmnopqrstuvwxyz"[r.IntN(26)]
	}
	return b
}

func open(t *testing.T, url string) *remote.Object {
	t.Helper()
	o, err := remote.Options{}.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestHTTPReadAt(t *testing.T) {
	data := testData(100000)
	s := newServer(t, data)
	o := open(t, s.url())
	if o.Size() != int64(len(data)) {
		t.Fatalf("size %d, want %d", o.Size(), len(data))
	}
	p := make([]byte, 1000)
	n, err := o.ReadAt(p, 5000)
	if n != 1000 || err != nil || !bytes.Equal(p, data[5000:6000]) {
		t.Fatalf("ReadAt: %d, %v", n, err)
	}
	// Past the end: the bytes there are, and io.EOF.
	n, err = o.ReadAt(p, int64(len(data))-10)
	if n != 10 || err != io.EOF || !bytes.Equal(p[:10], data[len(data)-10:]) {
		t.Fatalf("ReadAt at the end: %d, %v", n, err)
	}
	if _, err = o.ReadAt(p, int64(len(data))); err != io.EOF {
		t.Fatalf("ReadAt past the end: %v", err)
	}
	// One HEAD, two GETs, each exactly the bytes asked for.
	if got := s.requests.Load(); got != 3 {
		t.Errorf("%d requests, want 3", got)
	}
	if got := s.settled(1010); got != 1010 {
		t.Errorf("%d bytes served, want 1010", got)
	}
	if want := []string{"bytes=5000-5999", "bytes=99990-99999"}; fmt.Sprint(s.ranges) != fmt.Sprint(want) {
		t.Errorf("ranges %q, want %q", s.ranges, want)
	}
}

func TestHTTPStream(t *testing.T) {
	data := testData(1 << 20)
	s := newServer(t, data)
	o := open(t, s.url())
	r := o.Stream(100, 500000)
	got, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(got, data[100:500100]) {
		t.Fatalf("Stream: %d bytes, %v", len(got), err)
	}
	if s.settled(500000); s.requests.Load() != 2 || s.bytes.Load() != 500000 {
		t.Errorf("%d requests, %d bytes; want 2, 500000", s.requests.Load(), s.bytes.Load())
	}
}

func TestHTTPIgnoresRange(t *testing.T) {
	data := testData(50000)
	s := newServer(t, data)
	s.ignoreRange = true
	o := open(t, s.url())
	p := make([]byte, 300)
	if n, err := o.ReadAt(p, 40000); n != 300 || err != nil || !bytes.Equal(p, data[40000:40300]) {
		t.Fatalf("ReadAt: %d, %v", n, err)
	}
}

func TestHTTPResumesCutBody(t *testing.T) {
	data := testData(200000)
	s := newServer(t, data)
	o := open(t, s.url())
	s.cutAfter, s.cuts = 7000, 3
	p := make([]byte, 100000)
	if n, err := o.ReadAt(p, 1000); n != len(p) || err != nil || !bytes.Equal(p, data[1000:101000]) {
		t.Fatalf("ReadAt: %d, %v", n, err)
	}
	// Resumed from the byte reached each time.
	want := []string{"bytes=1000-100999", "bytes=8000-100999", "bytes=15000-100999", "bytes=22000-100999"}
	if fmt.Sprint(s.ranges) != fmt.Sprint(want) {
		t.Errorf("ranges %q, want %q", s.ranges, want)
	}
}

func TestHTTPTruncatedAfterThreeResumes(t *testing.T) {
	data := testData(200000)
	s := newServer(t, data)
	o := open(t, s.url())
	s.cutAfter, s.cuts = 7000, 4
	p := make([]byte, 100000)
	n, err := o.ReadAt(p, 1000)
	if !errors.Is(err, ndarray.ErrTruncated) || n != 28000 {
		t.Fatalf("ReadAt: %d, %v; want 28000 bytes and ndarray.ErrTruncated", n, err)
	}
	if !strings.Contains(err.Error(), "at byte 29000") || !strings.HasPrefix(err.Error(), "remote: ") {
		t.Errorf("error %q does not name byte 29000", err)
	}
	if len(s.ranges) != 4 {
		t.Errorf("%d GETs, want 4 (3 resumes)", len(s.ranges))
	}
}

func TestHTTPChangedMidRead(t *testing.T) {
	data := testData(200000)
	s := newServer(t, data)
	o := open(t, s.url())
	s.changeAfter = 1
	p := make([]byte, 1000)
	if _, err := o.ReadAt(p, 0); err != nil {
		t.Fatal(err)
	}
	_, err := o.ReadAt(p, 1000)
	if !errors.Is(err, remote.ErrChanged) {
		t.Fatalf("after a change: %v, want ErrChanged", err)
	}
	if !strings.Contains(err.Error(), `"v1"`) || !strings.Contains(err.Error(), `"v2"`) {
		t.Errorf("error %q does not name both versions", err)
	}
	// A stream resumed after the change fails too, never mixes.
	s.mu.Lock()
	s.data, s.etag, s.changeAfter = data, `"v1"`, 0
	s.gets.Store(0)
	s.mu.Unlock()
	o = open(t, s.url())
	s.cutAfter, s.cuts, s.changeAfter = 5000, 1, 1
	_, err = o.ReadAt(make([]byte, 50000), 0)
	if !errors.Is(err, remote.ErrChanged) {
		t.Fatalf("resumed after a change: %v, want ErrChanged", err)
	}
}

func TestHTTPStatusErrors(t *testing.T) {
	data := testData(100)
	for _, tc := range []struct {
		status int
		is     error
	}{{404, fs.ErrNotExist}, {403, fs.ErrPermission}, {500, nil}} {
		s := newServer(t, data)
		s.status = tc.status
		url := strings.Replace(s.url(), "http://", "http://user:hunter2@", 1) + "?X-Amz-Signature=sekrit"
		_, err := remote.Options{}.Open(context.Background(), url)
		if err == nil {
			t.Fatalf("%d: no error", tc.status)
		}
		msg := err.Error()
		want := fmt.Sprintf("remote: HEAD %s: %d %s", s.url(), tc.status, http.StatusText(tc.status))
		if msg != want {
			t.Errorf("error %q, want %q", msg, want)
		}
		if strings.Contains(msg, "hunter2") || strings.Contains(msg, "sekrit") {
			t.Errorf("error %q shows a secret", msg)
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%d: %v is not %v", tc.status, err, tc.is)
		}
	}
	// A server that is not there: the error names the URL, no secret.
	s := newServer(t, data)
	url := strings.Replace(s.url(), "http://", "http://user:hunter2@", 1)
	s.srv.Close()
	_, err := remote.Options{}.Open(context.Background(), url)
	if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), s.url()) {
		t.Errorf("refused connection: %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@host/a/b.npy?sig=1#x": "https://host/a/b.npy",
		"s3://bucket/key.npz":              "s3://bucket/key.npz",
		"http://u:p@h%zz/x?y":              "http://h%zz/x",
	} {
		if got := remote.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// A server that refuses HEAD (or a URL signed for GET only) is opened by a
// GET of its first byte.
func TestHTTPNoHead(t *testing.T) {
	data := testData(5000)
	s := newServer(t, data)
	s.noHead = true
	o := open(t, s.url())
	p := make([]byte, 100)
	if o.Size() != 5000 {
		t.Fatalf("size %d", o.Size())
	}
	if n, err := o.ReadAt(p, 4900); n != 100 || err != nil || !bytes.Equal(p, data[4900:]) {
		t.Fatalf("ReadAt: %d, %v", n, err)
	}
	if fmt.Sprint(s.ranges) != "[bytes=0-0 bytes=4900-4999]" {
		t.Errorf("ranges %q", s.ranges)
	}
}

// settled returns the bytes served once they reach want or 5 seconds
// pass: the client can have every byte before the handler's count of its
// last write is made.
func (s *server) settled(want int64) int64 {
	deadline := time.Now().Add(5 * time.Second)
	for s.bytes.Load() < want && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	return s.bytes.Load()
}
