//go:build unix

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/s3fake"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// liar serves an object that claims size bytes (in its HEAD and in every
// Content-Range) of which it holds only head, at its start, and tail, at
// its end (after zeros from 128 KiB before it): any other range is answered
// 206 and then nothing, as a server
// that lies about what it has does.
func liar(t *testing.T, size int64, head, tail []byte) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"lie"`)
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Length", fmt.Sprint(size))
			return
		}
		var first, last int64
		fmt.Sscanf(r.Header.Get("Range"), "bytes=%d-%d", &first, &last)
		last = min(last, size-1)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", first, last, size))
		w.Header().Set("Content-Length", fmt.Sprint(last-first+1))
		w.WriteHeader(http.StatusPartialContent)
		n := int64(0)
		if first < int64(len(head)) {
			k, _ := w.Write(head[first:min(int64(len(head)), last+1)])
			n += int64(k)
		}
		if first >= size-128<<10 { // the last 128 KiB: zeros, then tail
			b := make([]byte, last+1-first)
			for i := range b {
				if k := first + int64(i) - (size - int64(len(tail))); k >= 0 {
					b[i] = tail[k]
				}
			}
			k, _ := w.Write(b)
			n += int64(k)
		}
		if n < last+1-first {
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // and nothing more
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// zip64Claim is the end of an archive whose zip64 end record claims a
// directory of dirSize bytes holding count members, from byte 0 of an
// archive that ends with it at size.
func zip64Claim(size, dirSize int64, count uint64) []byte {
	le := binary.LittleEndian
	var b []byte
	end64 := size - 56 - 20 - 22
	b = le.AppendUint32(b, 0x06064b50)
	b = le.AppendUint64(b, 44)
	b = le.AppendUint16(b, 45)
	b = le.AppendUint16(b, 45)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, count)
	b = le.AppendUint64(b, count)
	b = le.AppendUint64(b, uint64(dirSize))
	b = le.AppendUint64(b, uint64(end64-dirSize))
	b = le.AppendUint32(b, 0x07064b50)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint64(b, uint64(end64))
	b = le.AppendUint32(b, 1)
	b = le.AppendUint32(b, 0x06054b50)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint16(b, 0xffff)
	b = le.AppendUint16(b, 0xffff)
	b = le.AppendUint32(b, 0xffffffff)
	b = le.AppendUint32(b, 0xffffffff)
	b = le.AppendUint16(b, 0)
	return b
}

// limitedCLI runs ndpack with args in an address space of 4 GB (ulimit
// -v), where an allocation of a claimed terabyte aborts the runtime.
func limitedCLI(t *testing.T, args ...string) result {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", `ulimit -v 4000000 && exec "$0" "$@"`, ndpackBin}, args...)...)
	return runCmd(t, cmd, nil)
}

// failsInOneLine checks that r is a failure of exit status 1 said in one line
// that holds want, with no runtime abort.
func failsInOneLine(t *testing.T, what string, r result, want string) {
	t.Helper()
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, want) ||
		strings.Contains(r.stderr, "fatal error") || strings.Contains(r.stderr, "panic") {
		t.Errorf("%s: exit %d, stderr %q; want 1 and one line with %q", what, r.code, r.stderr, want)
	}
}

// What a server, or a sparse file, claims never sizes an allocation: a
// terabyte claimed is refused by the bound on arrays read into memory, or
// read into memory that grows as bytes arrive, and fails as truncated; the
// runtime never aborts (issue 41).
func TestClaimedTerabytes(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector needs more address space than the limit")
	}
	const tib = int64(1) << 40
	npy := npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1 << 37})   // 1 TiB of data
	small := npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1 << 27}) // 1 GiB
	huge := npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1 << 57})  // 2^60 bytes
	tooBig := "the array, (137438953472,) of <f8, is 1.0 TiB: more than the 1.9 GiB --max-size lets a command read into memory"
	url := liar(t, tib+int64(len(npy)), npy, nil)
	failsInOneLine(t, "show of a terabyte claim", limitedCLI(t, "show", url+"/a.npy"), tooBig)
	failsInOneLine(t, "convert --rows 0: of a terabyte claim", limitedCLI(t, "convert", "--rows", "0:", url+"/a.npy", filepath.Join(t.TempDir(), "o.npy")), tooBig)
	url = liar(t, 1<<60+int64(len(huge)), huge, nil)
	failsInOneLine(t, "show of a 2^60 claim", limitedCLI(t, "show", url+"/a.npy"), "is 1.0 EiB")
	// A claim under the bound is read into memory that grows as the
	// bytes arrive: the server sends none, and the read fails.
	url = liar(t, tib, small, nil)
	failsInOneLine(t, "show of a 1 GiB claim", limitedCLI(t, "show", url+"/a.npy"), "truncated input at byte 128")
	// A zip64 end record claiming a terabyte of directory, remote and in
	// a sparse file.
	tail := zip64Claim(tib+98, tib, 1<<34+7)
	url = liar(t, tib+98, nil, tail)
	failsInOneLine(t, "inspect --header of a terabyte directory", limitedCLI(t, "inspect", "--header", url+"/a.npz"), "truncated input at byte 0")
	dir := t.TempDir()
	sparse := func(name string, head, tail []byte, size int64) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		f.Write(head)
		if err := f.Truncate(size); err != nil {
			t.Skipf("no sparse file of a terabyte here: %v", err)
		}
		if _, err := f.WriteAt(tail, size-int64(len(tail))); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := sparse("a.npy", npy, nil, tib+int64(len(npy)))
	failsInOneLine(t, "show of a sparse terabyte", limitedCLI(t, "show", p), tooBig)
	r := limitedCLI(t, "inspect", "--header", p)
	if r.code != 0 || !strings.Contains(r.stdout, "1099511627776 bytes") {
		t.Errorf("inspect --header of a sparse terabyte: exit %d, %q, %q", r.code, r.stdout, r.stderr)
	}
	p = sparse("a.npz", []byte("PK\x03\x04"), tail, tib+98)
	failsInOneLine(t, "inspect --header of a sparse terabyte directory", limitedCLI(t, "inspect", "--header", p), "the directory's end record counts 17179869191 members")
}

// rangeless serves dir with Python's own http.server, which ignores Range
// requests and sends every object whole, and logs each request to the file
// it returns.
func rangeless(t *testing.T, dir string) (url, logFile string) {
	logFile = filepath.Join(t.TempDir(), "requests")
	port := pypeer.Start(t, `
