package main

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"github.com/ndpack/ndpack/internal/peertext"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// hostileNames writes files whose names inside (npz members, record fields,
// msgpack keys, strings) hold terminal controls: an OSC 52 clipboard write,
// a bell, a screen clear, a C1 CSI and a right-to-left override.
func hostileNames(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	npy := func(a *ndarray.Array) []byte {
		var b bytes.Buffer
		require.NoError(t, npybridge.Write(&b, a))
		return b.Bytes()
	}
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	for _, m := range []struct {
		name string
		data []byte
	}{
		{"evil\x1b]52;c;aGk=\a.npy", npy(mustSlice(t, []int64{0, 1, 2}, 3))},
		{"rlo\u202egnp.npy", npy(mustSlice(t, []int64{0, 1}, 2))},
		{"notes\x1b[31m.txt", []byte("hello")},
	} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: m.name, Method: zip.Store})
		require.NoError(t, err)
		_, err = w.Write(m.data)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "esc.npz"), z.Bytes(), 0o644))

	f8, i4 := ndarray.DType{Order: '<', Kind: 'f', ItemSize: 8}, ndarray.DType{Order: '<', Kind: 'i', ItemSize: 4}
	rec, err := ndarray.NewRecord([]ndarray.Field{{Name: "a\ab", DType: f8}, {Name: "c", DType: i4, Offset: 8}}, 12)
	require.NoError(t, err)
	require.NoError(t, npybridge.WriteFile(filepath.Join(dir, "bel.npy"), &ndarray.Array{DType: rec, Shape: []int{2}, Data: make([]byte, 24)}))

	str := []rune("x\u009b[2J\u202ey")
	u := ndarray.DType{Order: '<', Kind: 'U', ItemSize: 4 * len(str)}
	data := make([]byte, 0, 4*len(str))
	for _, r := range str {
		data = append(data, byte(r), byte(r>>8), byte(r>>16), byte(r>>24))
	}
	require.NoError(t, npybridge.WriteFile(filepath.Join(dir, "str.npy"), &ndarray.Array{DType: u, Shape: []int{1}, Data: data}))

	u2 := ndarray.DType{Order: '<', Kind: 'U', ItemSize: 8}
	rec, err = ndarray.NewRecord([]ndarray.Field{{Name: "s", DType: u2}}, 8)
	require.NoError(t, err)
	require.NoError(t, npybridge.WriteFile(filepath.Join(dir, "rec.npy"), &ndarray.Array{DType: rec, Shape: []int{1}, Data: []byte{0x9b, 0, 0, 0, 0x2e, 0x20, 0, 0}}))

	msg := mpwire.AppendMapHeader(nil, 2)
	msg = mpwire.AppendString(msg, "k\x1b[2J")
	msg, err = ext110.Options{}.Append(msg, mustSlice(t, []int64{0, 1, 2}, 3))
	require.NoError(t, err)
	msg = mpwire.AppendString(msg, "v\x1b")
	msg = mpwire.AppendString(msg, "str\x1b\u009bval\u202e")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keys.msgpack"), msg, 0o644))
	return dir
}

