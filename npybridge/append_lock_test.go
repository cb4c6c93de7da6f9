//go:build unix

package npybridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// TestAppendLockChild is a writer of the two-process tests. It opens the
// file named by NDPACK_APPEND_LOCK_CHILD (waiting for the lock if
// NDPACK_APPEND_WAIT is set) and prints "open", or "error MS LOCKED ERR"
// and exits 3; then, once a line arrives on its standard input, it appends
// 2,000 rows, row i holding 10000*NDPACK_APPEND_WRITER + i, and prints
// "done".
func TestAppendLockChild(t *testing.T) {
	p := os.Getenv("NDPACK_APPEND_LOCK_CHILD")
	if p == "" {
		t.Skip("started by TestTwoAppenders")
	}
	writer, _ := strconv.Atoi(os.Getenv("NDPACK_APPEND_WRITER"))
	start := time.Now()
	w, err := AppendOptions{Wait: os.Getenv("NDPACK_APPEND_WAIT") != ""}.OpenAppend(context.Background(), p, rowDType, 256)
	if err != nil {
		fmt.Println("error", time.Since(start).Milliseconds(), errors.Is(err, ErrLocked), err)
		os.Exit(3)
	}
	fmt.Println("open")
	bufio.NewReader(os.Stdin).ReadString('\n')
	for i := 0; i < 2000; i++ {
		if err := w.Append(row(writer*10000 + i)); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
	}
	if err := w.Close(); err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	fmt.Println("done")
}

// appendChild is a running TestAppendLockChild.
type appendChild struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func startAppendChild(t *testing.T, p string, writer int, wait bool) *appendChild {
	cmd := exec.Command(os.Args[0], "-test.run=^TestAppendLockChild$")
	cmd.Env = append(os.Environ(), "NDPACK_APPEND_LOCK_CHILD="+p, "NDPACK_APPEND_WRITER="+strconv.Itoa(writer))
	if wait {
		cmd.Env = append(cmd.Env, "NDPACK_APPEND_WAIT=1")
	}
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	c := &appendChild{cmd: cmd, in: in, lines: make(chan string, 10)}
	t.Cleanup(func() {
		syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	go func() {
		defer close(c.lines)
		s := bufio.NewScanner(out)
		for s.Scan() {
			c.lines <- s.Text()
		}
	}()
	return c
}

// next returns the child's next line of output, failing after 10 s.
func (c *appendChild) next(t *testing.T) string {
	select {
	case l, ok := <-c.lines:
		if !ok {
			return "(exited)"
		}
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no answer from the writer in 10 s")
		return ""
	}
}

func (c *appendChild) goOn() {
	c.in.Write([]byte("go\n"))
	c.in.Close()
}

// checkWriters has numpy load p and check it holds exactly 2,000 rows of
// each writer in turn, in order.
func checkWriters(t *testing.T, p string, writers ...int) {
	in, _ := json.Marshal(map[string]any{"file": p, "writers": writers})
	out := pypeer.Run(t, `
import json
import numpy as np
r = json.load(sys.stdin)
a = np.load(r["file"])
want = np.concatenate([w * 10000 + np.arange(2000) for w in r["writers"]]).astype("<u2")
ok = a.dtype.str == "<u2" and a.shape == (len(want), 256) and bool((a == want[:, None]).all())
print(json.dumps([list(a.shape), ok]))
`, in)
	var res []any
	require.NoError(t, json.Unmarshal(out, &res))
	assert.Equal(t, []any{[]any{float64(2000 * len(writers)), 256.0}, true}, res, "numpy's shape, and whether every row is as written")
}

// Two processes append 2,000 rows each to one file. Without a lock each
// overwrote the other's rows and counted only its own: 2,000 to 2,453 rows
// of 4,000 survived.
func TestTwoAppenders(t *testing.T) {
	t.Run("the second fails at once", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "frames.npy")
		first := startAppendChild(t, p, 1, false)
		require.Equal(t, "open", first.next(t))
		second := startAppendChild(t, p, 2, false)
		line := second.next(t)
		f := strings.SplitN(line, " ", 4)
		require.Len(t, f, 4, line)
		assert.Equal(t, "error", f[0])
		ms, _ := strconv.Atoi(f[1])
		assert.Less(t, ms, 500, "milliseconds to refuse")
		assert.Equal(t, "true", f[2], "errors.Is(err, ErrLocked)")
		assert.Equal(t, "append "+p+": npybridge: locked by another appender: another Appender, in this process or another, "+
			"is adding rows to the file, and rows from two writers would overwrite each other", f[3])
		second.cmd.Wait()
		assert.Equal(t, 3, second.cmd.ProcessState.ExitCode())
		first.goOn()
		assert.Equal(t, "done", first.next(t))
		checkWriters(t, p, 1)
	})
	t.Run("with Wait both complete", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "frames.npy")
		first := startAppendChild(t, p, 1, false)
		require.Equal(t, "open", first.next(t))
		second := startAppendChild(t, p, 2, true)
		select {
		case l := <-second.lines:
			t.Fatalf("the second writer did not wait: %q", l)
		case <-time.After(200 * time.Millisecond):
		}
		first.goOn() // the second waits while the first appends
		assert.Equal(t, "done", first.next(t))
		assert.Equal(t, "open", second.next(t))
		second.goOn()
		assert.Equal(t, "done", second.next(t))
		checkWriters(t, p, 1, 2)
	})
}

