//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 36's object arrays, through the command under a 4 GiB address-space
// limit: each case failed before (a panic, gigabytes, minutes of CPU, a
// repeated key, a lost value) and now converts, or is refused with one
// ndpack: line, in memory bounded by the input.

// objectFile writes the hostile case name as an .npy in dir.
func objectFile(t *testing.T, dir, name string) string {
	t.Helper()
	for _, c := range hostile.ObjectCases(false) {
		if c.Name == name {
			p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".npy")
			require.NoError(t, os.WriteFile(p, hostile.ObjectNPY(c.N, c.Data), 0o666))
			return p
		}
	}
	t.Fatalf("no case %q", name)
	return ""
}

// oneLineError checks a refusal: status 1, one ndpack: line, no panic.
func oneLineError(t *testing.T, r result, want string, what ...any) {
	t.Helper()
	w := fmt.Sprint(what...)
	assert.Equal(t, 1, r.code, "%s: %.300s", w, r.stderr)
	assert.True(t, strings.HasPrefix(r.stderr, "ndpack: "), "%s: %.300s", w, r.stderr)
	assert.Equal(t, 1, strings.Count(r.stderr, "\n"), "%s: %.300s", w, r.stderr)
	assert.Contains(t, r.stderr, want, w)
}

// msgpackNumpyMap writes {name: msgpack-numpy's map of the object array
// of pickle, "b": [0., 1., 2.]} as msgpack_numpy.encode writes it.
func msgpackNumpyMap(t *testing.T, dir, file string, n int, pickle []byte) string {
	t.Helper()
	p := filepath.Join(dir, file)
	pypeer.Run(t, `
import sys, msgpack, numpy as np, msgpack_numpy
data = sys.stdin.buffer.read()
obj = {b"nd": True, b"type": "|O", b"kind": b"O", b"shape": [int(sys.argv[2])], b"data": data}
open(sys.argv[1], "wb").write(msgpack.packb({"a": obj, "b": np.arange(3.0)}, default=msgpack_numpy.encode))
`, pickle, p, strconv.Itoa(n))
	return p
}

// 1. A dict whose key is a dict (or a 0-d object array holding one)
// panicked converting to msgpack ("hash of unhashable type"), from an .npy,
// an .npz member and a msgpack-numpy map alike; it is refused as Python
// refuses it.
func TestObjectsUnhashableKeyRefused(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"dict key dict", "dict key 0-d object array"} {
		npy := objectFile(t, dir, name)
		b, _ := os.ReadFile(npy)
		npz := filepath.Join(dir, "z.npz")
		require.NoError(t, os.WriteFile(npz, zipOf([]member{storedMember("k.npy", b)}, false, nil), 0o666))
		var c hostile.ObjectCase
		for _, x := range hostile.ObjectCases(true) {
			if x.Name == name {
				c = x
			}
		}
		mp := msgpackNumpyMap(t, dir, "m.msgpack", c.N, c.Data)
		for _, in := range []string{npy, npz, mp} {
			for _, args := range [][]string{
				{"convert", "--objects", in, filepath.Join(dir, "out.msgpack")},
				{"convert", "--objects", in, filepath.Join(dir, "out.npy")},
				{"inspect", "--objects", in},
			} {
				if strings.HasSuffix(in, ".npz") || strings.HasSuffix(in, ".msgpack") {
					if args[0] == "convert" && strings.HasSuffix(args[3], ".npy") {
						args = append(args, "--member", map[bool]string{true: "k", false: "a"}[strings.HasSuffix(in, ".npz")])
					}
				}
				r := cli(t, nil, args...)
				oneLineError(t, r, "which Python cannot hash (unhashable type)", name, args)
				assert.NotContains(t, r.stderr, "panic")
			}
		}
		assert.NoFileExists(t, filepath.Join(dir, "out.msgpack"))
	}
}

