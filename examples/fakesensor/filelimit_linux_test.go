package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ndpack/ndpack/yaqrpc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary, run again, the daemon listening on the
// address it names, at an open-file limit of 64
// (TestSensorAtFileLimitChild).
const childEnv = "FAKESENSOR_TEST_FILE_LIMIT_ADDR"

// TestSensorAtFileLimitChild is the child of TestSensorAtFileLimit.
func TestSensorAtFileLimitChild(t *testing.T) {
	addr := os.Getenv(childEnv)
	if addr == "" {
		t.Skip("the child of TestSensorAtFileLimit")
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 64, Max: 64}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	os.Exit(run([]string{"-addr", addr, "-max-connections", "-1"}, os.Stderr))
}

// At its open-file limit (64 descriptors here, the connection cap off)
// the daemon waits and serves again once connections close, instead of
// log.Fatal: the test opens connections until the daemon says it ran out,
// closes them, and calls it.
func TestSensorAtFileLimit(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSensorAtFileLimitChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+addr)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	var mu sync.Mutex
	var lines []string
	said := func(sub string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, l := range lines {
			if strings.Contains(l, sub) {
				n++
			}
		}
		return n
	}
	status := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			mu.Lock()
			lines = append(lines, sc.Text())
			mu.Unlock()
		}
		cmd.Wait()
		status <- cmd.ProcessState.ExitCode()
	}()
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })

	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); len(held) < 256 && said("too many open files") == 0; {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil { // not listening yet
			require.True(t, time.Now().Before(deadline), "the daemon did not start: %v", err)
			time.Sleep(20 * time.Millisecond)
			continue
		}
		held = append(held, c)
		if len(held) > 50 {
			time.Sleep(20 * time.Millisecond) // for the daemon to accept
		}
	}
	mu.Lock()
	t.Logf("at %d connections the daemon said: %q", len(held), lines)
	mu.Unlock()
	require.Equal(t, 1, said("accept4: too many open files; retrying after 5ms, doubling to 1s, until accept succeeds"))
	time.Sleep(300 * time.Millisecond)
	for _, c := range held {
		c.Close()
	}
	held = nil
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := yaqrpc.Dial(ctx, addr)
	require.NoError(t, err)
	defer c.Close()
	var id map[string]any
	require.NoError(t, c.Call(ctx, "id", nil, &id))
	assert.Equal(t, "fakesensor", id["name"])
	assert.Less(t, time.Since(start), 3*time.Second)
	select {
	case code := <-status:
		t.Fatalf("the daemon exited with status %d", code)
	default:
	}
	require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
	select {
	case code := <-status:
		assert.Equal(t, 0, code)
	case <-time.After(5 * time.Second):
		t.Fatal("shutdown did not end the daemon")
	}
}
