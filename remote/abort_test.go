package remote

import (
	"context"
	"net/http"
	"strings"
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
		{"refused", false, "500 Internal Server Error"},
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
				http.Error(w, "no", http.StatusInternalServerError)
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
