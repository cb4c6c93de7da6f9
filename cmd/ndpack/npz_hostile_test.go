//go:build unix

package main

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// member is one file of a hand-made zip: its name, its bytes as stored
// (deflated if deflate), and the size and CRC its headers state.
type member struct {
	name    string
	deflate bool
	data    []byte
	usize   uint64
	crc     uint32
}

func storedMember(name string, b []byte) member {
	return member{name: name, data: b, usize: uint64(len(b)), crc: crc32.ChecksumIEEE(b)}
}

func deflatedMember(name string, b []byte) member {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(b)
	w.Close()
	return member{name: name, deflate: true, data: buf.Bytes(), usize: uint64(len(b)), crc: crc32.ChecksumIEEE(b)}
}

// zipOf writes a zip of members, each with its local header and data and
// a directory record; with zip64 the records' sizes and offsets and the
// end records are zip64 ones. records, if not nil, makes the directory's
// records from the members' offsets instead, as a hostile writer may.
func zipOf(ms []member, zip64 bool, records func(offsets []uint32) [][]byte) []byte {
	le := binary.LittleEndian
	var b []byte
	var offsets []uint32
	method := func(m member) uint16 {
		if m.deflate {
			return 8
		}
		return 0
	}
	for _, m := range ms {
		offsets = append(offsets, uint32(len(b)))
		b = le.AppendUint32(b, 0x04034b50)
		b = le.AppendUint16(b, 20)
		b = le.AppendUint16(b, 0)
		b = le.AppendUint16(b, method(m))
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, m.crc)
		b = le.AppendUint32(b, uint32(len(m.data)))
		b = le.AppendUint32(b, uint32(min(m.usize, 0xffffffff)))
		b = le.AppendUint16(b, uint16(len(m.name)))
		b = le.AppendUint16(b, 0)
		b = append(b, m.name...)
		b = append(b, m.data...)
	}
	var recs [][]byte
	if records != nil {
		recs = records(offsets)
	} else {
		for i, m := range ms {
			recs = append(recs, dirRecord(m.name, method(m), m.crc, uint64(len(m.data)), m.usize, uint64(offsets[i]), zip64))
		}
	}
	dirAt := len(b)
	for _, r := range recs {
		b = append(b, r...)
	}
	dirLen := len(b) - dirAt
	count, size, at := uint16(len(recs)), uint32(dirLen), uint32(dirAt)
	if zip64 || len(recs) >= 0xffff {
		end64 := len(b)
		b = le.AppendUint32(b, 0x06064b50)
		b = le.AppendUint64(b, 44)
		b = le.AppendUint32(b, 45<<16|45)
		b = le.AppendUint64(b, 0)
		b = le.AppendUint64(b, uint64(len(recs)))
		b = le.AppendUint64(b, uint64(len(recs)))
		b = le.AppendUint64(b, uint64(dirLen))
		b = le.AppendUint64(b, uint64(dirAt))
		b = le.AppendUint32(b, 0x07064b50)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, uint64(end64))
		b = le.AppendUint32(b, 1)
		count, size, at = 0xffff, 0xffffffff, 0xffffffff
	}
	b = le.AppendUint32(b, 0x06054b50)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint16(b, count)
	b = le.AppendUint16(b, count)
	b = le.AppendUint32(b, size)
	b = le.AppendUint32(b, at)
	return le.AppendUint16(b, 0)
}

// dirRecord is a central directory record.
func dirRecord(name string, method uint16, crc uint32, csize, usize, offset uint64, zip64 bool) []byte {
	le := binary.LittleEndian
	var extra []byte
	if zip64 {
		extra = le.AppendUint16(extra, 1)
		extra = le.AppendUint16(extra, 24)
		extra = le.AppendUint64(extra, usize)
		extra = le.AppendUint64(extra, csize)
		extra = le.AppendUint64(extra, offset)
		csize, usize, offset = 0xffffffff, 0xffffffff, 0xffffffff
	}
	var r []byte
	r = le.AppendUint32(r, 0x02014b50)
	r = le.AppendUint32(r, 45<<16|45)
	r = le.AppendUint16(r, 0)
	r = le.AppendUint16(r, method)
	r = le.AppendUint32(r, 0)
	r = le.AppendUint32(r, crc)
	r = le.AppendUint32(r, uint32(csize))
	r = le.AppendUint32(r, uint32(usize))
	r = le.AppendUint16(r, uint16(len(name)))
	r = le.AppendUint16(r, uint16(len(extra)))
	r = append(r, make([]byte, 6)...) // comment, disk, internal attributes
	r = le.AppendUint32(r, 0)
	r = le.AppendUint32(r, uint32(offset))
	r = append(r, name...)
	return append(r, extra...)
}

