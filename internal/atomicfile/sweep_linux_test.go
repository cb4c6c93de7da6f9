package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// In a crowded directory Create looks for dead writers' temporary files
// only when it has not for StaleAge, as the directory's attribute records;
// in a small one, every time.
func TestCreateSweepsCrowdedDirOncePerStaleAge(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Setxattr(dir, sweptAttr, []byte("0"), 0); err != nil {
		if os.Getenv("CI") != "" || !errors.Is(err, syscall.ENOTSUP) {
			t.Fatalf("setting %s on %s: %v", sweptAttr, dir, err)
		}
		t.Skipf("no user attributes on %s: %v", dir, err)
	}
	require.NoError(t, syscall.Removexattr(dir, sweptAttr))
	ago := time.Now().Add(-2 * StaleAge)
	// An unlocked temporary file of ours untouched for longer than
	// StaleAge: what a dead writer leaves.
	stale := func(n uint64) string {
		p := filepath.Join(dir, tempName("x.npy", os.Getpid(), n))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		require.NoError(t, os.Chtimes(p, ago, ago))
		return p
	}
	write := func() {
		f, err := Create(filepath.Join(dir, "out.npy"), 0o666)
		require.NoError(t, err)
		require.NoError(t, f.Commit())
	}

	// Small: every Create looks, and leaves no attribute.
	first := stale(1)
	write()
	assert.NoFileExists(t, first)
	second := stale(2)
	write()
	assert.NoFileExists(t, second)
	_, err := syscall.Getxattr(dir, sweptAttr, make([]byte, 32))
	assert.ErrorIs(t, err, syscall.ENODATA, "a small directory gets no attribute")

	filler := strings.Repeat("f", 100)
	for i := 0; ; i++ {
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		if fi.Size() >= crowdedDirSize {
			break
		}
		require.Less(t, i, 100_000, "the directory stays under %d bytes", crowdedDirSize)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filler+strconv.Itoa(i)), nil, 0o644))
	}

	// Crowded, never looked through: Create looks and records when.
	third := stale(3)
	before := time.Now()
	write()
	assert.NoFileExists(t, third)
	buf := make([]byte, 32)
	n, err := syscall.Getxattr(dir, sweptAttr, buf)
	require.NoError(t, err)
	ns, err := strconv.ParseInt(string(buf[:n]), 10, 64)
	require.NoError(t, err)
	assert.False(t, time.Unix(0, ns).Before(before), "the attribute records the look")

	// Looked through less than StaleAge ago: not again.
	fourth := stale(4)
	write()
	assert.FileExists(t, fourth, "a crowded directory is looked through once every StaleAge")
	assert.Equal(t, []string{filepath.Base(fourth)}, RemoveStale(dir), "RemoveStale always looks")

	// StaleAge later (the attribute set back), and with a time in the
	// future (a clock set back): looked through again.
	for _, when := range []time.Time{time.Now().Add(-StaleAge - time.Second), time.Now().Add(time.Hour)} {
		require.NoError(t, syscall.Setxattr(dir, sweptAttr, []byte(strconv.FormatInt(when.UnixNano(), 10)), 0))
		p := stale(5)
		write()
		assert.NoFileExists(t, p, "last look at %v", when)
	}
}

// A directory that takes no new file (/proc) fails Create with the name
// the caller gave and the directory, never the temporary's name, which
// the caller never gave.
func TestCreateErrorNamesTarget(t *testing.T) {
	_, err := Create("/proc/o.msgpack", 0o644)
	if err == nil {
		t.Fatal("created a file in /proc")
	}
	if got, want := err.Error(), "write /proc/o.msgpack: cannot create a file in /proc: no such file or directory"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if strings.Contains(err.Error(), tempMark) {
		t.Errorf("error names the temporary file: %v", err)
	}
}
