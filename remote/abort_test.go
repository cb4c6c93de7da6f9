package remote

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/s3fake"
)

// An abort the store refuses, or does not answer in time, is an error
// naming the upload ID, given in a bounded time, never silence.
func TestS3AbortFailureIsReported(t *testing.T) {
	f := s3fake.Start(t, "out")
	for _, tc := range []struct {
		name  string
		hang  bool
		cause string
	}{
		// 403, which the SDK does not retry: a 500's retries and their
		// back-off can outlast abortWait on a loaded machine.
		{"refused", false, "403 Forbidden"},
		{"hung", true, "no answer within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			release := make(chan struct{})
			defer close(release)
			f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
				if r.Method != http.MethodDelete || !r.URL.Query().Has("uploadId") {
					return false
				}
				if tc.hang {
					select {
					case <-release:
					case <-r.Context().Done():
					}
					return true
				}
				http.Error(w, "no", http.StatusForbidden)
				return true
			})
			defer f.Intercept(nil)
			w, err := Options{PartSize: 5 << 20, abortWait: 200 * time.Millisecond}.Create(context.Background(), "s3://out/k.bin")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write(make([]byte, 5<<20+1)); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			err = w.Abort()
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Abort took %v", d)
			}
			if err == nil || !strings.HasPrefix(err.Error(), "remote: AbortMultipartUpload s3://out/k.bin: upload ID ") ||
				!strings.Contains(err.Error(), tc.cause) || !strings.Contains(err.Error(), "its parts stay in the bucket") {
				t.Errorf("Abort: %v", err)
			}
		})
	}
}

// Abort does not return before the upload's abort has reached the store,
// whoever sends it: a Write that finds the upload aborted sends it too,
// and a signal handler's Abort that returned first let the process exit
// with that request still on its way (a CI run saw no abort at all).
func TestAbortWaitsForTheAbort(t *testing.T) {
	f := s3fake.Start(t, "out")
	f.Throttle(8e6) // parts take a while, so that Abort meets them going up
	var deletes atomic.Int64
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodDelete && r.URL.Query().Has("uploadId") {
			time.Sleep(50 * time.Millisecond) // a store that takes its time
			deletes.Add(1)
		}
		return false
	})
	defer f.Intercept(nil)
	for range 5 {
		deletes.Store(0)
		w, err := Options{PartSize: 5 << 20, Concurrency: 2}.Create(context.Background(), "s3://out/k.bin")
		if err != nil {
			t.Fatal(err)
		}
		writing := make(chan error, 1)
		go func() {
			_, err := w.Write(make([]byte, 4*(5<<20)))
			writing <- err
		}()
		for before := len(f.Calls()); len(f.Calls()) < before+3; {
			time.Sleep(time.Millisecond) // until parts go up
		}
		if err := w.Abort(); err != nil {
			t.Logf("Abort: %v", err)
		}
		if deletes.Load() != 1 {
			t.Fatalf("Abort returned with %d aborts at the store, want 1: %q", deletes.Load(), f.Calls())
		}
		if err := <-writing; !errors.Is(err, errAborted) {
			t.Errorf("the Write: %v", err)
		}
	}
}
