package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/s3fake"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// remoteDir writes an .npy and an .npz into a directory served over HTTP
// on 127.0.0.1 (Range requests), counting requests.
func remoteDir(t *testing.T) (dir, url string, requests *atomic.Int64) {
	dir = t.TempDir()
	a := mustSlice(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, 4, 3)
	img := mustSlice(t, []int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 10, 2)
	if err := npybridge.WriteFile(filepath.Join(dir, "a.npy"), a); err != nil {
		t.Fatal(err)
	}
	if err := npybridge.WriteNPZFile(filepath.Join(dir, "run.npz"), []npybridge.NamedArray{{Name: "a", Array: a}, {Name: "image", Array: img}}, false); err != nil {
		t.Fatal(err)
	}
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.ServeFile(w, r, filepath.Join(dir, filepath.Base(r.URL.Path)))
	}))
	t.Cleanup(srv.Close)
	return dir, srv.URL, requests
}

func TestRemoteInspectAndConvert(t *testing.T) {
	dir, url, requests := remoteDir(t)
	// --header lists an archive's members from their headers alone.
	requests.Store(0)
	r := cli(t, nil, "inspect", "--header", "--json", url+"/run.npz")
	if r.code != 0 {
		t.Fatalf("inspect --header: %d %s", r.code, r.stderr)
	}
	var rep []fileReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep) != 1 || len(rep[0].Arrays) != 2 || fmt.Sprint(rep[0].Arrays[1].Shape) != "[10 2]" || rep[0].Arrays[1].Stats != nil {
		t.Fatalf("inspect --header: %s", r.stdout)
	}
	// HEAD, the directory, one read per member.
	if n := requests.Load(); n != 4 {
		t.Errorf("inspect --header made %d requests, want 4", n)
	}
	// Rows of a remote .npy and of a member, local and remote alike.
	for _, in := range []string{url + "/a.npy", filepath.Join(dir, "a.npy")} {
		r = cli(t, nil, "inspect", "--json", "--rows", "-3:-1", in)
		var rep []struct {
			Arrays []struct {
				Shape []int
				First []float64
			}
		}
		json.Unmarshal([]byte(r.stdout), &rep)
		if r.code != 0 || len(rep) != 1 || len(rep[0].Arrays) != 1 || fmt.Sprint(rep[0].Arrays[0].Shape) != "[2 3]" ||
			fmt.Sprint(rep[0].Arrays[0].First) != "[3 4 5 6 7 8]" {
			t.Errorf("inspect --rows -3:-1 %s: %d %s %s", in, r.code, r.stdout, r.stderr)
		}
	}
	out := filepath.Join(dir, "rows.npy")
	r = cli(t, nil, "convert", "--rows", "7:", url+"/run.npz:image", out)
	if r.code != 0 {
		t.Fatalf("convert --rows: %d %s", r.code, r.stderr)
	}
	got, err := npybridge.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got.Shape) != "[3 2]" || !bytes.Equal(got.Data, mustSlice(t, []int32{14, 15, 16, 17, 18, 19}, 3, 2).Data) {
		t.Errorf("convert --rows 7: gave %v % x", got.Shape, got.Data)
	}
	// A whole .npy to ext 110, as from the local file.
	r = cli(t, nil, "convert", url+"/a.npy", filepath.Join(dir, "remote.msgpack"))
	r2 := cli(t, nil, "convert", filepath.Join(dir, "a.npy"), filepath.Join(dir, "local.msgpack"))
	if r.code != 0 || r2.code != 0 || !bytes.Equal(readFile(t, filepath.Join(dir, "remote.msgpack")), readFile(t, filepath.Join(dir, "local.msgpack"))) {
		t.Errorf("convert URL.npy: %d %s; local %d %s", r.code, r.stderr, r2.code, r2.stderr)
	}
	// render draws rows of a remote array.
	r = cli(t, nil, "render", "--rows=1:3", url+"/run.npz:image", filepath.Join(dir, "img.png"))
	if r.code != 0 {
		t.Errorf("render --rows=1:3: %d %s", r.code, r.stderr)
	}
}

