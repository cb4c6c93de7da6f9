//go:build unix

package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTempWriterChild is the writer the stale-file test starts: it begins
// writing the file named by NDPACK_ATOMICFILE_CHILD, prints its temporary
// file's name, and goes on writing, never committing, until killed (or
// for 20 s at most).
func TestTempWriterChild(t *testing.T) {
	name := os.Getenv("NDPACK_ATOMICFILE_CHILD")
	if name == "" {
		t.Skip("started by TestCreateRemovesStaleTemps")
	}
	f, err := Create(name, 0o666)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(f.File.Name())
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); {
		f.WriteString("partial row ")
		time.Sleep(5 * time.Millisecond)
	}
	os.Exit(0)
}

// startWriter starts a TestTempWriterChild writing name and returns it with
// the name of its temporary file. The test ends it by its pid.
func startWriter(t *testing.T, name string) (*exec.Cmd, string) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestTempWriterChild$")
	cmd.Env = append(os.Environ(), "NDPACK_ATOMICFILE_CHILD="+name)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		killByPID(cmd.Process.Pid)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	tmp := line[:len(line)-1]
	require.FileExists(t, tmp)
	return cmd, tmp
}

// killByPID ends the process pid with SIGKILL.
func killByPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

func names(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var n []string
	for _, e := range entries {
		n = append(n, e.Name())
	}
	return n
}

// A writer killed with SIGKILL leaves its temporary file; the next Create
// into that directory removes it, and leaves a live writer's.
func TestCreateRemovesStaleTemps(t *testing.T) {
	if !canLock {
		t.Skip("no flock on " + runtime.GOOS)
	}
	dir := t.TempDir()
	killed, killedTmp := startWriter(t, filepath.Join(dir, "killed.npy"))
	require.NoError(t, killed.Process.Kill())
	if runtime.GOOS == "linux" {
		// Not reaped yet: a zombie, whose locks the kernel has released.
		for end := time.Now().Add(5 * time.Second); processExists(killed.Process.Pid) && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		require.False(t, processExists(killed.Process.Pid), "a zombie is not a live writer")
		require.FileExists(t, killedTmp, "SIGKILL leaves the temporary file")
		// The leader thread is a zombie before the last thread has closed
		// the files, and so released the lock.
		for end := time.Now().Add(5 * time.Second); len(RemoveStale(dir)) == 0 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		require.NoFileExists(t, killedTmp, "a zombie's temporary file is removed")
		require.NoError(t, os.WriteFile(killedTmp, []byte("x"), 0o644)) // again, for Create to remove
	}
	killed.Wait()
	require.FileExists(t, killedTmp, "SIGKILL leaves the temporary file")
	deadPID := killed.Process.Pid

	live, liveTmp := startWriter(t, filepath.Join(dir, "live.npy"))

	// Names that are not quite ours, or are ours but not removable.
	keep := []string{
		".a.npy.tmp-3k5jd9",                                  // an older ndpack's: no pid
		".a.npy.tmp-" + strconv.Itoa(deadPID) + "-x",         // another program's, or an older ndpack's
		".budget.xlsx.tmp-2024-12",                           // another program's
		".a.npy.ndpack-tmp-0" + strconv.Itoa(deadPID) + "-x", // a leading zero
		".a.npy.ndpack-tmp-" + strconv.Itoa(deadPID) + "-",   // no number
		".a.npy.ndpack-tmp-" + strconv.Itoa(deadPID) + "-X",  // not lower-case base 36
		"a.npy.ndpack-tmp-" + strconv.Itoa(deadPID) + "-x",   // no leading dot
		".a.npy.ndpack-tmp-" + strconv.Itoa(deadPID) + "-x.bak",
		// Our pid, unlocked, new: a writer between creating and locking.
		tempName("b.npy", os.Getpid(), 1),
	}
	ago := time.Now().Add(-2 * StaleAge)
	for _, n := range keep {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644))
		if !strings.Contains(n, tempMark) { // other programs' files, however old
			require.NoError(t, os.Chtimes(filepath.Join(dir, n), ago, ago))
		}
	}
	link := tempName("c.npy", deadPID, 2)
	require.NoError(t, os.Symlink("killed.npy", filepath.Join(dir, link)))
	keep = append(keep, link)
	// Our pid, unlocked, untouched for longer than StaleAge: a recycled pid.
	old := filepath.Join(dir, tempName("d.npy", os.Getpid(), 3))
	require.NoError(t, os.WriteFile(old, []byte("x"), 0o644))
	require.NoError(t, os.Chtimes(old, ago, ago))

	f, err := Create(filepath.Join(dir, "next.npy"), 0o666)
	require.NoError(t, err)
	ours := f.File.Name()
	got := names(t, dir)
	assert.NotContains(t, got, filepath.Base(killedTmp), "the dead writer's temporary file is removed")
	assert.NotContains(t, got, filepath.Base(old), "an unlocked file older than StaleAge is removed")
	assert.Contains(t, got, filepath.Base(liveTmp), "the live writer's is kept")
	for _, n := range keep {
		assert.Contains(t, got, n)
	}

	// Our own open temporary file is locked: another Create keeps it.
	f2, err := Create(filepath.Join(dir, "other.npy"), 0o666)
	require.NoError(t, err)
	assert.FileExists(t, ours)
	f2.Abort()

	// Once the live writer is killed, its file goes too.
	require.NoError(t, live.Process.Kill())
	live.Wait()
	assert.Equal(t, []string{filepath.Base(liveTmp)}, RemoveStale(dir))
	assert.NoFileExists(t, liveTmp)
	require.NoError(t, f.Commit())
	assert.FileExists(t, filepath.Join(dir, "next.npy"))
}