// claimNPY is an NPY header alone that claims a (4096, 4096, 512) array of
// <f8, 64 GiB, in Fortran order or not.
func claimNPY(fortran bool) []byte {
	h := npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{4096, 4096, 512})
	if fortran {
		h = bytes.Replace(h, []byte("'fortran_order': False"), []byte("'fortran_order': True "), 1)
	}
	return h
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// spawn is Python that runs a command as a grandchild of the tests and
// writes its peak RSS to a file: Linux counts, at exec, the memory a child
// shared with its parent, and Go starts children sharing the test
// process's memory, so a child's own rusage carries the test process's
// peak. Python's fork gives the command a small parent. The command runs
// under a 4 GiB address-space limit, which the Go runtime fits in and a
// claim of 64 GiB does not.
const spawn = `
import os, resource, sys
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(ru.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
`

// measured returns a command that runs ndpack with args, and a function
// that returns its peak RSS once it has ended.
func measured(t *testing.T, args ...string) (*exec.Cmd, func() int64) {
	t.Helper()
	pypeer.Require(t)
	rssFile := filepath.Join(t.TempDir(), "rss")
	cmd := exec.Command(pypeer.Python, append([]string{"-c", spawn, rssFile, ndpackBin}, args...)...)
	return cmd, func() int64 {
		b, err := os.ReadFile(rssFile)
		require.NoError(t, err)
		kb, err := strconv.ParseInt(string(b), 10, 64)
		require.NoError(t, err)
		return kb << 10
	}
}

// limited runs ndpack with args and stdin, and returns its result and
// peak RSS.
func limited(t *testing.T, stdin []byte, args ...string) (result, int64) {
	t.Helper()
	cmd, rss := measured(t, args...)
	return runCmd(t, cmd, stdin), rss()
}