func TestRemoteFaults(t *testing.T) {
	_, url, _ := remoteDir(t)
	secret := strings.Replace(url, "http://", "http://user:hunter2@", 1)
	r := cli(t, nil, "inspect", secret+"/missing.npy?token=sekrit")
	want := fmt.Sprintf("ndpack: %s/missing.npy: remote: HEAD %s/missing.npy: 404 Not Found\n", url, url)
	if r.code != 1 || r.stderr != want {
		t.Errorf("404: exit %d, %q; want 1, %q", r.code, r.stderr, want)
	}
	r = cli(t, nil, "convert", secret+"/missing.npy?token=sekrit", filepath.Join(t.TempDir(), "x.npy"))
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "hunter2") || strings.Contains(r.stderr, "sekrit") || !strings.Contains(r.stderr, "404 Not Found") {
		t.Errorf("convert 404: exit %d, %q", r.code, r.stderr)
	}
	for _, args := range [][]string{
		{"inspect", "--rows", "1:5:2", url + "/a.npy"},
		{"convert", "--rows", "x:", url + "/a.npy", "o.npy"},
		{"render", "--rows=::2", url + "/a.npy", "o.png"},
		{"convert", "--part-size", "4", url + "/a.npy", "s3://b/k.npy"},
		{"convert", url + "/a.npy", url + "/b.npy"},
	} {
		if r := cli(t, nil, args...); r.code != 2 {
			t.Errorf("%q: exit %d (%s), want 2", args, r.code, r.stderr)
		}
	}
}

func TestS3ConvertAndInspect(t *testing.T) {
	s := s3fake.Start(t, "lab")
	var got *ndarray.Array
	var err error
	dir, _, _ := remoteDir(t)
	r := cli(t, nil, "convert", "--part-size", "5M", filepath.Join(dir, "run.npz"), "s3://lab/out/run.npz")
	if r.code != 0 {
		t.Fatalf("convert to S3: %d %s", r.code, r.stderr)
	}
	local := filepath.Join(dir, "again.npz")
	if r := cli(t, nil, "convert", filepath.Join(dir, "run.npz"), local); r.code != 0 {
		t.Fatal(r.stderr)
	}
	obj, ok := s.Get(t, "lab", "out/run.npz")
	if !ok || !bytes.Equal(obj, readFile(t, local)) {
		t.Fatalf("the object (%v) differs from the local output", ok)
	}
	r = cli(t, nil, "inspect", "--header", "s3://lab/out/run.npz")
	if r.code != 0 || !strings.Contains(r.stdout, "image") || !strings.Contains(r.stdout, "(10, 2)") {
		t.Errorf("inspect s3://: %d %s %s", r.code, r.stdout, r.stderr)
	}
	r = cli(t, nil, "convert", "--rows", ":1", "s3://lab/out/run.npz:image", filepath.Join(dir, "first.npy"))
	got, err = npybridge.ReadFile(filepath.Join(dir, "first.npy"))
	if r.code != 0 || err != nil || fmt.Sprint(got.Shape) != "[1 2]" {
		t.Errorf("convert --rows :1 s3://...:image: %d %s", r.code, r.stderr)
	}
	// A failing conversion leaves no object.
	bad := filepath.Join(dir, "bad.npy")
	os.WriteFile(bad, readFile(t, filepath.Join(dir, "a.npy"))[:200], 0o666)
	r = cli(t, nil, "convert", bad, "s3://lab/out/bad.msgpack")
	if r.code != 1 || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("convert of a truncated file: exit %d, %q", r.code, r.stderr)
	}
	if _, ok := s.Get(t, "lab", "out/bad.msgpack"); ok {
		t.Error("a failed conversion left an object")
	}
	r = cli(t, nil, "inspect", "s3://lab/none.npy")
	if r.code != 1 || !strings.HasPrefix(r.stderr, "ndpack: s3://lab/none.npy: remote: HeadObject s3://lab/none.npy: 404") || strings.Contains(r.stderr, s3fake.Secret) {
		t.Errorf("missing object: exit %d, %q", r.code, r.stderr)
	}
}