// 2. Sizes, not items: a 1 MiB str shared 200,000 times (1.4 MB) asked for
// 209 GB and died; it is refused in a few MiB with one line naming the
// flag. A list of 30 shared 2,000,000 times (4 MB) peaked at 1.5 GB to
// msgpack; it is written from the one Go value (62 MB of msgpack) in
// memory bounded by the input, and to .npy it stays shared.
func TestObjectsSharedValuesBounded(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector multiplies memory use")
	}
	dir := t.TempDir()
	str := objectFile(t, dir, "1 MiB str shared 200000 times")
	for _, out := range []string{"s.msgpack", "s.npy", "s.npz"} {
		r, rss := limited(t, nil, "convert", "--objects", str, filepath.Join(dir, out))
		oneLineError(t, r, "shared ones repeated where they appear (--max-objects-size)", out)
		t.Logf("1 MiB str x 200000 to %s: peak RSS %d MiB", out, rss>>20)
		assert.Less(t, rss, int64(128<<20), out)
		assert.NoFileExists(t, filepath.Join(dir, out))
	}

	list := objectFile(t, dir, "30-item list shared 2000000 times")
	fi, _ := os.Stat(list)
	out := filepath.Join(dir, "l.msgpack")
	r, rss := limited(t, nil, "convert", "--objects", list, out)
	require.Equal(t, 0, r.code, r.stderr)
	t.Logf("30-item list x 2000000 (%d bytes) to msgpack: peak RSS %d MiB", fi.Size(), rss>>20)
	// 2,000,000 references of 2 bytes are 2,000,000 interfaces of 16 (and
	// the garbage collector's headroom): about 33 times the input here,
	// against 1.5 GB before.
	assert.Less(t, rss, 48*fi.Size())
	got, err := os.ReadFile(out)
	require.NoError(t, err)
	item := append([]byte{0xdc, 0, 30}, bytes.Repeat([]byte{1}, 30)...)
	assert.Equal(t, 5+2000000*len(item), len(got))
	assert.Equal(t, append([]byte{0xdd, 0, 0x1e, 0x84, 0x80}, item...), got[:5+len(item)])
	assert.Equal(t, item, got[len(got)-len(item):])

	r, rss = limited(t, nil, "convert", "--objects", list, filepath.Join(dir, "l.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	t.Logf("to .npy: peak RSS %d MiB", rss>>20)
	assert.Less(t, rss, 48*fi.Size())
	fo, _ := os.Stat(filepath.Join(dir, "l.npy"))
	assert.Less(t, fo.Size(), 2*fi.Size(), "the shared list is written once")

	r = cli(t, nil, "convert", "--objects", "--max-objects-size", "32M", list, filepath.Join(dir, "l2.msgpack"))
	oneLineError(t, r, "more than 33554432 bytes written out, shared ones repeated where they appear (--max-objects-size)")
	r = cli(t, nil, "convert", "--objects", "--max-objects-size", "lots", list, filepath.Join(dir, "l2.msgpack"))
	assert.Equal(t, 2, r.code, r.stderr)
}

// 3. A 4 MiB integer (from a few KB of .npz) was printed in full: 15 s of
// CPU and 30 MB of output from inspect, the whole number in convert's
// "one line". It is cut short, and past Python's 4,300 digits not
// converted at all.
func TestObjectsBigIntCutShort(t *testing.T) {
	dir := t.TempDir()
	npy := objectFile(t, dir, "4 MiB int")
	b, _ := os.ReadFile(npy)
	npz := filepath.Join(dir, "int.npz")
	require.NoError(t, os.WriteFile(npz, zipOf([]member{deflatedMember("n.npy", b)}, false, nil), 0o666))
	fi, _ := os.Stat(npz)
	t.Logf("npz of %d bytes", fi.Size())

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	r := runCmd(t, exec.CommandContext(ctx, ndpackBin, "inspect", "--objects", npz), nil)
	took := time.Since(start)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Less(t, took, 5*time.Second)
	assert.Less(t, len(r.stdout), 2000)
	assert.Contains(t, r.stdout, "first     [<int of about 10100891 digits>]")

	r = runCmd(t, exec.CommandContext(ctx, ndpackBin, "convert", "--objects", npz, filepath.Join(dir, "int.msgpack")), nil)
	oneLineError(t, r, "the int <int of about 10100891 digits> has no msgpack type")
	assert.Less(t, len(r.stderr), 300)

	r = cli(t, nil, "inspect", "--objects", objectFile(t, dir, "1000-digit int"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Regexp(t, `first     \[[0-9]{40}\.\.\.\(100[0-9] digits\)\]`, r.stdout)
}

// 4. Deflate multiplied the pickle allowance: 100 MB of MEMOIZE opcodes in
// a 100 KB .npz were allowed 24 bytes each (1.7 GB). The allowance is now
// the compressed member's.
func TestObjectsNPZAllowanceIsCompressed(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector multiplies memory use")
	}
	dir := t.TempDir()
	pickle := append([]byte("\x80\x04N"), bytes.Repeat([]byte{0x94}, 100<<20)...)
	npz := filepath.Join(dir, "memo.npz")
	require.NoError(t, os.WriteFile(npz, zipOf([]member{deflatedMember("m.npy", hostile.ObjectNPY(1, pickle))}, false, nil), 0o666))
	fi, _ := os.Stat(npz)
	r, rss := limited(t, nil, "inspect", "--objects", npz)
	t.Logf("inspect --objects of a %d-byte npz of MEMOIZEs: peak RSS %d MiB", fi.Size(), rss>>20)
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "--max-objects-size")
	assert.Less(t, rss, int64(256<<20))
}

// 5. --objects read to the end of the file or stream: an object .npy with
// a sparse 2 GiB tail, or followed by /dev/zero, ran out of memory. The
// pickle is read up to its STOP, as numpy reads it.
func TestObjectsReadStopsAtSTOP(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector multiplies memory use")
	}
	dir := t.TempDir()
	npy := objectFile(t, dir, "bytes and str keys")
	tail := filepath.Join(dir, "tail.npy")
	b, _ := os.ReadFile(npy)
	require.NoError(t, os.WriteFile(tail, b, 0o666))
	require.NoError(t, os.Truncate(tail, int64(len(b))+2<<30))
	r, rss := limited(t, nil, "convert", "--objects", tail, filepath.Join(dir, "tail.msgpack"))
	require.Equal(t, 0, r.code, r.stderr)
	t.Logf("sparse 2 GiB tail: peak RSS %d MiB", rss>>20)
	assert.Less(t, rss, int64(64<<20))

	// cat obj.npy /dev/zero | ndpack convert --objects - out.msgpack
	pypeer.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rssFile := filepath.Join(dir, "rss")
	cmd := exec.CommandContext(ctx, "sh", "-c", `cat "$1" /dev/zero | "$2" -c "$3" "$4" "$5" convert --objects --from npy - "$6"`,
		"sh", npy, pypeer.Python, spawn, rssFile, ndpackBin, filepath.Join(dir, "zero.msgpack"))
	r = runCmd(t, cmd, nil)
	require.Equal(t, 0, r.code, r.stderr)
	got, err := os.ReadFile(filepath.Join(dir, "zero.msgpack"))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(dir, "tail.msgpack"))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	kb, _ := os.ReadFile(rssFile)
	t.Logf("followed by /dev/zero: peak RSS %s KiB", kb)
	assert.Less(t, len(kb), 6, "peak RSS under 100,000 KiB")
}

