package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/internal/corpus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ndpackBin is the ndpack command built once for the tests, so that they run
// what users run: exit statuses, standard error, files on disk.
var ndpackBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ndpack-test-")
	if err != nil {
		panic(err)
	}
	ndpackBin = filepath.Join(dir, "ndpack")
	if out, err := exec.Command("go", "build", "-o", ndpackBin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

func cli(t *testing.T, stdin []byte, args ...string) result {
	t.Helper()
	return runCmd(t, exec.Command(ndpackBin, args...), stdin)
}

// runCmd runs cmd with stdin and returns its exit status and output; a
// command that could not be run fails t.
func runCmd(t *testing.T, cmd *exec.Cmd, stdin []byte) result {
	t.Helper()
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// corpusFile copies a corpus file into dir under a name with the extension
// the command expects.
func corpusFile(t *testing.T, dir string, f corpus.File, name string) string {
	b, err := corpus.Read(conformance.FS(), f)
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

func readFile(t *testing.T, p string) []byte {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func TestConvertValidCorpus(t *testing.T) {
	m, err := corpus.Load(conformance.FS())
	require.NoError(t, err)
	for _, c := range m.Valid {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			var flags []string
			if !c.Standard {
				flags = []string{"--allow-nonstandard"}
			}
			ext := c.Files[len(c.Files)-1]
			require.Equal(t, "ext110", ext.Format)
			wantExt, _ := corpus.Read(conformance.FS(), ext)
			wantNPY, _ := corpus.Read(conformance.FS(), c.Files[0])
			for _, f := range c.Files[:len(c.Files)-1] {
				in := corpusFile(t, dir, f, "in.npy")
				out := filepath.Join(dir, "out.msgpack")
				r := cli(t, nil, append([]string{"convert", in, out}, flags...)...)
				require.Equal(t, 0, r.code, "%s: %s", f.Path, r.stderr)
				assert.Equal(t, wantExt, readFile(t, out), "%s -> msgpack", f.Path)
			}
			in := corpusFile(t, dir, ext, "in.ext")
			out := filepath.Join(dir, "out.npy")
			r := cli(t, nil, "convert", "--from", "msgpack", in, out)
			require.Equal(t, 0, r.code, r.stderr)
			assert.Equal(t, wantNPY, readFile(t, out), "msgpack -> npy")

			if !c.Standard {
				// Without the flag the non-standard kinds stay out of ext 110.
				r := cli(t, nil, "convert", corpusFile(t, dir, c.Files[0], "x.npy"), filepath.Join(dir, "x.msgpack"))
				assert.Equal(t, 1, r.code)
				assert.Contains(t, r.stderr, "--allow-nonstandard")
				assert.NoFileExists(t, filepath.Join(dir, "x.msgpack"))
			}
		})
	}
}

func TestConvertToleratedCorpus(t *testing.T) {
	m, err := corpus.Load(conformance.FS())
	require.NoError(t, err)
	cases := map[string]corpus.Case{}
	for _, c := range m.Valid {
		cases[c.Name] = c
	}
	for _, f := range m.Tolerated {
		t.Run(f.Name, func(t *testing.T) {
			dir := t.TempDir()
			c := cases[f.Equals]
			from, to, want := "npy", "out.msgpack", c.Files[len(c.Files)-1]
			if f.Format == "ext110" {
				from, to, want = "msgpack", "out.npy", c.Files[0]
			}
			in := corpusFile(t, dir, f, "in.bin")
			r := cli(t, nil, "convert", "--from", from, in, filepath.Join(dir, to))
			require.Equal(t, 0, r.code, r.stderr)
			wantBytes, _ := corpus.Read(conformance.FS(), want)
			assert.Equal(t, wantBytes, readFile(t, filepath.Join(dir, to)))
		})
	}
}

func TestConvertNegativeCorpus(t *testing.T) {
	m, err := corpus.Load(conformance.FS())
	require.NoError(t, err)
	for _, f := range m.Negative {
		t.Run(f.Name, func(t *testing.T) {
			dir := t.TempDir()
			from, to := "npy", "out.msgpack"
			if f.Format == "ext110" {
				from, to = "msgpack", "out.npy"
			}
			in := corpusFile(t, dir, f, "in.bin")

			// No output file is left behind.
			r := cli(t, nil, "convert", "--from", from, in, filepath.Join(dir, to))
			assert.Equal(t, 1, r.code, "%s (%s) was accepted", f.Path, f.Why)
			assert.Regexp(t, `^ndpack: \S*in\.bin: .+\n$`, r.stderr, "one line naming the file")
			entries, _ := os.ReadDir(dir)
			assert.Len(t, entries, 1, "only the input remains")

			// An existing output file is untouched.
			existing := filepath.Join(dir, to)
			require.NoError(t, os.WriteFile(existing, []byte("precious"), 0o644))
			r = cli(t, nil, "convert", "--from", from, in, existing)
			assert.Equal(t, 1, r.code)
			assert.Equal(t, "precious", string(readFile(t, existing)))
		})
	}
}

func TestConvertStreams(t *testing.T) {
	m, _ := corpus.Load(conformance.FS())
	var c corpus.Case
	for _, v := range m.Valid {
		if v.Name == "f8_le_3x4" {
			c = v
		}
	}
	npy, _ := corpus.Read(conformance.FS(), c.Files[0])
	ext, _ := corpus.Read(conformance.FS(), c.Files[len(c.Files)-1])
	r := cli(t, npy, "convert", "--from", "npy", "--to", "msgpack", "-", "-")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, string(ext), r.stdout)
	r = cli(t, ext, "convert", "-", "-", "--to", "npy", "--from", "mpk")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Equal(t, string(npy), r.stdout)
	r = cli(t, npy[:50], "convert", "--from", "npy", "--to", "msgpack", "-", "-")
	assert.Equal(t, 1, r.code)
	assert.Empty(t, r.stdout, "nothing is written before the input is known good")
}

func TestNPZThroughMsgpack(t *testing.T) {
	dir := t.TempDir()
	m, _ := corpus.Load(conformance.FS())
	// Build an .npz from two corpus arrays via msgpack, and back.
	var doc bytes.Buffer
	doc.Write([]byte{0x82})
	for _, name := range []string{"f8_le_3x4", "nonstandard_S5"} {
		for _, c := range m.Valid {
			if c.Name == name {
				ext, _ := corpus.Read(conformance.FS(), c.Files[len(c.Files)-1])
				doc.Write(append([]byte{0xa0 | byte(len(name))}, name...))
				doc.Write(ext)
			}
		}
	}
	mpk := filepath.Join(dir, "pair.mpk")
	require.NoError(t, os.WriteFile(mpk, doc.Bytes(), 0o644))
	for _, compress := range []string{"--compress=false", "--compress"} {
		npz := filepath.Join(dir, "pair.npz")
		r := cli(t, nil, "convert", compress, mpk, npz)
		require.Equal(t, 0, r.code, r.stderr)
		back := filepath.Join(dir, "back.mpk")
		r = cli(t, nil, "convert", "--allow-nonstandard", npz, back)
		require.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, doc.Bytes(), readFile(t, back), "npz %s round trip", compress)
	}
}