func mustSlice[T ndarray.Element](t *testing.T, v []T, shape ...int) *ndarray.Array {
	t.Helper()
	a, err := ndarray.FromSlice(v, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Ctrl-C during a conversion to S3, while parts are being uploaded in
// parallel, aborts the upload: no object appears, and no upload is left.
func TestS3ConvertInterrupted(t *testing.T) {
	s := s3fake.Start(t, "lab")
	s.Throttle(4e6) // so that the parts are still going up when the signal comes
	cmd := exec.Command(ndpackBin, "convert", "--part-size", "5M", "--from", "npy", "-", "s3://lab/slow.msgpack")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	// 16 MiB announced, 12 MiB given: two parts go up at once, then it
	// waits.
	stdin.Write(npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{2 << 20}))
	stdin.Write(make([]byte, 12<<20))
	uploaded := func() bool {
		started := 0
		for _, c := range s.Calls() {
			if strings.HasPrefix(c, "PUT ") && (strings.Contains(c, "partNumber=1") || strings.Contains(c, "partNumber=2")) {
				started++
			}
		}
		return started == 2
	}
	deadline := time.Now().Add(20 * time.Second)
	for !uploaded() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !uploaded() {
		t.Fatalf("no part was uploaded: %q", s.Calls())
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v (%s)", err, stderr.String())
	}
	aborted := false
	for _, c := range s.Calls() {
		aborted = aborted || strings.HasPrefix(c, "DELETE ") && strings.Contains(c, "uploadId=")
	}
	if !aborted {
		t.Errorf("the upload was not aborted: %q", s.Calls())
	}
	if _, ok := s.Get(t, "lab", "slow.msgpack"); ok {
		t.Error("an interrupted conversion left an object")
	}
	resp, err := http.Get(s.URL + "/lab?uploads")
	if err != nil {
		t.Fatal(err)
	}
	listing, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(listing), "ListMultipartUploadsResult") || strings.Contains(string(listing), "<Upload>") {
		t.Errorf("uploads left after the interruption: %d %s\nstderr: %s\ncalls: %q", resp.StatusCode, listing, stderr.String(), s.Calls())
	}
}

// slowSeeker is a file's bytes handed out slowly, for a server.
type slowSeeker struct {
	*bytes.Reader
	delay time.Duration
}

func (s *slowSeeker) Read(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.Reader.Read(p[:min(len(p), 64<<10)])
}

// On a terminal, a remote conversion shows its progress against the
// object's size, naming the URL without its credentials.
func TestRemoteConvertProgress(t *testing.T) {
	dir := t.TempDir()
	a, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), 1<<20)
	in := filepath.Join(dir, "a.npy")
	if err := npybridge.WriteFile(in, a); err != nil {
		t.Fatal(err)
	}
	data := readFile(t, in)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "a.npy", time.Unix(0, 0), &slowSeeker{bytes.NewReader(data), 2 * time.Millisecond})
	}))
	defer srv.Close()
	url := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1) + "/a.npy"
	for _, out := range []string{"a.msgpack", "a.npz"} { // the streaming path, and the arrays'
		var stderr bytes.Buffer
		e := env{stdin: bytes.NewReader(nil), stdout: io.Discard, stderr: &stderr, terminal: true, progressAfter: time.Millisecond}
		if code := run(e, []string{"convert", url, filepath.Join(dir, out)}); code != 0 {
			t.Fatalf("convert: %d %s", code, stderr.String())
		}
		want := regexp.MustCompile(`\rndpack: convert ` + regexp.QuoteMeta(srv.URL) + `/a.npy: \d+(\.\d)? [KM]iB of 8\.0 MiB \(\d+%\), [\d.]+ [KM]?i?B/s\x1b\[K`)
		if !want.MatchString(stderr.String()) || strings.Contains(stderr.String(), "hunter2") {
			t.Errorf("%s: progress %q", out, stderr.String())
		}
	}
}

