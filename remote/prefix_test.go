package remote_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/s3fake"
	"github.com/ndpack/ndpack/remote"
)

// TestHTTPOpenPrefix: the object's size, version and first bytes come in
// one GET; reads within them make no request, reads beyond one each, and
// a later change of the object is still caught.
func TestHTTPOpenPrefix(t *testing.T) {
	data := testData(10000)
	s := newServer(t, data)
	o, err := remote.Options{}.OpenPrefix(context.Background(), s.url(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != 10000 || s.requests.Load() != 1 || s.seen().ranges[0] != "bytes=0-4095" {
		t.Fatalf("size %d after %d requests (%q)", o.Size(), s.requests.Load(), s.seen().ranges)
	}
	p := make([]byte, 100)
	if n, err := o.ReadAt(p, 3996); n != 100 || err != nil || !bytes.Equal(p, data[3996:4096]) || s.requests.Load() != 1 {
		t.Errorf("a read within the prefix: %d %v, %d requests", n, err, s.requests.Load())
	}
	if n, err := o.ReadAt(p, 4000); n != 100 || err != nil || !bytes.Equal(p, data[4000:4100]) || s.requests.Load() != 2 {
		t.Errorf("a read past the prefix: %d %v, %d requests", n, err, s.requests.Load())
	}
	if h := s.seen().headers[1].Get("If-Match"); h != `"v1"` {
		t.Errorf("the read after asked for If-Match %q", h)
	}

	// An object shorter than the prefix is read whole by the one GET.
	small := newServer(t, data[:300])
	o2, err := remote.Options{}.OpenPrefix(context.Background(), small.url(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(o2.Stream(0, 300))
	if err != nil || !bytes.Equal(got, data[:300]) || o2.Size() != 300 || small.requests.Load() != 1 {
		t.Errorf("a 300-byte object: %d bytes %v, size %d, %d requests", len(got), err, o2.Size(), small.requests.Load())
	}

	// An empty object, a missing one, a server that ignores Range.
	empty := newServer(t, nil)
	if o3, err := (remote.Options{}).OpenPrefix(context.Background(), empty.url(), 4096); err != nil || o3.Size() != 0 {
		t.Errorf("an empty object: %v", err)
	}
	missing := newServer(t, data)
	missing.status = http.StatusNotFound
	if _, err := (remote.Options{}).OpenPrefix(context.Background(), missing.url(), 4096); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing object: %v", err)
	}
	whole := newServer(t, data)
	whole.ignoreRange = true
	o4, err := remote.Options{ErrorLog: quietLog()}.OpenPrefix(context.Background(), whole.url(), 4096)
	if err != nil {
		t.Fatal(err)
	}
	defer o4.Close()
	if n, err := o4.ReadAt(p, 9000); n != 100 || err != nil || !bytes.Equal(p, data[9000:9100]) || o4.Size() != 10000 {
		t.Errorf("from a server that ignores Range: %d %v", n, err)
	}
}

// TestS3OpenPrefix: one GetObject gives an S3 object's size and first
// bytes; an empty object is read by HeadObject instead.
func TestS3OpenPrefix(t *testing.T) {
	f := s3fake.Start(t, "arrays")
	data := testData(10000)
	f.Put(t, "arrays", "a.npy", data)
	f.Put(t, "arrays", "empty", nil)
	o, err := remote.Options{}.OpenPrefix(context.Background(), "s3://arrays/a.npy", 4096)
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4096)
	if n, err := o.ReadAt(p, 0); n != 4096 || err != nil || !bytes.Equal(p, data[:4096]) || o.Size() != 10000 || f.Requests.Load() != 1 {
		t.Errorf("%d %v, size %d, %d requests", n, err, o.Size(), f.Requests.Load())
	}
	o2, err := remote.Options{}.OpenPrefix(context.Background(), "s3://arrays/empty", 4096)
	if err != nil || o2.Size() != 0 {
		t.Errorf("an empty object: %v", err)
	}
	if _, err := (remote.Options{}).OpenPrefix(context.Background(), "s3://arrays/none", 4096); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing object: %v", err)
	}
}