// A 200-byte .npz whose member claims 64 GiB is refused by every command
// in a few MiB, with one line and exit status 1, leaving no file: before,
// convert of a Fortran-order member, and convert --append of any, made the
// claimed size up front and died of it, leaving their temporary file.
func TestHostileNPZClaims(t *testing.T) {
	claimF, claimC := claimNPY(true), claimNPY(false)
	stated := func(m member) member { m.usize = uint64(len(claimF)) + 64<<30; return m }
	files := []struct {
		name, ext string
		b         []byte
		message   string // after "ndpack: IN: "
	}{
		{"fortran-stored", ".npz", zipOf([]member{storedMember("a.npy", claimF)}, false, nil),
			`member "a": npybridge: truncated input at byte 128: the header announces 68719476736 data bytes (shape (4096, 4096, 512) of <f8), the member holds 0 (its directory record at archive byte 163)`},
		{"fortran-deflated", ".npz", zipOf([]member{deflatedMember("a.npy", claimF)}, false, nil),
			`member "a": npybridge: truncated input at byte 128: the header announces 68719476736 data bytes (shape (4096, 4096, 512) of <f8), the member holds 0 (its directory record at archive byte 119)`},
		{"fortran-deflated-stated", ".npz", zipOf([]member{stated(deflatedMember("a.npy", claimF))}, true, nil),
			`member "a": npybridge: truncated input at byte 128: the header announces 68719476736 data bytes (shape (4096, 4096, 512) of <f8); 84 deflated bytes decompress to at most 86946`},
		{"c-deflated-stated", ".npz", zipOf([]member{stated(deflatedMember("a.npy", claimC))}, true, nil),
			`member "a": npybridge: truncated input at byte 128: the header announces 68719476736 data bytes (shape (4096, 4096, 512) of <f8); 84 deflated bytes decompress to at most 86946`},
		{"fortran", ".npy", claimF,
			`npybridge: truncated input at byte 128: the header announces 68719476736 data bytes (shape (4096, 4096, 512) of <f8), the file has 0`},
	}
	for _, f := range files {
		for _, args := range [][]string{
			{"convert", "IN", "out.npy"},
			{"convert", "IN", "out.msgpack"},
			{"convert", "--append", "IN", "out.npy"},
			{"inspect", "IN"},
		} {
			t.Run(f.name+f.ext+"/"+strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
				dir := t.TempDir()
				in := filepath.Join(dir, f.name+f.ext)
				require.NoError(t, os.WriteFile(in, f.b, 0o644))
				argv := append([]string{}, args...)
				for i, a := range argv {
					switch a {
					case "IN":
						argv[i] = in
					case "out.npy", "out.msgpack":
						argv[i] = filepath.Join(dir, a)
					}
				}
				start := time.Now()
				r, rss := limited(t, nil, argv...)
				assert.Less(t, time.Since(start), 5*time.Second)
				assert.Equal(t, 1, r.code, r.stderr)
				assert.Less(t, rss, int64(64<<20), "peak RSS")
				assert.NotContains(t, r.stderr, "goroutine")
				if args[0] == "inspect" {
					// A member's error said once, on standard error, and
					// the member listed as not read.
					if f.ext == ".npz" {
						assert.Contains(t, r.stdout, "  a:\n    not read  (said on standard error)\n")
						assert.NotContains(t, r.stdout, f.message)
						assert.Contains(t, r.stderr, f.message)
					} else {
						assert.Equal(t, "ndpack: "+in+": "+f.message+"\n", r.stderr)
					}
				} else {
					assert.Equal(t, "ndpack: "+in+": "+f.message+"\n", r.stderr)
				}
				assert.Equal(t, []string{filepath.Base(in)}, dirEntries(t, dir), "files left beside the input")
			})
		}
	}
}

// Standard input is not checked against a size: an NPY header there that
// claims 64 GiB costs what arrives, and fails when the input ends. A
// command that must hold the array whole (a Fortran-order one, or one
// appended) refuses a claim over --max-size (by default half the memory the
// process may use: 2 GiB under the 4 GiB limit here) before reading any
// data; with the bound raised past the claim, memory still grows only as
// the bytes arrive.
func TestHostileNPYClaimsOnStdin(t *testing.T) {
	const truncated = "ndpack: npybridge: truncated input at byte 1048704: the header announces 68719476736 data bytes, standard input ends after 1048576 of them\n"
	const tooBig = "ndpack: the array, (4096, 4096, 512) of <f8, is 64.0 GiB: more than the 2.0 GiB --max-size lets a command read into memory (by default half the memory the process may use); raise it, or read rows with --rows\n"
	for _, fortran := range []bool{true, false} {
		for _, args := range [][]string{
			{"convert", "--from", "npy", "-", "out.npy"},
			{"convert", "--append", "--from", "npy", "-", "out.npy"},
			{"convert", "--max-size", "128G", "--from", "npy", "-", "out.npy"},
			{"convert", "--max-size", "128G", "--append", "--from", "npy", "-", "out.npy"},
		} {
			t.Run(fmt.Sprintf("fortran=%v/%s", fortran, strings.Join(args[:len(args)-1], " ")), func(t *testing.T) {
				dir := t.TempDir()
				args[len(args)-1] = filepath.Join(dir, "out.npy")
				in := append(claimNPY(fortran), make([]byte, 1<<20)...)
				r, rss := limited(t, in, args...)
				assert.Equal(t, 1, r.code, r.stderr)
				assert.Less(t, rss, int64(64<<20), "peak RSS")
				want := truncated
				if (fortran || args[1] == "--append") && args[1] != "--max-size" {
					want = tooBig
				}
				assert.Equal(t, want, r.stderr)
				assert.Empty(t, dirEntries(t, dir), "files left")
			})
		}
	}
}