// msgpack inputs are read from URLs wherever a local msgpack file is read:
// a lone ext 110 array streams into an .npy, a map's arrays are found by
// name, in each dialect; and what convert writes to s3:// reads back.
// inspect takes FILE:NAME and --member, locally and remotely (issue 44).
func TestRemoteMsgpackAndMembers(t *testing.T) {
	dir, url, _ := remoteDir(t)
	a := readFile(t, filepath.Join(dir, "a.npy"))
	for _, to := range []string{"a.msgpack", "np.msgpack:msgpack-numpy", "pi.msgpack:openpi", "run.msgpack"} {
		out, dialect, _ := strings.Cut(to, ":")
		in := filepath.Join(dir, "a.npy")
		if out == "run.msgpack" {
			in = filepath.Join(dir, "run.npz")
		}
		args := []string{"convert", in, filepath.Join(dir, out)}
		if dialect != "" {
			args = append(args, "--to", dialect)
		}
		if r := cli(t, nil, args...); r.code != 0 {
			t.Fatalf("%q: %s", args, r.stderr)
		}
	}
	back := filepath.Join(t.TempDir(), "back.npy")
	for _, in := range []string{"/a.msgpack", "/np.msgpack", "/pi.msgpack", "/run.msgpack:a"} {
		r := cli(t, nil, "convert", url+in, back)
		if r.code != 0 || !bytes.Equal(readFile(t, back), a) {
			t.Errorf("convert %s: exit %d %s", in, r.code, r.stderr)
		}
	}
	r := cli(t, nil, "show", url+"/run.msgpack:image")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "[[ 0  1]\n [ 2  3]") {
		t.Errorf("show URL.msgpack:image: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if r := cli(t, nil, "diff", url+"/a.msgpack", filepath.Join(dir, "a.npy")); r.code != 0 {
		t.Errorf("diff URL.msgpack a.npy: %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{
		{"inspect", "--json", url + "/run.msgpack:image"},
		{"inspect", "--json", "--member", "image", url + "/run.npz"},
		{"inspect", "--json", filepath.Join(dir, "run.npz") + ":image"},
		{"inspect", "--json", "--member", "image", filepath.Join(dir, "run.msgpack")},
	} {
		r := cli(t, nil, args...)
		var rep []struct {
			Arrays []struct {
				Name  string
				Shape []int
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || len(rep) != 1 || len(rep[0].Arrays) != 1 ||
			rep[0].Arrays[0].Name != "image" || fmt.Sprint(rep[0].Arrays[0].Shape) != "[10 2]" {
			t.Errorf("%q: exit %d, %s %s", args, r.code, r.stdout, r.stderr)
		}
	}
	if r := cli(t, nil, "inspect", url+"/run.npz:nosuch"); r.code != 1 || !strings.Contains(r.stderr, `no array "nosuch"; it holds a, image`) {
		t.Errorf("inspect of a missing member: %d %s", r.code, r.stderr)
	}
}

// What convert uploads to s3:// as msgpack, it reads back (issue 44: it
// could write s3://b/x.msgpack but not read it).
func TestS3MsgpackRoundTrip(t *testing.T) {
	s3fake.Start(t, "lab")
	dir, _, _ := remoteDir(t)
	if r := cli(t, nil, "convert", filepath.Join(dir, "run.npz"), "s3://lab/run.msgpack"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	back := filepath.Join(dir, "back.npz")
	if r := cli(t, nil, "convert", "s3://lab/run.msgpack", back); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := cli(t, nil, "diff", back, filepath.Join(dir, "run.npz")); r.code != 0 {
		t.Errorf("read back from S3: %s %s", r.stdout, r.stderr)
	}
}