// TestHostileMsgpack: counts that claim far more than the file holds are
// refused before the msgpack library could size anything from them.
func TestHostileMsgpack(t *testing.T) {
	dir := t.TempDir()
	for name, doc := range map[string][]byte{
		"array claim in a map value": []byte("\x81\xa1a\xdd\xdd\xdd\xdd\xdd\x00"),
		"map claim":                  []byte("\xdf\xff\xff\xff\xff"),
		"two documents":              []byte("\x80\x80"),
		"not arrays":                 []byte("\x81\xa1a\x01"),
	} {
		p := filepath.Join(dir, "hostile.mpk")
		require.NoError(t, os.WriteFile(p, doc, 0o644))
		r := cli(t, nil, "convert", p, filepath.Join(dir, "out.npz"))
		assert.Equal(t, 1, r.code, "%s: %s", name, r.stderr)
		assert.NoFileExists(t, filepath.Join(dir, "out.npz"))
		r = cli(t, nil, "inspect", p)
		if name == "not arrays" {
			// A message, listed by its values (#43).
			assert.Equal(t, 0, r.code, "%s: %s", name, r.stderr)
			assert.Equal(t, p+": msgpack, 0 arrays and 1 other value\n  a:\n    value     1\n", r.stdout)
			continue
		}
		assert.Equal(t, 1, r.code, "%s: %s", name, r.stderr)
	}
}

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	m, _ := corpus.Load(conformance.FS())
	var special corpus.Case
	for _, c := range m.Valid {
		if c.Name == "f8_be_special" {
			special = c
		}
	}
	p := corpusFile(t, dir, special.Files[0], "special.npy")
	r := cli(t, nil, "inspect", p)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "dtype     >f8 (float, 8 bytes each, byte order big)")
	assert.Contains(t, r.stdout, "shape     (13,): 13 elements, 104 bytes")
	assert.Contains(t, r.stdout, "min, max  -Inf, +Inf")
	assert.Contains(t, r.stdout, "NaNs      4")

	r = cli(t, nil, "inspect", "--json", p)
	require.Equal(t, 0, r.code, r.stderr)
	var reports []map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &reports))
	arr := reports[0]["arrays"].([]any)[0].(map[string]any)
	assert.Equal(t, ">f8", arr["dtype"])
	assert.Equal(t, []any{13.0}, arr["shape"])
	st := arr["stats"].(map[string]any)
	assert.Equal(t, "-Inf", st["min"])
	assert.Equal(t, 4.0, st["nan_count"])

	ext := corpusFile(t, dir, special.Files[len(special.Files)-1], "special.bin") // no extension: sniffed
	r = cli(t, nil, "inspect", ext)
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "special.bin: msgpack (ext 110), 1 array")

	r = cli(t, nil, "inspect", filepath.Join(dir, "nope.npy"))
	assert.Equal(t, 1, r.code)
	assert.True(t, strings.HasPrefix(r.stderr, "ndpack: "), r.stderr)
}

