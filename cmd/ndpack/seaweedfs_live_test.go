//go:build unix

package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// seaweedfs starts SeaweedFS's `weed mini` (a master, a volume server, a
// filer and an S3 gateway in one process) on 127.0.0.1, serving bucket,
// from the binary NDPACK_SEAWEEDFS names (it builds from the Go module
// proxy: the README says how), and points the AWS configuration at it. It
// skips when none is named: a store built from fetched sources is a live
// peer, not one CI installs. The process is ended by its id when the test
// ends.
func seaweedfs(t *testing.T, bucket string) string {
	weed := os.Getenv("NDPACK_SEAWEEDFS")
	if weed == "" {
		t.Skip("NDPACK_SEAWEEDFS names no weed binary (see the README: Testing against a real object store)")
	}
	ports := make([]int, 4) // s3, master, filer, volume
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports[i] = l.Addr().(*net.TCPAddr).Port
		l.Close()
	}
	dir := t.TempDir()
	cmd := exec.Command(weed, "mini", "-dir="+dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-s3.port="+strconv.Itoa(ports[0]), "-master.port="+strconv.Itoa(ports[1]), "-filer.port="+strconv.Itoa(ports[2]),
		"-volume.port="+strconv.Itoa(ports[3]), "-admin.ui=false", "-bucket="+bucket)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // weed and anything it started
		cmd.Wait()
	})
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "any", "AWS_SECRET_ACCESS_KEY": "any", "AWS_REGION": "us-east-1",
		"AWS_CONFIG_FILE": "/nonexistent/config", "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent/credentials", "AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	// Ready when the bucket answers a listing (the gateway comes up after
	// the master, volume and filer), within a minute.
	deadline := time.Now().Add(time.Minute)
	for {
		r := pypeer.Run(t, boto3Script+`
try:
    s3.list_objects_v2(Bucket=sys.argv[1])
    print("ok")
except Exception as e:
    print("no", e)
`, nil, bucket)
		if strings.HasPrefix(string(r), "ok") {
			return endpoint
		}
		if time.Now().After(deadline) {
			t.Fatalf("weed mini did not serve s3://%s within a minute: %s\n%s", bucket, r, log.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// boto3Script is the Python S3 client pointed at AWS_ENDPOINT_URL by path.
const boto3Script = `
import os, sys, hashlib
import boto3
from botocore.config import Config
s3 = boto3.client('s3', endpoint_url=os.environ['AWS_ENDPOINT_URL'], region_name='us-east-1',
                  config=Config(s3={'addressing_style': 'path'}, retries={'max_attempts': 1}))
`

// Against a real object store, SeaweedFS's S3 gateway: a 256 MiB .npy goes
// up in parallel parts and comes back byte for byte (boto3 reads it the
// same), at the default concurrency and at one part at a time, whose
// speeds are reported (on 2 cores the store itself is the limit); and
// Ctrl-C during an upload leaves no object and no upload.
func TestSeaweedFS(t *testing.T) {
	pypeer.RequireModule(t, "boto3", "python3-boto3")
	seaweedfs(t, "lab")
	dir := t.TempDir()
	a, _ := ndarray.Zeros(ndarray.DTypeOf[float32](), 64<<20)
	for i := range a.Data {
		a.Data[i] = byte(i*7 + i>>13)
	}
	src := filepath.Join(dir, "big.npy")
	if err := npybridge.WriteFile(src, a); err != nil {
		t.Fatal(err)
	}
	want := readFile(t, src)
	for _, conc := range []string{"8", "1"} {
		start := time.Now()
		if r := cli(t, nil, "convert", "--quiet", "--concurrency", conc, src, "s3://lab/big.npy"); r.code != 0 {
			t.Fatalf("upload at --concurrency %s: %s", conc, r.stderr)
		}
		up := time.Since(start)
		back := filepath.Join(dir, "back.npy")
		start = time.Now()
		if r := cli(t, nil, "convert", "--quiet", "--concurrency", conc, "s3://lab/big.npy", back); r.code != 0 {
			t.Fatalf("download at --concurrency %s: %s", conc, r.stderr)
		}
		down := time.Since(start)
		if !bytes.Equal(readFile(t, back), want) {
			t.Fatalf("--concurrency %s: the object read back differs from the file", conc)
		}
		mb := float64(len(want)) / 1e6
		t.Logf("SeaweedFS, --concurrency %s: up %.0f MB/s (%v), down %.0f MB/s (%v)", conc, mb/up.Seconds(), up.Round(time.Millisecond), mb/down.Seconds(), down.Round(time.Millisecond))
	}
	out := pypeer.Run(t, boto3Script+`
body = s3.get_object(Bucket='lab', Key='big.npy')['Body'].read()
print(len(body), hashlib.sha256(body).hexdigest())
`, nil)
	if got := strings.Fields(string(out)); len(got) != 2 || got[0] != strconv.Itoa(len(want)) {
		t.Errorf("boto3 read %q", out)
	}

	// Interrupted while parts go up: the upload is aborted.
	cmd := exec.Command(ndpackBin, "convert", "--part-size", "5M", "--from", "npy", "-", "s3://lab/cut.npy")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Write(npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{4 << 20}))
	stdin.Write(make([]byte, 16<<20)) // three parts up, then it waits for more
	uploads := func() string {
		return strings.TrimSpace(string(pypeer.Run(t, boto3Script+`
print(len(s3.list_multipart_uploads(Bucket='lab').get('Uploads', [])))
`, nil)))
	}
	deadline := time.Now().Add(30 * time.Second)
	for uploads() == "0" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	stdin.Close()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("interrupted: %v %s", err, stderr.String())
	}
	if n := uploads(); n != "0" {
		t.Errorf("%s uploads left after Ctrl-C: %s", n, stderr.String())
	}
	out = pypeer.Run(t, boto3Script+`
r = s3.list_objects_v2(Bucket='lab', Prefix='cut')
print(r.get('KeyCount', 0))
`, nil)
	if strings.TrimSpace(string(out)) != "0" {
		t.Errorf("an interrupted upload left an object: %s", out)
	}
}