// The temporary file is locked from creation to its rename or removal, so
// that RemoveStale never takes it for a dead writer's.
func TestTempLockedUntilDone(t *testing.T) {
	if !canLock {
		t.Skip("no flock on " + runtime.GOOS)
	}
	dir := t.TempDir()
	locked := func(path string) bool {
		g, err := os.Open(path)
		require.NoError(t, err)
		defer g.Close()
		ok, err := TryLock(g)
		require.NoError(t, err)
		return !ok
	}
	f, err := Create(filepath.Join(dir, "a"), 0o666)
	require.NoError(t, err)
	assert.True(t, locked(f.File.Name()))
	f.WriteString("a")
	require.NoError(t, f.Commit())
	assert.False(t, locked(filepath.Join(dir, "a")), "released after the rename")

	// CommitNew: the file keeps its lock, as its descriptor stays open.
	f, err = Create(filepath.Join(dir, "b"), 0o666)
	require.NoError(t, err)
	tmp := f.File.Name()
	f.WriteString("b1")
	require.NoError(t, f.CommitNew())
	assert.NoFileExists(t, tmp)
	assert.True(t, locked(filepath.Join(dir, "b")))
	f.WriteString("b2") // the same file, under its new name
	require.NoError(t, f.File.Close())
	assert.False(t, locked(filepath.Join(dir, "b")))
	got, _ := os.ReadFile(filepath.Join(dir, "b"))
	assert.Equal(t, "b1b2", string(got))

	// CommitNew never replaces.
	f, err = Create(filepath.Join(dir, "b"), 0o666)
	require.NoError(t, err)
	f.WriteString("other")
	err = f.CommitNew()
	assert.True(t, errors.Is(err, fs.ErrExist), "%v", err)
	assert.EqualError(t, err, "write "+filepath.Join(dir, "b")+": file exists")
	got, _ = os.ReadFile(filepath.Join(dir, "b"))
	assert.Equal(t, "b1b2", string(got))
	assert.Equal(t, []string{"a", "b"}, names(t, dir), "the temporary file is removed")
	assert.ErrorIs(t, f.CommitNew(), os.ErrClosed, "already finished")
	f.Abort()
}