// Readers take no lock: numpy and ReadFile read the file while an
// Appender holds it, and another Appender is refused, or waits as long as
// its context allows.
func TestAppendReadableWhileLocked(t *testing.T) {
	p := filepath.Join(t.TempDir(), "frames.npy")
	w, err := AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	defer w.Close()
	for i := range 5 {
		require.NoError(t, w.Append(row(i)))
	}
	out := pypeer.Run(t, `
import numpy as np
a = np.load(sys.stdin.readline().strip())
print(a.shape, a.dtype.str, [int(r[0]) for r in a], bool((a == a[:, :1]).all()))
`, []byte(p+"\n"))
	assert.Equal(t, "(5, 256) <u2 [0, 1, 2, 3, 4] True\n", string(out))
	a, err := ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, []int{5, 256}, a.Shape)
	m, err := ReadOptions{}.OpenMapped(p)
	require.NoError(t, err)
	assert.Equal(t, row(4).Data, m.Array.Data[4*512:])
	m.Close()

	_, err = AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	assert.ErrorIs(t, err, ErrLocked)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = AppendOptions{Wait: true}.OpenAppend(ctx, p, rowDType, 256)
	assert.ErrorIs(t, err, ErrLocked)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.EqualError(t, err, "append "+p+": npybridge: locked by another appender: gave up waiting for the Appender that holds the file: context deadline exceeded")
	assert.Less(t, time.Since(start), 2*time.Second)

	// Once closed, the file is free.
	require.NoError(t, w.Close())
	w2, err := AppendOptions{Wait: true}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	assert.Equal(t, int64(5), w2.Rows())
	require.NoError(t, w2.Close())
}

// A new file appears under its name complete: no reader ever finds it
// empty. An empty file (created where there are no hard links, or left by
// a process that died before its header) is given its header.
func TestAppendCreatesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "new.npy")
	w, err := AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	entries, _ := os.ReadDir(dir)
	require.Len(t, entries, 1, "no temporary file is left")
	b, _ := os.ReadFile(p)
	assert.Equal(t, AppendHeader(nil, rowDType, []int{0, 256}), b)
	require.NoError(t, w.Close())

	empty := filepath.Join(dir, "empty.npy")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	w, err = AppendOptions{}.OpenAppend(context.Background(), empty, rowDType, 256)
	require.NoError(t, err)
	require.NoError(t, w.Append(row(3)))
	require.NoError(t, w.Close())
	a, err := ReadFile(empty)
	require.NoError(t, err)
	assert.Equal(t, row(3).Data, a.Data)
	assert.Equal(t, []int{1, 256}, a.Shape)
}

// enospc fails a write as a full disk does: the first bytes land, then
// ENOSPC.
func enospc(f *os.File) func(p []byte, off int64) (int, error) {
	return func(p []byte, off int64) (int, error) {
		n, _ := f.WriteAt(p[:len(p)/2+1], off)
		return n, &os.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
}

// An Append that the disk cannot hold leaves no partial row: the file is
// cut back to its last whole row and the error says how many it holds.
func TestAppendDiskFullRollsBack(t *testing.T) {
	p := filepath.Join(t.TempDir(), "frames.npy")
	w, err := AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	defer w.Close()
	for i := range 3 {
		require.NoError(t, w.Append(row(i)))
	}
	w.writeAt = enospc(w.f)
	block, _ := ndarray.New(rowDType, []int{2, 256}, append(row(3).Data, row(4).Data...))
	err = w.Append(block)
	assert.ErrorIs(t, err, ErrNotAppended)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.EqualError(t, err, "append "+p+": npybridge: rows not appended at byte 1664: the disk is full: "+
		"2 rows (1024 bytes) did not fit; the file was cut back to its last whole row and holds 3 rows: no space left on device")
	assert.Equal(t, int64(3), w.Rows())
	fi, _ := os.Stat(p)
	assert.Equal(t, int64(128+3*512), fi.Size(), "no partial row")
	err = w.Append(row(3))
	assert.ErrorContains(t, err, "1 row (512 bytes) did not fit; the file was cut back to its last whole row and holds 3 rows")

	// Once there is room again, appending carries on where it stopped.
	w.writeAt = nil
	require.NoError(t, w.Append(row(3)))
	a, err := ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, []int{4, 256}, a.Shape)
	for i := range 4 {
		assert.Equal(t, row(i).Data, a.Data[i*512:(i+1)*512])
	}
}
