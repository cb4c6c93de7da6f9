package hostile

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

// FileLimitChild is the child test of a FileLimit: when env is set it
// runs run with env's value at an open-file limit of 64 and exits with
// what run returns; otherwise it skips, being only the child of the test
// parent.
func FileLimitChild(t *testing.T, env, parent string, run func(v string) int) {
	v := os.Getenv(env)
	if v == "" {
		t.Skip("the child of " + parent)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 64, Max: 64}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(2)
	}
	os.Exit(run(v))
}

// FileLimit is a daemon under the open-file-limit test (Run), run by its
// FileLimitChild in a process of its own; C is its protocol's client.
type FileLimit[C io.Closer] struct {
	// Child names the child test, which runs the daemon when Env is set to
	// Value.
	Child, Env, Value string
	// Addr is where the daemon listens.
	Addr string
	Client[C]
	// Name is what the daemon's id call answers as its name.
	Name string
	// Stop makes the daemon, of process pid, exit, over c or by a signal;
	// Stopper says how, for the failure message.
	Stop    func(ctx context.Context, pid int, c C) error
	Stopper string
}

// Run starts the daemon and opens connections to it until it says it ran
// out of descriptors, which it must say once; closes them; calls id, which
// must answer within 3 s; and then stops the daemon, which must exit with
// status 0. The daemon is to wait at its limit and serve again once
// connections close, not exit.
func (f FileLimit[C]) Run(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+f.Child+"$")
	cmd.Env = append(os.Environ(), f.Env+"="+f.Value)
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
		c, err := net.DialTimeout("tcp", f.Addr, 2*time.Second)
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
	for _, c := range held {
		c.Close()
	}
	held = nil
	// Served again within 3 s: until the daemon has seen the held
	// connections close (on a loaded machine, some time), it is at its
	// connection cap and refuses a new one, which the client sees as a
	// connection closed; so the client tries again, as a user would.
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var c C
	var id map[string]any
	for try := 0; ; try++ {
		var err error
		if c, err = f.Dial(ctx, f.Addr); err == nil {
			if err = f.Call(ctx, c, "id", &id); err == nil {
				break
			}
			c.Close()
		}
		require.True(t, time.Since(start) < 3*time.Second && try < 100, "not served again within 3 s: %v", err)
		time.Sleep(50 * time.Millisecond)
	}
	defer c.Close()
	assert.Equal(t, f.Name, id["name"])
	select {
	case code := <-status:
		t.Fatalf("the daemon exited with status %d", code)
	default:
	}
	require.NoError(t, f.Stop(ctx, pid, c))
	select {
	case code := <-status:
		assert.Equal(t, 0, code)
	case <-time.After(5 * time.Second):
		t.Fatal(f.Stopper + " did not end the daemon")
	}
}
