// Package s3fake starts an S3-protocol server (gofakes3 with its memory
// backend) on 127.0.0.1 in the test process, and points the AWS SDK's
// standard configuration (the environment, which child processes inherit)
// at it with test credentials, away from the user's own configuration.
package s3fake

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Secret is the secret access key the tests use: it must appear in no
// output.
const Secret = "test-secret-do-not-show"

// Server is a running fake S3.
type Server struct {
	Backend *s3mem.Backend
	URL     string
	// Requests and Bytes count the requests served and the body bytes
	// written.
	Requests, Bytes atomic.Int64
	mu              sync.Mutex
	calls           []string // "METHOD QUERY" of each request
	intercept       func(w http.ResponseWriter, r *http.Request) bool
	rate            float64 // bytes a second each request may move, 0 for no cap
}

// Throttle caps each request's body and each answer's at rate bytes a
// second (0: no cap), as a store caps each connection.
func (s *Server) Throttle(rate float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rate = rate
}

// Intercept has f see every request first; a request f reports handled
// (true) goes no further. f runs on the server's goroutines; nil ends it.
func (s *Server) Intercept(f func(w http.ResponseWriter, r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = f
}

// Start starts a server holding the buckets, and sets the AWS_*
// environment variables for the test (so t must not be parallel).
func Start(t testing.TB, buckets ...string) *Server {
	t.Helper()
	s := &Server{Backend: s3mem.New()}
	h := gofakes3.New(s.Backend).Server()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.Requests.Add(1)
		s.mu.Lock()
		s.calls = append(s.calls, r.Method+" "+r.URL.RawQuery)
		f, rate := s.intercept, s.rate
		s.mu.Unlock()
		if f != nil && f(w, r) {
			return
		}
		var rw http.ResponseWriter = countingWriter{w, &s.Bytes}
		if rate > 0 {
			pace := &pacer{rate: rate, start: time.Now()}
			rw = pacedWriter{rw, pace}
			r.Body = pacedBody{r.Body, pace}
		}
		h.ServeHTTP(rw, r)
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	for _, b := range buckets {
		if err := s.Backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":            srv.URL,
		"AWS_ACCESS_KEY_ID":           "AKIATESTKEY",
		"AWS_SECRET_ACCESS_KEY":       Secret,
		"AWS_REGION":                  "us-east-1",
		"AWS_CONFIG_FILE":             "/nonexistent/config",
		"AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials",
		"AWS_EC2_METADATA_DISABLED":   "true",
	} {
		t.Setenv(k, v)
	}
	// No profile: set and then unset, so that the test restores it.
	t.Setenv("AWS_PROFILE", "")
	os.Unsetenv("AWS_PROFILE")
	return s
}

// Calls returns "METHOD QUERY" of each request so far.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Put stores an object.
func (s *Server) Put(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	if _, err := s.Backend.PutObject(bucket, key, nil, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}

// Get returns an object's bytes, and whether it exists.
func (s *Server) Get(t testing.TB, bucket, key string) ([]byte, bool) {
	t.Helper()
	obj, err := s.Backend.GetObject(bucket, key, nil)
	if err != nil {
		return nil, false
	}
	defer obj.Contents.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(obj.Contents); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), true
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

// pacer holds what crosses one request to rate bytes a second.
type pacer struct {
	rate  float64
	start time.Time
	moved int64
}

// wait sleeps until n more bytes are due.
func (p *pacer) wait(n int) {
	p.moved += int64(n)
	if due := time.Duration(float64(p.moved) / p.rate * float64(time.Second)); due > time.Since(p.start) {
		time.Sleep(due - time.Since(p.start))
	}
}

type pacedWriter struct {
	http.ResponseWriter
	p *pacer
}

func (w pacedWriter) Write(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := w.ResponseWriter.Write(b[n:min(len(b), n+64<<10)])
		n += k
		w.p.wait(k)
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

type pacedBody struct {
	io.ReadCloser
	p *pacer
}

func (b pacedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p[:min(len(p), 64<<10)])
	b.p.wait(n)
	return n, err
}