// --append reads its array whole; every hostile msgpack message is refused
// there too, and no file is made.
func TestHostileMsgpackAppend(t *testing.T) {
	dir := t.TempDir()
	for i, in := range hostile.Inputs() {
		src := filepath.Join(dir, fmt.Sprintf("hostile%d.msgpack", i))
		require.NoError(t, os.WriteFile(src, in.Bytes, 0o644))
		out := filepath.Join(dir, "out.npy")
		r, rss := limited(t, nil, "convert", "--append", src, out)
		assert.Equal(t, 1, r.code, "%s: %s", in.Name, r.stderr)
		assert.Regexp(t, `^ndpack: [^\n]*\n$`, r.stderr, in.Name)
		assert.Less(t, rss, int64(64<<20), "%s: peak RSS", in.Name)
		assert.NoFileExists(t, out, in.Name)
	}
}

// An archive whose 100,000 directory records all point at one member is
// refused at once: before, inspect decoded the member once per record for
// about half an hour.
func TestInspectOverlappingMembers(t *testing.T) {
	v := make([]float64, 1000)
	a, _ := ndarray.FromSlice(v)
	var npy bytes.Buffer
	require.NoError(t, npybridge.Write(&npy, a))
	m := storedMember("a.npy", npy.Bytes())
	in := zipOf([]member{m}, false, func(offsets []uint32) [][]byte {
		recs := make([][]byte, 100_000)
		for i := range recs {
			recs[i] = dirRecord(fmt.Sprintf("a%d.npy", i), 0, m.crc, uint64(len(m.data)), m.usize, uint64(offsets[0]), false)
		}
		return recs
	})
	p := filepath.Join(t.TempDir(), "same.npz")
	require.NoError(t, os.WriteFile(p, in, 0o644))
	for _, args := range [][]string{{"inspect", p}, {"inspect", "--json", p}, {"convert", p, p + ".mpk"}} {
		start := time.Now()
		r, _ := limited(t, nil, args...)
		took := time.Since(start)
		// Refused in well under a second alone; the bound leaves room for
		// a CI machine busy with other packages (1.46 s seen), and is
		// still hundreds of times below the half hour it took.
		assert.Less(t, took, 5*time.Second, args)
		assert.Equal(t, 1, r.code, args)
		assert.Equal(t, "ndpack: "+p+": npybridge: overlapping or out-of-range zip members at byte 8163: "+
			`member "a0.npy" (local header at byte 0, 8128 compressed bytes, ending at byte 8164 or later) overlaps member "a1.npy", whose local header is at byte 0`+"\n", r.stderr)
		t.Logf("%v: refused in %v", args[:len(args)-1], took)
	}
	assert.NoFileExists(t, p+".mpk")
}