// 6. msgpack_numpy's own {a: object array, b: float array}, with
// --objects: a was listed twice (inspect), written twice (a map header of
// 3) and refused as a repeated npz member. 7. Dicts kept neither order nor
// both of {b'a': 1, 'a': 2}: five runs gave five files.
func TestObjectsMsgpackNumpyMapAndDicts(t *testing.T) {
	dir := t.TempDir()
	mp := filepath.Join(dir, "mn.msgpack")
	pypeer.Run(t, `
import sys, msgpack, numpy as np, msgpack_numpy
a = np.empty(2, dtype=object); a[0] = {b"a": 1, "a": 2, "z": 3, "b": 4}; a[1] = "x"
open(sys.argv[1], "wb").write(msgpack.packb({"a": a, "b": np.arange(3.0)}, default=msgpack_numpy.encode))
`, nil, mp)
	r := cli(t, nil, "inspect", "--objects", mp)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "2 arrays")
	assert.Equal(t, 1, strings.Count(r.stdout, "  a:\n"), r.stdout)
	assert.Contains(t, r.stdout, "first     [{b'a': 1, 'a': 2, 'z': 3, 'b': 4}, 'x']")

	var first []byte
	for i := range 5 {
		out := filepath.Join(dir, "o.msgpack")
		r := cli(t, nil, "convert", "--objects", "--to", "msgpack-numpy", mp, out)
		require.Equal(t, 0, r.code, r.stderr)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		if i == 0 {
			first = b
			assert.Equal(t, []byte{0x82, 0xa1, 'a'}, b[:3], "a map of 2, a first")
		} else {
			assert.Equal(t, first, b, "run %d", i)
		}
	}
	r = cli(t, nil, "convert", "--objects", mp, filepath.Join(dir, "o.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	got := pypeer.Run(t, `
import sys, msgpack, numpy as np, msgpack_numpy
m = msgpack.unpackb(open(sys.argv[1], "rb").read(), object_hook=msgpack_numpy.decode, strict_map_key=False)
print(list(m), [list(d.items()) if isinstance(d, dict) else d for d in m["a"]], m["b"].tolist())
z = np.load(sys.argv[2], allow_pickle=True)
print(z.files, [list(d.items()) if isinstance(d, dict) else d for d in z["a"]], z["b"].tolist())
`, nil, filepath.Join(dir, "o.msgpack"), filepath.Join(dir, "o.npz"))
	assert.Equal(t, "['a', 'b'] [[(b'a', 1), ('a', 2), ('z', 3), ('b', 4)], 'x'] [0.0, 1.0, 2.0]\n"+
		"['a', 'b'] [[(b'a', 1), ('a', 2), ('z', 3), ('b', 4)], 'x'] [0.0, 1.0, 2.0]\n", string(got))

	// Without --objects the object array is listed as not read, as an
	// .npz member is, and the rest of the file is inspected.
	r = cli(t, nil, "inspect", mp)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "  a:\n    not read  dialect: object array (pickle)")
	assert.Contains(t, r.stdout, "  b:\n    dtype     <f8")

	// A lone one is refused as a lone object .npy is, and read with
	// --objects, the dialect named.
	lone := filepath.Join(dir, "lone.msgpack")
	pypeer.Run(t, `
import sys, msgpack, numpy as np, msgpack_numpy
open(sys.argv[1], "wb").write(msgpack.packb(np.array(["x", 1], dtype=object), default=msgpack_numpy.encode))
`, nil, lone)
	oneLineError(t, cli(t, nil, "inspect", lone), "(--objects reads it, running nothing in the pickle)")
	r = cli(t, nil, "inspect", "--objects", lone)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, ": msgpack (msgpack-numpy), 1 array\n")
	assert.Contains(t, r.stdout, "first     ['x', 1]")
}

// convert --objects --append said the input "is read only with --objects"
// although the flag was given: object arrays are not appended, and the
// usage error says so.
func TestObjectsAppendMessage(t *testing.T) {
	dir := t.TempDir()
	npy := objectFile(t, dir, "bytes and str keys")
	r := cli(t, nil, "convert", "--objects", "--append", npy, filepath.Join(dir, "rows.npy"))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "an object array (--objects) is not appended")
	assert.NotContains(t, r.stderr, "read only with --objects")
	assert.NoFileExists(t, filepath.Join(dir, "rows.npy"))
}
