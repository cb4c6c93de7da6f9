package remote_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/s3fake"
	"github.com/ndpack/ndpack/remote"
)

func TestS3ReadAt(t *testing.T) {
	f := s3fake.Start(t, "arrays")
	data := testData(300000)
	f.Put(t, "arrays", "dir/a.npy", data)
	o := open(t, "s3://arrays/dir/a.npy")
	if o.Size() != int64(len(data)) {
		t.Fatalf("size %d", o.Size())
	}
	before := f.Bytes.Load()
	p := make([]byte, 5000)
	if n, err := o.ReadAt(p, 123456); n != len(p) || err != nil || !bytes.Equal(p, data[123456:128456]) {
		t.Fatalf("ReadAt: %d, %v", n, err)
	}
	if got := f.Bytes.Load() - before; got != 5000 {
		t.Errorf("%d bytes served for a read of 5000", got)
	}
	if f.Requests.Load() != 2 {
		t.Errorf("%d requests, want 2 (HeadObject, GetObject)", f.Requests.Load())
	}
	s := o.Stream(0, int64(len(data)))
	got, err := io.ReadAll(s)
	s.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Stream: %d bytes, %v", len(got), err)
	}
}

func TestS3Changed(t *testing.T) {
	f := s3fake.Start(t, "arrays")
	f.Put(t, "arrays", "a", testData(1000))
	o := open(t, "s3://arrays/a")
	f.Put(t, "arrays", "a", bytes.ToUpper(testData(1000)))
	_, err := o.ReadAt(make([]byte, 10), 0)
	if !errors.Is(err, remote.ErrChanged) {
		t.Fatalf("read of a replaced object: %v, want ErrChanged", err)
	}
}

func TestS3NotFound(t *testing.T) {
	s3fake.Start(t, "arrays")
	_, err := remote.Options{}.Open(context.Background(), "s3://arrays/none.npy")
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "remote: HeadObject s3://arrays/none.npy: 404") {
		t.Fatalf("missing object: %v", err)
	}
	if strings.Contains(err.Error(), "test-secret") || strings.Contains(err.Error(), "AKIATESTKEY") {
		t.Errorf("error %q shows a credential", err)
	}
}

func TestS3Writer(t *testing.T) {
	f := s3fake.Start(t, "out")
	data := testData((5<<20)*2 + 12345)
	w, err := remote.Options{PartSize: (5 << 20)}.Create(context.Background(), "s3://out/x.bin")
	if err != nil {
		t.Fatal(err)
	}
	// Nothing is visible until Close.
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := w.Write(data[off:min(len(data), off+1<<20)]); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Backend.HeadObject("out", "x.bin"); err == nil {
			t.Fatalf("the object is visible after %d bytes, before Close", off)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	o := open(t, "s3://out/x.bin")
	got, err := io.ReadAll(io.NewSectionReader(o, 0, o.Size()))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back: %d bytes, %v", len(got), err)
	}
	var parts int
	for _, m := range f.Calls() {
		if strings.HasPrefix(m, "PUT ") && strings.Contains(m, "partNumber=") {
			parts++
		}
	}
	if parts != 3 {
		t.Errorf("%d parts uploaded, want 3: %q", parts, f.Calls())
	}
}

func TestS3WriterAborts(t *testing.T) {
	f := s3fake.Start(t, "out")
	data := testData((5 << 20) + 100)
	ctx, cancel := context.WithCancel(context.Background())
	w, err := remote.Options{PartSize: (5 << 20)}.Create(ctx, "s3://out/y.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	cancel() // as a signal would
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close after cancel: %v", err)
	}
	if _, err := f.Backend.HeadObject("out", "y.bin"); err == nil {
		t.Fatal("a cancelled upload left an object")
	}
	aborted := false
	for _, m := range f.Calls() {
		aborted = aborted || (strings.HasPrefix(m, "DELETE ") && strings.Contains(m, "uploadId="))
	}
	if !aborted {
		t.Errorf("no AbortMultipartUpload: %q", f.Calls())
	}
	// Abort discards too, and a small object is never sent.
	w, err = remote.Options{}.Create(context.Background(), "s3://out/z.bin")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("partial"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil {
		t.Fatal("Close after Abort succeeded")
	}
	if _, err := f.Backend.HeadObject("out", "z.bin"); err == nil {
		t.Fatal("an aborted upload left an object")
	}
	if _, err := (remote.Options{PartSize: 1 << 20}).Create(context.Background(), "s3://out/z.bin"); err == nil {
		t.Fatal("a 1 MiB part size was accepted")
	}
}

// A store that cannot be reached is named with the cause (a connection
// refused, a name not found), not a status of 0.
func TestS3Unreachable(t *testing.T) {
	s3fake.Start(t, "arrays")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
	_, err := remote.Options{}.Open(context.Background(), "s3://arrays/big.npy")
	if err == nil || !strings.HasPrefix(err.Error(), "remote: HeadObject s3://arrays/big.npy: dial tcp 127.0.0.1:9: ") ||
		!strings.HasSuffix(err.Error(), "connection refused") {
		t.Errorf("unreachable store: %v", err)
	}
}

// A Writer uploads its parts Concurrency at a time, never more, and the
// object is the bytes written, in order, whatever order the parts end in;
// a part that fails aborts the upload and leaves no object.
func TestS3WriterParallel(t *testing.T) {
	f := s3fake.Start(t, "out")
	var inFlight, most atomic.Int64
	var failPart atomic.Value
	failPart.Store("")
	overlap := make(chan struct{}) // closed when two parts are in at once
	var once sync.Once
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPut || !r.URL.Query().Has("partNumber") {
			return false
		}
		if r.URL.Query().Get("partNumber") == failPart.Load().(string) {
			io.Copy(io.Discard, r.Body)
			http.Error(w, "no", http.StatusForbidden)
			return true
		}
		n := inFlight.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		if n >= 2 {
			once.Do(func() { close(overlap) })
		}
		select { // the first part waits for a second, or gives up
		case <-overlap:
		case <-time.After(5 * time.Second):
		}
		inFlight.Add(-1)
		return false
	})
	data := testData(5<<20*7 + 999)
	w, err := remote.Options{PartSize: 5 << 20, Concurrency: 3}.Create(context.Background(), "s3://out/p.bin")
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(data); off += 1 << 20 {
		if _, err := w.Write(data[off:min(len(data), off+1<<20)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, ok := f.Get(t, "out", "p.bin"); !ok || !bytes.Equal(got, data) {
		t.Fatalf("the object (%v) is not the bytes written", ok)
	}
	if m := most.Load(); m < 2 || m > 3 {
		t.Errorf("%d parts at once, want 2 or 3", m)
	}
	failPart.Store("4")
	w, err = remote.Options{PartSize: 5 << 20, Concurrency: 3}.Create(context.Background(), "s3://out/q.bin")
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Write(data)
	if err == nil {
		err = w.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "UploadPart s3://out/q.bin: 403 Forbidden") {
		t.Errorf("a failed part: %v", err)
	}
	if _, ok := f.Get(t, "out", "q.bin"); ok {
		t.Error("a failed upload left an object")
	}
}