// inspect of a valid archive of 100,000 one-element members costs less CPU
// than numpy's listing and reading of every member's header (zipfile and
// numpy.lib.format, not np.load's NpzFile, whose lookups are quadratic),
// in about 42 MiB (bounded at 96 for a loaded machine): before, it took
// 74 s and 1.4 GB, a 4 MiB buffer per member. Both measured here, in child processes.
func TestInspectManyMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("numpy takes about 6 s")
	}
	if raceDetector {
		t.Skip("the race detector multiplies memory and time")
	}
	pypeer.Require(t)
	const n = 100_000
	p := filepath.Join(t.TempDir(), "many.npz")
	pypeer.Run(t, `
import numpy as np
np.savez(sys.argv[1], **{"m%d" % i: np.array([i], dtype="<i8") for i in range(int(sys.argv[2]))})
`, nil, p, strconv.Itoa(n))
	// ndpack and numpy at once, on the two cores: each one's CPU time is
	// its own.
	cmd, peak := measured(t, "inspect", "--json", p)
	var out bytes.Buffer
	cmd.Stdout = &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	res := pypeer.Run(t, `
import resource, zipfile
from numpy.lib import format as npf
n = 0
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        with z.open(info) as f:
            npf._read_array_header(f, npf.read_magic(f))
            n += 1
ru = resource.getrusage(resource.RUSAGE_SELF)
print(n, ru.ru_utime + ru.ru_stime)
`, nil, p)
	require.NoError(t, cmd.Wait())
	// Python's own CPU time is in the rusage too: its start, less than
	// numpy's, which imports numpy.
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	ours := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	rss := peak()
	fields := strings.Fields(string(res))
	require.Len(t, fields, 2, "%s", res)
	assert.Equal(t, strconv.Itoa(n), fields[0])
	secs, err := strconv.ParseFloat(fields[1], 64)
	require.NoError(t, err)
	theirs := time.Duration(secs * float64(time.Second))
	t.Logf("%d members: ndpack inspect --json %v CPU, %d MiB peak RSS; numpy's header walk %v CPU", n, ours, rss>>20, theirs)
	assert.LessOrEqual(t, ours, theirs, "CPU time")
	// About 42 MiB alone; once 69 MiB with other tests starving the
	// collector on both cores. 96 MiB still tells it from the 1.4 GB of a
	// buffer per member.
	assert.Less(t, rss, int64(96<<20), "peak RSS")

	var rep []struct {
		Arrays []struct {
			Name  string  `json:"name"`
			Shape []int   `json:"shape"`
			First []int64 `json:"first"`
		} `json:"arrays"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Len(t, rep, 1)
	require.Len(t, rep[0].Arrays, n)
	last := rep[0].Arrays[n-1]
	assert.Equal(t, "m99999", last.Name)
	assert.Equal(t, []int{1}, last.Shape)
	assert.Equal(t, []int64{99999}, last.First)
}

// A deflated Fortran-order member is transposed as it decompresses, into
// the one copy of the array that convert and convert --append hold: before,
// convert held two copies and --append three.
func TestFortranMemberMemory(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector multiplies memory use")
	}
	const rows, cols = 4096, 4096 // <f8: 128 MiB
	h := npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{rows, cols})
	h = bytes.Replace(h, []byte("'fortran_order': False"), []byte("'fortran_order': True "), 1)
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestSpeed)
	w.Write(h)
	crc := crc32.ChecksumIEEE(h)
	col := make([]byte, rows*8)
	for j := range cols {
		// Column j holds j: the transposed file has rows 0, 1, 2, ...
		for i := range rows {
			binary.LittleEndian.PutUint64(col[8*i:], uint64(j))
		}
		w.Write(col)
		crc = crc32.Update(crc, crc32.IEEETable, col)
	}
	require.NoError(t, w.Close())
	m := member{name: "a.npy", deflate: true, data: buf.Bytes(), usize: uint64(len(h) + rows*cols*8), crc: crc}
	dir := t.TempDir()
	in := filepath.Join(dir, "f.npz")
	require.NoError(t, os.WriteFile(in, zipOf([]member{m}, false, nil), 0o644))
	runs := [][]string{{"convert", in, filepath.Join(dir, "c.npy")}, {"convert", "--append", in, filepath.Join(dir, "a.npy")}}
	for _, args := range runs {
		r, rss := limited(t, nil, args...)
		require.Equal(t, 0, r.code, r.stderr)
		t.Logf("%s of a 128 MiB Fortran-order member: peak RSS %d MiB", args[:len(args)-2], rss>>20)
		assert.Less(t, rss, int64(128<<20+48<<20), "peak RSS")
	}
	// A few elements, not the whole.
	for _, args := range runs {
		f, err := os.Open(args[len(args)-1])
		require.NoError(t, err)
		h, err := npybridge.ReadOptions{}.ReadHeader(f)
		require.NoError(t, err)
		if args[1] == "--append" {
			require.Equal(t, []int{1, rows, cols}, h.Shape, "one row, the array")
		} else {
			require.Equal(t, []int{rows, cols}, h.Shape)
		}
		for _, i := range []int64{0, 1, 7, rows*cols - 1} {
			var v [8]byte
			_, err := f.ReadAt(v[:], h.DataOffset+8*i)
			require.NoError(t, err)
			assert.Equal(t, uint64(i%cols), binary.LittleEndian.Uint64(v[:]), "element %d", i)
		}
		f.Close()
	}
}
