package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// tempFiles lists the hidden temporary files left in dir.
func tempFiles(t *testing.T, dir string) []string {
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		if strings.Contains(e.Name(), ".ndpack-tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

// Ctrl-C or SIGTERM during a conversion removes the temporary file and
// exits as shells expect.
func TestConvertInterrupted(t *testing.T) {
	for sig, code := range map[syscall.Signal]int{syscall.SIGINT: 130, syscall.SIGTERM: 143} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "slow.npz")
			cmd := exec.Command(ndpackBin, "convert", "--from", "npy", "-", out)
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			require.NoError(t, cmd.Start())
			// A header announcing 8 MB, and less than that: the command
			// waits for the rest.
			stdin.Write(npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{1 << 20}))
			stdin.Write(make([]byte, 4096))
			deadline := time.Now().Add(5 * time.Second)
			for len(tempFiles(t, dir)) == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			require.NotEmpty(t, tempFiles(t, dir), "the conversion started")
			require.NoError(t, cmd.Process.Signal(sig))
			err = cmd.Wait()
			stdin.Close()
			var ee *exec.ExitError
			require.ErrorAs(t, err, &ee)
			assert.Equal(t, code, ee.ExitCode())
			assert.Empty(t, tempFiles(t, dir), "no temporary file left")
			assert.NoFileExists(t, out)
		})
	}
}

// Replacing OUT keeps what cp keeps; errors about OUT name OUT.
func TestConvertOutputFiles(t *testing.T) {
	dir := t.TempDir()
	in, a := smallNPY(t, dir, "a.npy")

	private := filepath.Join(dir, "private.msgpack")
	require.NoError(t, os.WriteFile(private, []byte("old"), 0o600))
	require.Equal(t, 0, cli(t, nil, "convert", in, private).code)
	fi, _ := os.Stat(private)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	real := filepath.Join(dir, "real.npy")
	require.NoError(t, os.WriteFile(real, []byte("old"), 0o644))
	link := filepath.Join(dir, "link.npy")
	require.NoError(t, os.Symlink("real.npy", link))
	require.Equal(t, 0, cli(t, nil, "convert", private, link).code)
	li, _ := os.Lstat(link)
	assert.True(t, li.Mode()&os.ModeSymlink != 0, "the link stays a link")
	got, _ := npybridge.ReadFile(real)
	assert.True(t, a.Equal(got), "the link's target holds the array")

	ro := filepath.Join(dir, "ro.msgpack")
	require.NoError(t, os.WriteFile(ro, []byte("keep"), 0o444))
	r := cli(t, nil, "convert", in, ro)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: "+ro+": is read-only; make it writable or remove it first\n", r.stderr)
	assert.Equal(t, "keep", string(readFile(t, ro)))

	r = cli(t, nil, "convert", in, filepath.Join(dir, "nodir", "x.msgpack"))
	assert.Equal(t, "ndpack: "+filepath.Join(dir, "nodir", "x.msgpack")+": its directory does not exist\n", r.stderr)
	outdir := filepath.Join(dir, "outdir.msgpack")
	require.NoError(t, os.Mkdir(outdir, 0o755))
	r = cli(t, nil, "convert", in, outdir)
	assert.Equal(t, "ndpack: "+outdir+": is a directory\n", r.stderr)
	assert.Empty(t, tempFiles(t, dir))
}