import functools, http.server, sys
class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        with open(sys.argv[2], 'a') as f:
            f.write(self.command + ' ' + self.path + '\n')
srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Handler, directory=sys.argv[1]))
print(srv.server_address[1], flush=True)
srv.serve_forever()
`, dir, logFile)
	return "http://127.0.0.1:" + port, logFile
}

// requestsSince returns the requests logged after the first skip.
func requestsSince(t *testing.T, logFile string, skip int) []string {
	b, _ := os.ReadFile(logFile)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) == 1 && lines[0] == "" {
		lines = nil
	}
	return lines[min(skip, len(lines)):]
}

// A server that ignores Range (python3 -m http.server) is read once per
// command, whatever the command reads of it, and the command says so once
// on stderr; the temporary copy leaves nothing behind.
func TestServerIgnoringRange(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import sys, os
import numpy as np
d = sys.argv[1]
np.savez(os.path.join(d, 'many.npz'), **{'m%02d' % i: np.full((64, 1024), i, dtype='<f8') for i in range(20)})
np.save(os.path.join(d, 'huge.npy'), np.arange(1 << 21, dtype='<f8').reshape(-1, 16))
`, nil, dir)
	url, logFile := rangeless(t, dir)
	host := strings.TrimPrefix(url, "http://")
	tmp := t.TempDir()
	out := filepath.Join(t.TempDir(), "m19.npy")
	for _, c := range []struct {
		args   []string
		object string
		stdout string
	}{
		{[]string{"inspect", "--header", url + "/many.npz"}, "/many.npz", "m19"},
		{[]string{"convert", url + "/many.npz:m19", out}, "/many.npz", ""},
		{[]string{"show", "--rows", "-1:", url + "/huge.npy"}, "/huge.npy", "2097136."},
	} {
		before := len(requestsSince(t, logFile, 0))
		cmd := exec.Command(ndpackBin, c.args...)
		cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
		r := runCmd(t, cmd, nil)
		if r.code != 0 || !strings.Contains(r.stdout, c.stdout) {
			t.Errorf("%q: exit %d, %q, %q", c.args, r.code, r.stdout, r.stderr)
		}
		if want := "ndpack: " + host + " ignores Range requests: reading the whole object once\n"; r.stderr != want {
			t.Errorf("%q: stderr %q, want %q", c.args, r.stderr, want)
		}
		if got := requestsSince(t, logFile, before); fmt.Sprint(got) != fmt.Sprint([]string{"HEAD " + c.object, "GET " + c.object}) {
			t.Errorf("%q: requests %q, want one HEAD and one GET", c.args, got)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%q left %v in the temporary directory", c.args, left)
		}
	}
	a, err := npybridge.ReadFile(out)
	if err != nil || fmt.Sprint(a.Shape) != "[64 1024]" || a.Data[len(a.Data)-2] != 0x33 {
		t.Errorf("m19: %v, %v", a, err)
	}
}

