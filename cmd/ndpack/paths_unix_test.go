//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pathsFixture writes a.npy (a <i4 (2, 3)) and r.npz (members image and
// dark) in a temp dir and returns the dir, the array and a.npy's bytes.
func pathsFixture(t *testing.T) (string, *ndarray.Array, []byte) {
	dir := t.TempDir()
	a, _ := ndarray.FromSlice([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	a, _ = a.ToOrder('<')
	require.NoError(t, npybridge.WriteFile(filepath.Join(dir, "a.npy"), a))
	require.NoError(t, npybridge.WriteNPZFile(filepath.Join(dir, "r.npz"), []npybridge.NamedArray{{Name: "image", Array: a}, {Name: "dark", Array: a}}, false))
	return dir, a, readFile(t, filepath.Join(dir, "a.npy"))
}

// A FIFO, a character device and /dev/stdout are written into, as cp
// does, and stay what they were; only regular files are replaced.
func TestConvertWritesIntoSpecialFiles(t *testing.T) {
	dir, a, _ := pathsFixture(t)
	blob, err := ext110.Marshal(a)
	require.NoError(t, err)
	in := filepath.Join(dir, "a.npy")

	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo) // waits for the writer
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	r := cli(t, nil, "convert", "--to", "msgpack", in, fifo)
	require.Equal(t, 0, r.code, r.stderr)
	select {
	case b := <-got:
		assert.Equal(t, blob, b, "the FIFO's reader gets the message")
	case <-time.After(10 * time.Second):
		t.Fatal("nothing read from the FIFO")
	}
	fi, err := os.Lstat(fifo)
	require.NoError(t, err)
	assert.Equal(t, os.ModeNamedPipe, fi.Mode().Type(), "the FIFO is still a FIFO")

	r = cli(t, nil, "convert", "--to", "msgpack", in, "/dev/stdout")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, string(blob), r.stdout, "/dev/stdout is standard output, here a pipe")

	r = cli(t, nil, "convert", "--to", "msgpack", in, "/dev/null")
	require.Equal(t, 0, r.code, r.stderr)
	fi, err = os.Stat("/dev/null")
	require.NoError(t, err)
	assert.Equal(t, os.ModeCharDevice|os.ModeDevice, fi.Mode().Type(), "/dev/null is still a device")
}

// Output that is the input, by name, symbolic link or hard link, is refused
// with one line before anything is written; the input is unchanged.
func TestConvertRefusesItsInputAsOutput(t *testing.T) {
	dir, _, npy := pathsFixture(t)
	in := filepath.Join(dir, "a.npy")
	npz := filepath.Join(dir, "r.npz")
	npzBytes := readFile(t, npz)
	require.NoError(t, os.Link(in, filepath.Join(dir, "hard.npy")))
	require.NoError(t, os.Symlink(in, filepath.Join(dir, "soft.npy")))
	for _, args := range [][]string{
		{"convert", in, in},
		{"convert", in, filepath.Join(dir, "hard.npy")},
		{"convert", in, filepath.Join(dir, "soft.npy")},
		{"convert", "--append", in, filepath.Join(dir, "soft.npy")},
		{"convert", npz + ":image", npz},
	} {
		r := cli(t, nil, args...)
		assert.Equal(t, 1, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "is the input file; writing it would destroy what is being read", args)
		assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "one line: %q", r.stderr)
	}
	assert.Equal(t, npy, readFile(t, in), "the input is byte-identical")
	assert.Equal(t, npzBytes, readFile(t, npz), "the archive keeps every member")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 4, "no temporary file is left")
}

// .npy, msgpack and .npz inputs read from pipes (<(cat a.npy) is a
// /dev/fd path to one), their formats told by their first bytes.
func TestReadsFromPipes(t *testing.T) {
	dir, a, npy := pathsFixture(t)
	blob, _ := ext110.Marshal(a)
	npz := readFile(t, filepath.Join(dir, "r.npz"))
	for _, c := range []struct {
		name  string
		input []byte
		args  []string
		check func(t *testing.T, r result)
	}{
		{"inspect npy", npy, []string{"inspect", "/dev/fd/3"}, func(t *testing.T, r result) {
			assert.Contains(t, r.stdout, "shape     (2, 3): 6 elements, 24 bytes")
		}},
		{"inspect npz", npz, []string{"inspect", "/dev/fd/3"}, func(t *testing.T, r result) {
			assert.Contains(t, r.stdout, "image:")
			assert.Contains(t, r.stdout, "dark:")
		}},
		{"convert npy", npy, []string{"convert", "/dev/fd/3", filepath.Join(dir, "o1.msgpack")}, func(t *testing.T, r result) {
			assert.Equal(t, blob, readFile(t, filepath.Join(dir, "o1.msgpack")))
		}},
		{"convert msgpack", blob, []string{"convert", "/dev/fd/3", filepath.Join(dir, "o2.npy")}, func(t *testing.T, r result) {
			assert.Equal(t, npy, readFile(t, filepath.Join(dir, "o2.npy")))
		}},
		{"convert npz member", npz, []string{"convert", "/dev/fd/3:dark", filepath.Join(dir, "o3.npy")}, func(t *testing.T, r result) {
			assert.Equal(t, npy, readFile(t, filepath.Join(dir, "o3.npy")))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pr, pw, err := os.Pipe()
			require.NoError(t, err)
			cmd := exec.Command(ndpackBin, c.args...)
			cmd.ExtraFiles = []*os.File{pr}
			go func() { pw.Write(c.input); pw.Close() }()
			r := runCmd(t, cmd, nil)
			pr.Close()
			require.Equal(t, 0, r.code, r.stderr)
			c.check(t, r)
		})
	}
}

// --to that contradicts OUT's extension is a usage error, and nothing is
// written.
func TestConvertToContradictingExtension(t *testing.T) {
	dir, _, _ := pathsFixture(t)
	out := filepath.Join(dir, "out.npy")
	r := cli(t, nil, "convert", filepath.Join(dir, "a.npy"), out, "--to", "msgpack")
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, `--to msgpack contradicts the extension of "`+out+`" (npy)`)
	_, err := os.Stat(out)
	assert.True(t, os.IsNotExist(err))
	r = cli(t, nil, "convert", filepath.Join(dir, "a.npy"), filepath.Join(dir, "out.msgpack"), "--to", "openpi")
	assert.Equal(t, 0, r.code, r.stderr)
	assert.True(t, bytes.Contains(readFile(t, filepath.Join(dir, "out.msgpack")), []byte("__ndarray__")))
}

// Standard input needs no --from: its first bytes tell, member included.
func TestConvertStdinWithoutFrom(t *testing.T) {
	dir, _, npy := pathsFixture(t)
	npz := readFile(t, filepath.Join(dir, "r.npz"))
	r := cli(t, npz, "convert", "--member", "image", "-", filepath.Join(dir, "o.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, npy, readFile(t, filepath.Join(dir, "o.npy")))
	r = cli(t, npy, "convert", "-", "-", "--to", "npy")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, string(npy), r.stdout)
}