func TestConvertFlagsAndHints(t *testing.T) {
	dir := t.TempDir()
	in, _ := smallNPY(t, dir, "a.npy")
	r := cli(t, nil, "convert", "--compress", in, filepath.Join(dir, "a.msgpack"))
	assert.Equal(t, 2, r.code)
	assert.Contains(t, r.stderr, "--compress deflates the members of an .npz or a Zarr store's chunks; OUT is msgpack")
	r = cli(t, nil, "convert", "--name", "x", in, filepath.Join(dir, "a.msgpack"))
	assert.Equal(t, 2, r.code)
	r = cli(t, nil, "convert", "--member", "x", in, filepath.Join(dir, "a.msgpack"))
	assert.Equal(t, 2, r.code)

	// Library advice is given as the flag a shell user sets.
	s, _ := ndarray.New(ndarray.MustParseDType("|S2"), []int{1}, []byte("ab"))
	sin := filepath.Join(dir, "s.npy")
	require.NoError(t, npybridge.WriteFile(sin, s))
	r = cli(t, nil, "convert", sin, filepath.Join(dir, "s.msgpack"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "--allow-nonstandard")
	assert.NotContains(t, r.stderr, "Options.")

	// A file whose content is not what its name says gets a hint.
	mislabeled := filepath.Join(dir, "really-npy.msgpack")
	require.NoError(t, os.WriteFile(mislabeled, readFile(t, in), 0o644))
	r = cli(t, nil, "convert", mislabeled, filepath.Join(dir, "b.npz"))
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, "looks like an NPY file: use --from npy")
	r = cli(t, nil, "convert", "--from", "npy", mislabeled, filepath.Join(dir, "b.npz"))
	assert.Equal(t, 0, r.code, r.stderr)

	// npz errors name the file once.
	trunc := filepath.Join(dir, "trunc.npz")
	require.NoError(t, os.WriteFile(trunc, []byte("PK\x03\x04 cut"), 0o644))
	r = cli(t, nil, "convert", trunc, filepath.Join(dir, "t.mpk"))
	assert.Equal(t, "ndpack: "+trunc+": npybridge: not an npz archive: 8 bytes is shorter than a zip end record (22)\n", r.stderr)
}