func TestUsageAndHelp(t *testing.T) {
	for _, args := range [][]string{{}, {"bogus"}, {"convert", "a.npy"}, {"convert", "--bogus", "a.npy", "b.mpk"},
		{"convert", "a.npy", "b.txt"}, {"convert", "--compress", "a.npz", "b.npy"}, {"inspect"}, {"demo", "extra"},
		{"version", "extra"}} {
		r := cli(t, nil, args...)
		assert.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
		assert.Contains(t, r.stderr, "ndpack", "%v", args)
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"help", "convert"}, {"convert", "--help"}, {"inspect", "-h"}, {"demo", "--help"}} {
		r := cli(t, nil, args...)
		assert.Equal(t, 0, r.code, "%v", args)
		assert.Contains(t, r.stdout, "Usage: ndpack", "%v", args)
	}
	r := cli(t, nil, "help", "convert")
	assert.Contains(t, r.stdout, "Examples:")
	for _, v := range []string{"--version", "version"} {
		r = cli(t, nil, v)
		assert.Equal(t, 0, r.code)
		assert.Regexp(t, `^ndpack \S.*, built with go1\.\d+`, r.stdout)
		assert.Contains(t, r.stdout, "YEP-110 array interface version 3")
	}
}

func TestDemo(t *testing.T) {
	r := cli(t, nil, "demo")
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "converted   sample.npy     -> from-npy.msgpack identical to sample.msgpack")
	assert.Contains(t, r.stdout, "plain msgpack array of the same 4096 floats: 36867 bytes; ext 110 is 11.0% smaller")
	dir := strings.TrimSuffix(strings.SplitN(strings.SplitN(r.stdout, "\n", 2)[0], " in ", 2)[1], " (removed when done; --keep keeps it)")
	_, err := os.Stat(dir)
	assert.True(t, os.IsNotExist(err), "the folder it names is gone, as it says: %v", err)

	r = cli(t, nil, "demo", "--keep")
	require.Equal(t, 0, r.code, r.stderr)
	dir = strings.TrimSuffix(strings.SplitN(strings.SplitN(r.stdout, "\n", 2)[0], " in ", 2)[1], " (kept)")
	defer os.RemoveAll(dir)
	names, err := os.ReadDir(dir)
	require.NoError(t, err, "--keep keeps the folder it names")
	assert.GreaterOrEqual(t, len(names), 4)
}
