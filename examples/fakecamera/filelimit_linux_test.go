package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ndpack/ndpack/yaq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary, run again, the daemon of the config file
// it names, at an open-file limit of 64 (TestCameraAtFileLimitChild).
const childEnv = "FAKECAMERA_TEST_FILE_LIMIT_CONFIG"

// TestCameraAtFileLimitChild is the child of TestCameraAtFileLimit.
func TestCameraAtFileLimitChild(t *testing.T) {
	cfg := os.Getenv(childEnv)
	if cfg == "" {
		t.Skip("the child of TestCameraAtFileLimit")
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 64, Max: 64}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	os.Exit(runDaemons([]string{"--config", cfg}, os.Stdout, os.Stderr))
}

// At its open-file limit (64 descriptors here, the connection cap set
// above it in the config) the daemon waits and serves again once
// connections close, instead of exiting 1: the test opens connections
// until the daemon says it ran out, closes them, and calls it; then SIGTERM
// ends it with status 0.
func TestCameraAtFileLimit(t *testing.T) {
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), "cam.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[cam]\nport = %d\nhost = \"127.0.0.1\"\nmax_connections = 1000\n", port)), 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^TestCameraAtFileLimitChild$")
	cmd.Env = append(os.Environ(), childEnv+"="+cfg)
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

	addr := fmt.Sprintf("127.0.0.1:%d", port)
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
	c, err := yaq.Dial(ctx, addr)
	require.NoError(t, err)
	defer c.Close()
	var id map[string]any
	require.NoError(t, c.Call(ctx, "id", nil, &id))
	assert.Equal(t, "cam", id["name"])
	assert.Less(t, time.Since(start), 3*time.Second)
	select {
	case code := <-status:
		t.Fatalf("the daemon exited with status %d", code)
	default:
	}
	require.NoError(t, syscall.Kill(pid, syscall.SIGTERM))
	select {
	case code := <-status:
		assert.Equal(t, 0, code)
	case <-time.After(5 * time.Second):
		t.Fatal("SIGTERM did not end the daemon")
	}
}
