//go:build linux

package openpi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
)

// childVar names the server a child of the limit tests runs (see
// TestServerChild).
const childVar = "NDPACK_OPENPI_CHILD"

// TestServerChild is the server of the limit tests, in a process of its
// own: an echo Server with the default limits on 127.0.0.1, its address
// printed first, until its stdin closes; with NDPACK_OPENPI_CHILD=fds,
// under an open-file limit of 1024. Without the variable it skips.
func TestServerChild(t *testing.T) {
	mode := os.Getenv(childVar)
	if mode == "" {
		t.Skip("the child of the limit tests")
	}
	if mode == "fds" {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 1024, Max: 1024}); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			os.Exit(2)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { io.Copy(io.Discard, os.Stdin); cancel() }()
	fmt.Println(l.Addr())
	if err := (&Server{Policy: Echo}).Serve(ctx, l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// child is a server TestServerChild runs.
type child struct {
	addr   string
	pid    int
	stderr *hostile.Log
}

// startChild runs TestServerChild in mode until the test ends.
func startChild(t *testing.T, mode string) child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerChild$")
	cmd.Env = append(os.Environ(), childVar+"="+mode, "GOMAXPROCS=2")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr hostile.Log
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Errorf("the server did not stop in 10 s of its stdin closing")
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the server printed no address: %v\n%s", err, stderr.String())
	}
	return child{addr: strings.TrimSpace(line), pid: cmd.Process.Pid, stderr: &stderr}
}

// handshake is a websocket client's opening request to addr.
func handshake(addr string) string {
	return "GET / HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
}

// realCall is a robot's call: a client that connects and sends three
// images and a state, within limit; it returns how long it took.
func realCall(t *testing.T, addr string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	c, err := Dial(ctx, addr, nil)
	if err != nil {
		t.Fatalf("a robot could not connect within %v: %v", limit, err)
	}
	defer c.Close()
	if _, err := c.Infer(ctx, robotObservation(t)); err != nil {
		t.Fatalf("a robot's call failed within %v: %v", limit, err)
	}
	return time.Since(start)
}

// TestServerIdleFlood: 1,500 clients that shake hands and sit idle, at a
// server under an open-file limit of 1024, do not keep a robot from being
// served within its timeout: at its cap (three quarters of the limit) the
// server closes the connection idle longest to make room. Before, 1,016
// idle websockets exhausted its descriptors and robots were refused.
func TestServerIdleFlood(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < 2048 {
		raised := lim
		raised.Cur = min(4096, lim.Max)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil || raised.Cur < 2048 {
			t.Skipf("this test holds 1,500 sockets, and cannot raise its open-file limit of %d: %v", lim.Cur, err)
		}
		t.Cleanup(func() { syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
	}
	srv := startChild(t, "fds")
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	start := time.Now()
	shaken := 0
	for len(held) < 1500 && time.Since(start) < 60*time.Second {
		conn, err := net.DialTimeout("tcp", srv.addr, 5*time.Second)
		if err != nil {
			t.Fatalf("after %d connections: %v", len(held), err)
		}
		held = append(held, conn)
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(conn, handshake(srv.addr))
		if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil && resp.StatusCode == 101 {
			shaken++
		}
	}
	t.Logf("%d idle connections, %d of them websockets, opened in %v", len(held), shaken, time.Since(start))
	if len(held) < 1500 {
		t.Fatalf("only %d connections in 60 s", len(held))
	}
	took := realCall(t, srv.addr, 10*time.Second)
	t.Logf("a robot's call among them took %v; the server's log: %q", took, srv.stderr.String())
	if shaken < 1000 {
		t.Errorf("only %d of 1,500 clients got a websocket", shaken)
	}
}