// The conversions users try: .npy into .npz, one member out of an .npz,
// the one array of a msgpack map into .npy; numpy reads the results as
// np.save and np.savez would write them.
func TestConvertNewPaths(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os, zipfile
d = sys.argv[1]
np.save(os.path.join(d, "frame.npy"), np.arange(12, dtype="<f4").reshape(3, 4))
np.savez(os.path.join(d, "run.npz"), image=np.arange(6, dtype=">u2").reshape(2, 3), spectrum=np.linspace(0, 1, 5),
         fimage=np.asfortranarray(np.arange(6, dtype="<i4").reshape(2, 3)))
with zipfile.ZipFile(os.path.join(d, "run.npz"), "a") as z:
    z.writestr("readme.txt", "notes")
`, nil, dir)
	p := func(name string) string { return filepath.Join(dir, name) }
	for _, args := range [][]string{
		{"convert", p("frame.npy"), p("frame.npz")},
		{"convert", "--name", "img", "--compress", p("frame.npy"), p("named.npz")},
		{"convert", p("run.npz:image"), p("image.npy")},
		{"convert", "--member", "fimage", p("run.npz"), p("fimage.npy")},
		{"convert", "--member", "spectrum", p("run.npz"), p("spectrum.msgpack")},
		{"convert", p("spectrum.msgpack"), p("spectrum-back.npy")},
	} {
		r := cli(t, nil, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
	}
	// A map of one array becomes an .npy; a map of more needs a name.
	one := p("one.mpk")
	require.Equal(t, 0, cli(t, nil, "convert", p("frame.npz"), one).code)
	r := cli(t, nil, "convert", one, p("one.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	r = cli(t, nil, "convert", p("run.npz"), p("all.npy"))
	assert.Equal(t, 1, r.code)
	// The readme.txt beside the arrays is left out.
	assert.Equal(t, "ndpack: "+p("run.npz")+": 3 arrays (image, spectrum, fimage): an .npy holds one; pick it as IN:NAME or with --member\n", r.stderr)
	r = cli(t, nil, "convert", p("run.npz:nope"), p("x.npy"))
	assert.Contains(t, r.stderr, `no array "nope"; it holds image, spectrum, fimage, readme.txt`)

	out := pypeer.Run(t, `
import io, json, os
import numpy as np
d = sys.argv[1]
def saved(a):
    f = io.BytesIO(); np.save(f, a); return f.getvalue()
def same(path, a):
    return open(os.path.join(d, path), "rb").read() == saved(a)
res = {}
z = np.load(os.path.join(d, "frame.npz"))
res["npy->npz"] = z.files == ["frame"] and np.array_equal(z["frame"], np.load(os.path.join(d, "frame.npy")))
z = np.load(os.path.join(d, "named.npz"))
res["--name --compress"] = z.files == ["img"] and z["img"].dtype.str == "<f4"
run = np.load(os.path.join(d, "run.npz"))
res["member->npy"] = same("image.npy", run["image"])
res["fortran member->npy"] = same("fimage.npy", np.ascontiguousarray(run["fimage"]))
res["member->msgpack->npy"] = same("spectrum-back.npy", run["spectrum"])
res["one-array map->npy"] = same("one.npy", np.load(os.path.join(d, "frame.npy")))
print(json.dumps(res))
`, nil, dir)
	var res map[string]bool
	require.NoError(t, json.Unmarshal(out, &res))
	for k, v := range res {
		assert.True(t, v, k)
	}
	assert.Len(t, res, 6)
}

// On a terminal, a long conversion shows progress and erases it at the
// end; elsewhere it is silent.
func TestConvertProgress(t *testing.T) {
	dir := t.TempDir()
	a, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), 1<<20)
	in := filepath.Join(dir, "a.npy")
	require.NoError(t, npybridge.WriteFile(in, a))
	slow := &slowReader{r: bytes.NewReader(readFile(t, in)), delay: 2 * time.Millisecond}
	var stderr bytes.Buffer
	e := env{stdin: slow, stdout: io.Discard, stderr: &stderr, terminal: true, progressAfter: time.Millisecond}
	require.Equal(t, 0, run(e, []string{"convert", "--from", "npy", "--to", "npz", "-", filepath.Join(dir, "a.npz")}), stderr.String())
	assert.Regexp(t, `\rndpack: convert -: \d+(\.\d)? [KM]iB, [\d.]+ [KM]?i?B/s\x1b\[K`, stderr.String())
	assert.True(t, strings.HasSuffix(stderr.String(), "\r\x1b[K"), "the line is erased: %q", stderr.String())

	stderr.Reset()
	e.stdin = &slowReader{r: bytes.NewReader(readFile(t, in)), delay: 2 * time.Millisecond}
	require.Equal(t, 0, run(e, []string{"convert", "--quiet", "--from", "npy", "--to", "npz", "-", filepath.Join(dir, "b.npz")}))
	assert.Empty(t, stderr.String())
}

// slowReader hands out small reads with a pause between them.
type slowReader struct {
	r     io.Reader
	delay time.Duration
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(s.delay)
	return s.r.Read(p[:min(len(p), 64<<10)])
}

// smallNPY writes the <i2 array [1 2 3] as dir/name.
func smallNPY(t *testing.T, dir, name string) (string, *ndarray.Array) {
	t.Helper()
	a, _ := ndarray.FromSlice([]int16{1, 2, 3})
	p := filepath.Join(dir, name)
	require.NoError(t, npybridge.WriteFile(p, a))
	return p, a
}

// --append adds frames to an .npy that numpy loads after each.
func TestConvertAppend(t *testing.T) {
	dir := t.TempDir()
	frames := filepath.Join(dir, "frames.npy")
	for i := 0; i < 3; i++ {
		a, _ := ndarray.FromSlice([]float32{float32(i), float32(10 * i)})
		in := filepath.Join(dir, fmt.Sprintf("frame%d.msgpack", i))
		b, _ := ext110.Marshal(a)
		require.NoError(t, os.WriteFile(in, b, 0o644))
		r := cli(t, nil, "convert", "--append", in, frames)
		require.Equal(t, 0, r.code, r.stderr)
	}
	block, _ := ndarray.FromRows([][]float32{{3, 30}, {4, 40}})
	bin := filepath.Join(dir, "block.npy")
	require.NoError(t, npybridge.WriteFile(bin, block))
	require.Equal(t, 0, cli(t, nil, "convert", "--append", bin, frames).code)
	got, err := npybridge.ReadFile(frames)
	require.NoError(t, err)
	rows, _ := ndarray.Rows[float32](got)
	assert.Equal(t, [][]float32{{0, 0}, {1, 10}, {2, 20}, {3, 30}, {4, 40}}, rows)

	wrong, _ := ndarray.FromSlice([]float32{1, 2, 3})
	win := filepath.Join(dir, "wrong.npy")
	require.NoError(t, npybridge.WriteFile(win, wrong))
	r := cli(t, nil, "convert", "--append", win, frames)
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: "+frames+": npybridge: invalid array: cannot append an array of shape (3,) to rows of shape (2,)\n", r.stderr)
	r = cli(t, nil, "convert", "--append", win, filepath.Join(dir, "x.msgpack"))
	assert.Equal(t, 2, r.code)
}

// Files in the Python services' dialects convert and inspect like ext 110
// ones: a msgpack-numpy file becomes the .npy np.save writes, and an npz
// travels through an OpenPI map and back.
func TestConvertDialects(t *testing.T) {
	corpus := "../../../shared/corpus/dialects"
	raw := sharedfiles.ReadFile(t, filepath.Join(corpus, "expected.json"))
	var expected map[string]struct {
		Arrays map[string]struct {
			NPYSHA256 string `json:"npy_sha256"`
		} `json:"arrays"`
	}
	require.NoError(t, json.Unmarshal(raw, &expected))
	dir := t.TempDir()
	for _, name := range []string{"mn_lef8_3x4", "mn_bei2_2x3x4", "mn_legacy_str_keys_f8", "mn_fortran_f8", "pi_lef4_scalar", "pi_beu8_5", "mn_leU3"} {
		out := filepath.Join(dir, name+".npy")
		r := cli(t, nil, "convert", filepath.Join(corpus, name+".msgpack"), out)
		require.Equal(t, 0, r.code, "%s: %s", name, r.stderr)
		s := sha256.Sum256(readFile(t, out))
		assert.Equal(t, expected[name].Arrays[""].NPYSHA256, hex.EncodeToString(s[:]), "%s -> .npy as np.save writes it", name)
	}
	r := cli(t, nil, "inspect", filepath.Join(corpus, "pi_policy_request.msgpack"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "pi_policy_request.msgpack: msgpack (openpi), 2 arrays and 3 other values")
	assert.Contains(t, r.stdout, "  prompt:\n    value     \"pick up the cube\"\n  step:\n    value     17\n  flags:\n    value     [true,false,null]\n")

	a, _ := ndarray.FromSlice([]float32{1, 2, 3, 4}, 2, 2)
	b, _ := ndarray.FromSlice([]int16{5, 6})
	npz := filepath.Join(dir, "run.npz")
	require.NoError(t, npybridge.WriteNPZFile(npz, []npybridge.NamedArray{{Name: "a", Array: a}, {Name: "b", Array: b}}, false))
	for _, to := range []string{"openpi", "msgpack-numpy"} {
		mp := filepath.Join(dir, to+".msgpack")
		r := cli(t, nil, "convert", "--to", to, npz, mp)
		require.Equal(t, 0, r.code, r.stderr)
		back := filepath.Join(dir, to+".npz")
		r = cli(t, nil, "convert", mp, back)
		require.Equal(t, 0, r.code, r.stderr)
		z, err := npybridge.ReadOptions{}.ReadNPZFile(back)
		require.NoError(t, err)
		require.Len(t, z, 2)
		assert.True(t, a.Equal(z[0].Array) && b.Equal(z[1].Array), to)
		r = cli(t, nil, "inspect", mp)
		assert.Contains(t, r.stdout, "msgpack ("+to+"), 2 arrays")
	}
}

// --name names the member even when the array was picked from an archive
// (it was ignored for run.npz:image and --member).
func TestConvertNameRenamesAPickedMember(t *testing.T) {
	dir := t.TempDir()
	a, _ := ndarray.FromSlice([]float64{1, 2})
	src := filepath.Join(dir, "run.npz")
	require.NoError(t, npybridge.WriteNPZFile(src, []npybridge.NamedArray{{Name: "image", Array: a}, {Name: "other", Array: a}}, false))
	for _, args := range [][]string{{src + ":image"}, {"--member", "image", src}} {
		out := filepath.Join(dir, "o.npz")
		r := cli(t, nil, append(append([]string{"convert", "--name", "foo"}, args...), out)...)
		require.Equal(t, 0, r.code, r.stderr)
		z, err := npybridge.OpenNPZFile(out)
		require.NoError(t, err)
		assert.Equal(t, []string{"foo"}, z.Names(), "%v", args)
		z.Close()
		os.Remove(out)
	}
}
