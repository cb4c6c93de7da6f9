package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
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
	status      int       // answer every request with this status
	noHead      bool      // answer HEAD with 405
	shortRanges int       // answer a range with at most this many bytes, honestly (206 of a shorter range)
	noGetETag   bool      // give no ETag with GET answers
	cutPlan     []int     // cut the next GETs' bodies after these many bytes, one each
	modified    time.Time // the Last-Modified time, if not the default
	headers     []http.Header
}

func newServer(t *testing.T, data []byte) *server {
	s := &server{t: t, data: data, etag: `"v1"`}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *server) url() string { return s.srv.URL + "/obj.bin" }

// gotRanges and gotHeaders return the Range headers and the headers of the
// GETs so far, under the lock the handler appends them with: a handler may
// still be running when a read that gave up on its body returns.
func (s *server) gotRanges() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ranges)
}

func (s *server) gotHeaders() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.headers)
}

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
		s.headers = append(s.headers, r.Header.Clone())
		if g := s.gets.Add(1); s.changeAfter > 0 && g > int64(s.changeAfter) {
			s.data = bytes.ToUpper(s.data)
			s.etag = `"v2"`
		}
	}
	data, etag := s.data, s.etag
	cut := r.Method == http.MethodGet && (s.cuts > 0 || len(s.cutPlan) > 0)
	cutAfter := s.cutAfter
	switch {
	case cut && len(s.cutPlan) > 0:
		cutAfter, s.cutPlan = s.cutPlan[0], s.cutPlan[1:]
	case cut:
		s.cuts--
	}
	modified := s.modified
	if modified.IsZero() {
		modified = time.Unix(1700000000, 0)
	}
	s.mu.Unlock()
	if etag != "" && !(s.noGetETag && r.Method == http.MethodGet) {
		w.Header().Set("ETag", etag)
	}
	if s.noGetETag {
		r.Header.Del("If-Match") // as a cache in front of the server that drops validators
	}
	cw := countingWriter{w, &s.bytes}
	if s.shortRanges > 0 && r.Method == http.MethodGet {
		var first, last int64
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
		last = min(last, int64(len(data))-1, first+int64(s.shortRanges)-1)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(data)))
		w.Header().Set("Content-Length", fmt.Sprint(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		cw.Write(data[first : last+1])
		return
	}
	if cut {
		// Answer the range asked for, but stop after cutAfter bytes.
		var first, last int64
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
		last = min(last, int64(len(data))-1)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(data)))
		w.Header().Set("Content-Length", fmt.Sprint(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		cw.Write(data[first:min(last+1, first+int64(cutAfter))])
		panic(http.ErrAbortHandler)
	}
	if s.ignoreRange {
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		if r.Method == http.MethodGet {
			cw.Write(data)
		}
		return
	}
	http.ServeContent(cw, r, "obj.bin", modified, bytes.NewReader(data))
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
	if want := []string{"bytes=5000-5999", "bytes=99990-99999"}; fmt.Sprint(s.gotRanges()) != fmt.Sprint(want) {
		t.Errorf("ranges %q, want %q", s.gotRanges(), want)
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

// A server that ignores Range is read once, whole, into a temporary file
// that is removed at once, and every read is served from there; the log
// says so once.
func TestHTTPIgnoresRange(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	data := testData(500000)
	s := newServer(t, data)
	s.ignoreRange = true
	var logged bytes.Buffer
	o, err := remote.Options{ErrorLog: log.New(&logged, "", 0)}.Open(context.Background(), s.url())
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	p := make([]byte, 300)
	for _, off := range []int64{40000, 100, 499700, 250000, 0} {
		if n, err := o.ReadAt(p, off); n != 300 || err != nil || !bytes.Equal(p, data[off:off+300]) {
			t.Fatalf("ReadAt %d: %d, %v", off, n, err)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("the temporary copy is visible in %s: %v", tmp, left)
		}
	}
	got, err := io.ReadAll(o.Stream(1000, 300000))
	if err != nil || !bytes.Equal(got, data[1000:301000]) {
		t.Fatalf("Stream: %d bytes, %v", len(got), err)
	}
	host := strings.TrimPrefix(s.srv.URL, "http://")
	if want := host + " ignores Range requests: reading the whole object once\n"; logged.String() != want {
		t.Errorf("log %q, want %q", logged.String(), want)
	}
	if g := s.gets.Load(); g != 1 {
		t.Errorf("%d GETs, want 1", g)
	}
	if got := s.settled(int64(len(data))); got > int64(len(data)) {
		t.Errorf("%d bytes served, more than the object's %d", got, len(data))
	}
	o.Close()
	if _, err := o.ReadAt(p, 0); !errors.Is(err, os.ErrClosed) {
		t.Errorf("ReadAt after Close: %v", err)
	}
}

// A server that answers every range honestly with fewer bytes than asked
// is read on, piece after piece: a resume that brings bytes does not count
// against the limit.
func TestHTTPShortRanges(t *testing.T) {
	data := testData(200000)
	s := newServer(t, data)
	s.shortRanges = 7000
	o := open(t, s.url())
	p := make([]byte, 100000)
	if n, err := o.ReadAt(p, 1000); n != len(p) || err != nil || !bytes.Equal(p, data[1000:101000]) {
		t.Fatalf("ReadAt: %d, %v", n, err)
	}
	if g := s.gets.Load(); g != 15 {
		t.Errorf("%d GETs, want 15 of 7000 bytes", g)
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
	if fmt.Sprint(s.gotRanges()) != fmt.Sprint(want) {
		t.Errorf("ranges %q, want %q", s.gotRanges(), want)
	}
}

// Bodies that keep ending before they bring any byte fail after three
// resumes in a row, naming the byte the read reached.
func TestHTTPTruncatedAfterThreeResumes(t *testing.T) {
	data := testData(200000)
	s := newServer(t, data)
	o := open(t, s.url())
	// Two bodies bring 7000 bytes each, then four bring nothing.
	s.cutPlan = []int{7000, 7000, 0, 0, 0, 0}
	p := make([]byte, 100000)
	n, err := o.ReadAt(p, 1000)
	if !errors.Is(err, ndarray.ErrTruncated) || n != 14000 {
		t.Fatalf("ReadAt: %d, %v; want 14000 bytes and ndarray.ErrTruncated", n, err)
	}
	want := "remote: truncated input at byte 15000: " + s.url() + ": the body ended early 4 times in a row, bringing no byte of the object: EOF"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if len(s.gotRanges()) != 6 {
		t.Errorf("%d GETs, want 6", len(s.gotRanges()))
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
	if want := "remote: the object changed while it was read: " + s.url() + `: it is no longer ETag "v1" (412 Precondition Failed)`; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
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

// Every read asks for the version the object was opened as: If-Match with
// a strong ETag, If-Range with the Last-Modified time when there is no
// ETag, neither with a weak ETag (which neither may carry); an answer
// without the validator the object was opened with is a change.
func TestHTTPValidators(t *testing.T) {
	data := testData(10000)
	for _, tc := range []struct {
		etag, ifMatch, ifRange string
	}{
		{`"v1"`, `"v1"`, ""},
		{"", "", "Tue, 14 Nov 2023 22:13:20 GMT"},
		{`W/"v1"`, "", ""},
	} {
		s := newServer(t, data)
		s.etag = tc.etag
		o := open(t, s.url())
		p := make([]byte, 100)
		if n, err := o.ReadAt(p, 50); n != 100 || err != nil || !bytes.Equal(p, data[50:150]) {
			t.Fatalf("%q: ReadAt: %d, %v", tc.etag, n, err)
		}
		h := s.gotHeaders()[0]
		if h.Get("If-Match") != tc.ifMatch || h.Get("If-Range") != tc.ifRange {
			t.Errorf("ETag %q: sent If-Match %q, If-Range %q; want %q, %q", tc.etag, h.Get("If-Match"), h.Get("If-Range"), tc.ifMatch, tc.ifRange)
		}
	}
	// The HEAD gave an ETag, the GET none: another version may answer.
	s := newServer(t, data)
	s.noGetETag = true
	o := open(t, s.url())
	_, err := o.ReadAt(make([]byte, 100), 50)
	if want := "remote: the object changed while it was read: " + s.url() + `: opened as ETag "v1", and an answer gave no ETag: another version may have sent it`; err == nil || err.Error() != want || !errors.Is(err, remote.ErrChanged) {
		t.Errorf("an answer without an ETag: %v, want %q", err, want)
	}
	// An object changed behind If-Range (Last-Modified alone) comes back
	// whole, with the new time: refused, not read.
	s = newServer(t, data)
	s.etag, s.changeAfter = "", 0
	o = open(t, s.url())
	s.mu.Lock()
	s.modified = time.Unix(1800000000, 0)
	s.mu.Unlock()
	if _, err := o.ReadAt(make([]byte, 100), 50); !errors.Is(err, remote.ErrChanged) {
		t.Errorf("changed behind If-Range: %v, want ErrChanged", err)
	}
}

// A redirect never carries the signed URL it came from in a Referer.
func TestHTTPRedirectSendsNoReferer(t *testing.T) {
	data := testData(1000)
	s := newServer(t, data)
	mux := http.NewServeMux()
	mux.HandleFunc("/signed.bin", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s.url(), http.StatusFound)
	})
	front := httptest.NewServer(mux)
	t.Cleanup(front.Close)
	o := open(t, front.URL+"/signed.bin?X-Amz-Signature=sekrit")
	if _, err := o.ReadAt(make([]byte, 10), 5); err != nil {
		t.Fatal(err)
	}
	for _, h := range s.gotHeaders() {
		if ref := h.Get("Referer"); ref != "" {
			t.Errorf("a redirected GET sent Referer %q", ref)
		}
	}
	if len(s.gotHeaders()) == 0 {
		t.Fatal("no GET reached the server redirected to")
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
	if fmt.Sprint(s.gotRanges()) != "[bytes=0-0 bytes=4900-4999]" {
		t.Errorf("ranges %q", s.gotRanges())
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
