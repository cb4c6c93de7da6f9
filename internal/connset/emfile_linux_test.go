package connset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary, run again, a server at a low open-file
// limit (TestServeAtFileLimitChild); its value is the MaxConns to serve
// with.
const childEnv = "CONNSET_TEST_FILE_LIMIT_CHILD"

// childFiles is the child's open-file limit.
const childFiles = 64

// TestServeAtFileLimitChild is the child of TestServeAtFileLimit: it lowers
// its open-file limit, prints its address and serves an echo of lines until
// killed. Were Serve to return, it exits 3.
func TestServeAtFileLimitChild(t *testing.T) {
	caps := os.Getenv(childEnv)
	if caps == "" {
		t.Skip("the child of TestServeAtFileLimit")
	}
	var maxConns int
	fmt.Sscan(caps, &maxConns)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: childFiles, Max: childFiles}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Printf("ADDR %s\n", l.Addr())
	s := New(log.New(os.Stderr, "", 0).Printf)
	err = s.Serve(l, Limits{MaxConns: maxConns}, func(nc net.Conn) {
		defer nc.Close()
		br := bufio.NewReader(nc)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			nc.Write([]byte(line))
		}
	}, errTestClosed)
	fmt.Fprintln(os.Stderr, "SERVE RETURNED:", err)
	os.Exit(3)
}

// startChild runs TestServeAtFileLimitChild with maxConns and returns its
// address, its stderr lines as they come, and a channel closed when it
// exits; the child is killed, by its pid, when t ends.
func startChild(t *testing.T, maxConns int) (addr string, lines *childLines, exited chan struct{}) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestServeAtFileLimitChild$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", childEnv, maxConns))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	lines = &childLines{}
	exited = make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines.add(sc.Text())
		}
	}()
	t.Cleanup(func() {
		syscall.Kill(pid, syscall.SIGKILL)
		<-exited
	})
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "ADDR "); ok {
				got <- a
			}
		}
		io.Copy(io.Discard, stdout)
		cmd.Wait()
		close(exited)
	}()
	select {
	case addr = <-got:
	case <-time.After(10 * time.Second):
		t.Fatalf("the child did not start: %v", lines.get())
	}
	return addr, lines, exited
}

type childLines struct {
	mu    sync.Mutex
	lines []string
}

func (c *childLines) add(l string) { c.mu.Lock(); c.lines = append(c.lines, l); c.mu.Unlock() }
func (c *childLines) get() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.lines...)
}

func (c *childLines) count(sub string) int {
	n := 0
	for _, l := range c.get() {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// A server at its open-file limit (accept4 failing with EMFILE) waits and
// serves again once connections close, instead of ending: the child's
// limit is 64 descriptors, its cap off, and the test opens connections
// until the child says it ran out, closes them, and has a line echoed.
func TestServeAtFileLimit(t *testing.T) {
	addr, lines, exited := startChild(t, -1)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for len(held) < 4*childFiles && lines.count("too many open files") == 0 {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		require.NoError(t, err)
		held = append(held, c)
		if len(held) > childFiles-8 {
			time.Sleep(20 * time.Millisecond) // for the child to accept
		}
	}
	require.Equal(t, 1, lines.count("too many open files"), "the child ran out of descriptors, and said so once: %q", lines.get())
	assert.Regexp(t, `^127\.0\.0\.1:\d+: accept tcp 127\.0\.0\.1:\d+: accept4: too many open files; retrying after 5ms, doubling to 1s, until accept succeeds$`, lines.get()[0])
	t.Logf("the child ran out at %d connections", len(held))
	time.Sleep(300 * time.Millisecond) // backing off, still alive
	for _, c := range held {
		c.Close()
	}
	held = nil
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Write([]byte("still here\n"))
	require.NoError(t, err)
	got, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err, "the child's stderr: %q", lines.get())
	assert.Equal(t, "still here\n", got)
	assert.Less(t, time.Since(start), 3*time.Second, "served once descriptors were free")
	select {
	case <-exited:
		t.Fatalf("the child exited: %q", lines.get())
	default:
	}
}

// With the default cap, a server at a 64-descriptor limit never runs out:
// it serves 48 connections (three quarters of 64) and refuses the rest at
// once, saying so once.
func TestDefaultCapUnderFileLimit(t *testing.T) {
	addr, lines, exited := startChild(t, 0)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 48 {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		require.NoError(t, err)
		held = append(held, c)
		echo(t, c, "held\n")
	}
	for range 20 {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			assert.ErrorIs(t, err, syscall.ECONNRESET)
			continue
		}
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		_, err = c.Read(make([]byte, 1))
		c.Close()
		assert.Error(t, err, "refused")
		var ne net.Error
		assert.False(t, errors.As(err, &ne) && ne.Timeout(), "refused at once, not left in the backlog: %v", err)
	}
	assert.Equal(t, 0, lines.count("too many open files"))
	require.Len(t, lines.get(), 1)
	assert.Regexp(t, `^127\.0\.0\.1:\d+: 48 connections open, the limit: refusing new ones until some close$`, lines.get()[0])
	held[0].Close()
	held = held[1:]
	var c net.Conn
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var err error
		c, err = net.DialTimeout("tcp", addr, 2*time.Second)
		if err == nil {
			c.SetReadDeadline(time.Now().Add(time.Second))
			if _, err = c.Write([]byte("again\n")); err == nil {
				if got, err := bufio.NewReader(c).ReadString('\n'); err == nil {
					assert.Equal(t, "again\n", got)
					c.Close()
					break
				}
			}
			c.Close()
		}
		require.True(t, time.Now().Before(deadline), "not served again after a connection closed")
	}
	select {
	case <-exited:
		t.Fatalf("the child exited: %q", lines.get())
	default:
	}
}