// One member of a remote archive of 1,000 members costs three requests (a
// HEAD, the directory, and the member's headers and data in one stream)
// and its bytes + 64 KiB: no other member's header is read.
func TestRemoteOneMemberOfMany(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import sys, os
import numpy as np
np.savez(os.path.join(sys.argv[1], 'run.npz'), **{'m%03d' % i: np.full(128 if i != 42 else 131072, i, dtype='<f8') for i in range(1000)})
`, nil, dir)
	fs := remoteServe(t, dir)
	out := filepath.Join(t.TempDir(), "m042.npy")
	r := cli(t, nil, "convert", fs.url+"/run.npz:m042", out)
	if r.code != 0 {
		t.Fatalf("convert: %d %s", r.code, r.stderr)
	}
	requests, bytes := fs.requests.Load(), fs.bytes.Load()
	const member = 1<<20 + 128 + 30 + 8 + 20 // data, NPY header, local header, name, numpy's zip64 extra
	if requests > 3 || bytes > member+64<<10+22 {
		t.Errorf("one member of 1 MiB took %d requests, %d bytes; want at most 3 and %d", requests, bytes, member+64<<10+22)
	}
	a, err := npybridge.ReadFile(out)
	if err != nil || len(a.Data) != 1<<20 || a.Data[len(a.Data)-2] != 0x45 {
		t.Errorf("m042: %v, %v", a, err)
	}
	t.Logf("%d requests, %d bytes", requests, bytes)
}

// countingServer serves a directory with Range requests (http.ServeFile),
// counting requests and body bytes.
type countingServer struct {
	url             string
	requests, bytes atomic.Int64
}

func remoteServe(t *testing.T, dir string) *countingServer {
	s := &countingServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		http.ServeFile(countedResponse{w, &s.bytes}, r, filepath.Join(dir, filepath.Base(r.URL.Path)))
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

type countedResponse struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (w countedResponse) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	w.n.Add(int64(n))
	return n, err
}

// An object that changes between the read of its header and of its data
// is never shown as a mix of the two: a server whose ranged answers drop
// the ETag its HEAD gave is taken for a changed object (issue 41: show
// printed int64 bytes as float64 and exited 0).
func TestRemoteVersionMix(t *testing.T) {
	f8 := npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{4})
	i8 := npybridge.AppendHeader(nil, ndarray.DTypeOf[int64](), []int{4})
	v1 := append(f8, make([]byte, 32)...)
	v2 := append(i8, make([]byte, 32)...)
	var gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, etag := v1, `"v1"`
		if r.Method == http.MethodGet && gets.Add(1) > 1 {
			data, etag = v2, "" // changed, and a cache in front drops the ETag and If-Match
			r.Header.Del("If-Match")
		}
		if etag != "" {
			w.Header().Set("ETag", etag)
		}
		http.ServeContent(w, r, "a.npy", time.Unix(1700000000, 0), bytes.NewReader(data))
	}))
	t.Cleanup(srv.Close)
	r := cli(t, nil, "show", srv.URL+"/a.npy")
	want := "remote: the object changed while it was read: " + srv.URL + `/a.npy: opened as ETag "v1", and an answer gave no ETag: another version may have sent it`
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("show: exit %d, %q, %q; want 1 and %q", r.code, r.stdout, r.stderr, want)
	}
}

// An upload that fails is said as the output's failure, and an abort the
// store refuses is said too, with the upload's ID: its parts stay in the
// bucket until someone removes them.
func TestS3UploadFailureNamesTheOutput(t *testing.T) {
	s := s3fake.Start(t, "lab")
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		q := r.URL.Query()
		if r.Method == http.MethodPut && q.Has("partNumber") && q.Get("partNumber") != "1" || r.Method == http.MethodDelete && q.Has("uploadId") {
			// The part is read whole first: answered while the client
			// still writes it, the connection may be reset before the
			// client reads the 403 (as it was under go test -race).
			io.Copy(io.Discard, r.Body)
			http.Error(w, "no", http.StatusForbidden)
			return true
		}
		return false
	})
	dir := t.TempDir()
	a, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), 3<<17) // 3 MiB
	in := filepath.Join(dir, "a.npy")
	if err := npybridge.WriteFile(in, a); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.npy")
	a, _ = ndarray.Zeros(ndarray.DTypeOf[float64](), 3<<19) // 12 MiB: three parts of 5 MiB
	if err := npybridge.WriteFile(big, a); err != nil {
		t.Fatal(err)
	}
	r := cli(t, nil, "convert", "--part-size", "5M", big, "s3://lab/k.msgpack")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 ||
		!strings.HasPrefix(r.stderr, "ndpack: s3://lab/k.msgpack: remote: UploadPart s3://lab/k.msgpack: 403 Forbidden") ||
		!strings.Contains(r.stderr, "(and the upload could not be aborted: upload ID ") ||
		!strings.Contains(r.stderr, "its parts stay in the bucket") {
		t.Errorf("a failed upload: exit %d, %q", r.code, r.stderr)
	}
	if _, ok := s.Get(t, "lab", "k.msgpack"); ok {
		t.Error("a failed upload left an object")
	}
}
