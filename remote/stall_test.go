package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
)

// stallServer serves data, but its first stalls GETs send half the range
// asked for and then nothing, holding the connection open until the client
// gives up on it.
func stallServer(t *testing.T, data []byte, stalls int64) (url string, gets *atomic.Int64) {
	gets = new(atomic.Int64)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		if r.Method != http.MethodGet || gets.Add(1) > stalls {
			http.ServeContent(w, r, "obj.bin", time.Unix(1700000000, 0), bytes.NewReader(data))
			return
		}
		var first, last int64
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
		last = min(last, int64(len(data))-1)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, len(data)))
		w.Header().Set("Content-Length", fmt.Sprint(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		w.Write(data[first : first+(last+1-first)/2])
		w.(http.Flusher).Flush()
		select { // silent until the client hangs up or the test ends
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv.URL + "/obj.bin", gets
}

// A body that stops sending is given up after the stall time and resumed
// where it stopped, as a body cut short is; one that keeps stalling fails
// with ErrTruncated saying so, instead of hanging a reader whose context
// has no deadline.
func TestStalledBodyResumes(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<12)
	const stall = 100 * time.Millisecond

	url, gets := stallServer(t, data, 2)
	obj, err := Options{stall: stall}.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got, err := io.ReadAll(obj.Stream(0, obj.Size()))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d of %d bytes, equal %v: %v", len(got), len(data), bytes.Equal(got, data), err)
	}
	if gets.Load() != 3 {
		t.Errorf("%d GETs, want 3: two stalled, one whole", gets.Load())
	}
	if d := time.Since(start); d < 2*stall || d > 50*stall {
		t.Errorf("took %v for two stalls of %v", d, stall)
	}

	url, _ = stallServer(t, data, 1<<30)
	obj, err = Options{stall: stall}.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(obj.Stream(0, obj.Size()))
	if !errors.Is(err, ndarray.ErrTruncated) || !strings.Contains(err.Error(), "ended early or sent nothing for 100ms 4 times") {
		t.Fatalf("got %v", err)
	}
}