// Names and strings from files reach standard output and standard error
// escaped, as strconv.Quote writes them between quotes: nothing a file
// holds commands the terminal (issue 41, item 7).
func TestControlCharactersEscaped(t *testing.T) {
	dir := hostileNames(t)
	for _, c := range []struct {
		args           []string
		code           int
		stdout, stderr string
	}{
		{[]string{"inspect", "esc.npz"}, 0, `esc.npz: npz, 2 arrays and 1 other value
  evil\x1b]52;c;aGk=\a:
    dtype     <i8 (int, 8 bytes each, byte order little)
    shape     (3,): 3 elements, 24 bytes
    min, max  0, 2
    mean      1
    first     [0 1 2]
  rlo\u202egnp:
    dtype     <i8 (int, 8 bytes each, byte order little)
    shape     (2,): 2 elements, 16 bytes
    min, max  0, 1
    mean      0.5
    first     [0 1]
  notes\x1b[31m.txt:
    not read  npybridge: not an array: member "notes\x1b[31m.txt" is not a NAME.npy file
`, ""},
		{[]string{"show", "esc.npz"}, 0, `evil\x1b]52;c;aGk=\a: <i8 (3,)
[0 1 2]

rlo\u202egnp: <i8 (2,)
[0 1]
`, ""},
		{[]string{"show", "esc.npz:nosuch"}, 1, "", `ndpack: esc.npz: no array "nosuch"; it holds evil\x1b]52;c;aGk=\a, rlo\u202egnp, notes\x1b[31m.txt` + "\n"},
		{[]string{"show", "--csv", "esc.npz"}, 1, "", `ndpack: esc.npz: CSV holds one array, and this holds 2 (evil\x1b]52;c;aGk=\a, rlo\u202egnp): pick one as FILE:NAME` + "\n"},
		{[]string{"convert", "esc.npz", "out.msgpack"}, 0, "", `ndpack: warning: esc.npz: a member that is not an .npy file left out (notes\x1b[31m.txt): ndpack converts the arrays` + "\n"},
		{[]string{"diff", "esc.npz", "keys.msgpack"}, 1, `evil\x1b]52;c;aGk=\a: only in esc.npz
rlo\u202egnp: only in esc.npz
k\x1b[2J: only in keys.msgpack
`, ""},
		{[]string{"inspect", "bel.npy"}, 0, `bel.npy: npy 1.0, 1 array
  dtype     [('a\x07b', '<f8'), ('c', '<i4')] (record, 12 bytes each, byte order not applicable, outside YEP-110's standard kinds)
  shape     (2,): 2 elements, 24 bytes
  fields
    a\ab      <f8 at byte 0
      min, max  0, 0
      mean      0
      NaNs      0
    c         <i4 at byte 8
      min, max  0, 0
      mean      0
  first     (0., 0)
            (0., 0)
`, ""},
		{[]string{"show", "bel.npy"}, 0, "[(0., 0) (0., 0)]\n", ""},
		{[]string{"show", "--csv", "bel.npy"}, 0, "a\\x07b,c\n0.0,0\n0.0,0\n", ""}, // as Python's repr escapes BEL
		{[]string{"show", "--field", "nosuch", "bel.npy"}, 1, "", `ndpack: bel.npy: ndarray: index out of range: record dtype [('a\x07b', '<f8'), ('c', '<i4')] has no field "nosuch"` + "\n"},
		{[]string{"convert", "--field", "nosuch", "bel.npy", "f.npy"}, 1, "", `ndpack: bel.npy: --field nosuch: no such field; the records have a\ab, c` + "\n"},
		{[]string{"inspect", "keys.msgpack"}, 0, `keys.msgpack: msgpack (ext 110), 1 array and 1 other value
  k\x1b[2J:
    dtype     <i8 (int, 8 bytes each, byte order little)
    shape     (3,): 3 elements, 24 bytes
    min, max  0, 2
    mean      1
    first     [0 1 2]
  v\x1b:
    value     "str\u001b\u009bval\u202e"
`, ""},
		{[]string{"show", "str.npy"}, 0, `['x\x9b[2J\u202ey']` + "\n", ""},
		{[]string{"inspect", "str.npy"}, 0, `str.npy: npy 1.0, 1 array
  dtype     <U7 (unicode, 28 bytes each, byte order little, outside YEP-110's standard kinds)
  shape     (1,): 1 element, 28 bytes
  first     ['x\x9b[2J\u202ey']
`, ""},
		{[]string{"show", "--csv", "str.npy"}, 0, `x\x9b[2J\u202ey` + "\n", ""},
		// numpy's repr escapes what Python does not print: C1, U+202E.
		{[]string{"inspect", "rec.npy"}, 0, `rec.npy: npy 1.0, 1 array
  dtype     [('s', '<U2')] (record, 8 bytes each, byte order not applicable, outside YEP-110's standard kinds)
  shape     (1,): 1 element, 8 bytes
  fields
    s         <U2 at byte 0
  first     ('\x9b\u202e',)
`, ""},
		{[]string{"show", "rec.npy"}, 0, `[('\x9b\u202e',)]` + "\n", ""},
		// The last line of defence: whatever made the message.
		{[]string{"inspect", "no\x1b[2Jsuch.npy"}, 1, "", `ndpack: no\x1b[2Jsuch.npy: no such file or directory` + "\n"},
		{[]string{"show", "no\u202esuch.npy"}, 1, "", `ndpack: no\u202esuch.npy: no such file or directory` + "\n"},
		{[]string{"convert", "--to", "npz", "bel.npy", "x\x1b]0;title\a.npy"}, 2, "", `ndpack convert: --to npz contradicts the extension of "x\x1b]0;title\a.npy" (npy); rename the file or drop --to` + "\nRun 'ndpack help convert' for usage.\n"},
		// JSON escapes what encoding/json would leave raw: C1, U+202E.
		{[]string{"show", "--json", "str.npy"}, 0, `{"dtype":"<U7","shape":[1],"values":["x\u009b[2J\u202ey"]}` + "\n", ""},
		{[]string{"show", "--json", "esc.npz"}, 0, `{"evil\u001b]52;c;aGk=\u0007":{"dtype":"<i8","shape":[3],"values":[0,1,2]},"rlo\u202egnp":{"dtype":"<i8","shape":[2],"values":[0,1]}}` + "\n", ""},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cmd := exec.Command(ndpackBin, c.args...)
			cmd.Dir = dir
			r := runCmd(t, cmd, nil)
			if r.code != c.code || r.stdout != c.stdout || r.stderr != c.stderr {
				t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s\nwant exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr, c.code, c.stdout, c.stderr)
			}
		})
	}
	// inspect --json of each: no raw control character on any line, and
	// the names read back as they are in the files.
	for _, name := range []string{"esc.npz", "bel.npy", "keys.msgpack", "str.npy"} {
		cmd := exec.Command(ndpackBin, "inspect", "--json", name)
		cmd.Dir = dir
		r := runCmd(t, cmd, nil)
		for _, line := range strings.Split(r.stdout, "\n") {
			if peertext.Line(line) != line {
				t.Errorf("inspect --json %s: raw control characters in %q", name, line)
			}
		}
		var rep []struct {
			Arrays []struct{ Name, Value string }
		}
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rep))
		if name == "esc.npz" && (len(rep[0].Arrays) != 3 || rep[0].Arrays[0].Name != "evil\x1b]52;c;aGk=\a" || rep[0].Arrays[1].Name != "rlo\u202egnp") {
			t.Errorf("inspect --json esc.npz: %s", r.stdout)
		}
		if name == "keys.msgpack" && (len(rep[0].Arrays) != 2 || rep[0].Arrays[1].Value != "str\x1b\u009bval\u202e") { // a JSON value (#43)
			t.Errorf("inspect --json keys.msgpack: %s", r.stdout)
		}
	}
}

// The progress line names its input as messages do: a file name's
// controls escaped, a URL without its user or query.
func TestProgressLabelEscaped(t *testing.T) {
	var stderr bytes.Buffer
	p := env{stderr: &stderr}.startProgress("convert evil\x1b]52;c;aGk=\a.npz and http://u:hunter2@h/a.npy?X-Amz-Signature=s", 2048, true)
	p.add(1024)
	p.show()
	got := stderr.String()
	want := "\rndpack: convert evil\\x1b]52;c;aGk=\\a.npz and http://h/a.npy: 1.0 KiB of 2.0 KiB (50%), "
	if !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "/s\x1b[K") {
		t.Errorf("progress %q, want %q...", got, want)
	}
}
