package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// The edges a newcomer hit (#43): each is held here to what they expected.

// render --size 0x0 is a size like any other, refused as 0x500 is, not
// the library's default in disguise.
func TestRenderSizeRefusedWhole(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os
np.save(os.path.join(sys.argv[1], "l.npy"), np.arange(10.0))
`, nil, dir)
	in, out := filepath.Join(dir, "l.npy"), filepath.Join(dir, "l.svg")
	for _, size := range []string{"0x0", "0x500", "500x0", "199x120", "200x119", "-800x-450", "65537x400"} {
		r := cli(t, nil, "render", "--size", size, in, out)
		assert.Equal(t, 2, r.code, "--size %s: %s", size, r.stderr)
		assert.Contains(t, r.stderr, "ndpack render: --size "+size+": a plot of ", size)
		assert.Contains(t, r.stderr, "want 200x120 to 65536x65536\n", size)
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "--size %s wrote %s", size, out)
	}
	r := cli(t, nil, "render", "--size", "200x120", in, out)
	assert.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, string(readFile(t, out)), `width="200" height="120"`)
}

// A usage error quotes a bounded excerpt of an argument, however long: a
// 100 KB --dtype, --rows, --size, flag or command name is not echoed.
func TestUsageErrorsQuoteExcerpts(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 100000)
	spaced := strings.Repeat("1 ", 50000)
	in := filepath.Join(dir, "in.npy")
	for _, args := range [][]string{
		{"create", "--dtype", long, "--shape", "3", filepath.Join(dir, "o.npy")},
		{"convert", "--astype", long, in, filepath.Join(dir, "o.npy")},
		{"convert", "--casting", long, "--astype", "f4", in, filepath.Join(dir, "o.npy")},
		{"show", "--rows", spaced, in},
		{"show", "--rows", long, in},
		{"render", "--size", long, in, filepath.Join(dir, "o.svg")},
		{"show", "--" + long, in},
		{"diff", "--rtol", long, in, in},
		{long},
		{"help", long},
	} {
		r := cli(t, nil, args...)
		assert.Equal(t, 2, r.code, "%.40s: %.300s", strings.Join(args, " "), r.stderr)
		assert.Less(t, len(r.stderr), 600, "%.40s: %.600s", strings.Join(args, " "), r.stderr)
		assert.Contains(t, r.stderr, " bytes)", "%.40s: says how long the argument was: %.600s", strings.Join(args, " "), r.stderr)
	}
}

// A mistyped command or flag is answered with the one it most likely
// meant; a word near none is not.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cnvert", "a.npy", "b.npy"}, `ndpack: unknown command "cnvert" (did you mean convert?); run 'ndpack help'` + "\n"},
		{[]string{"shwo"}, `ndpack: unknown command "shwo" (did you mean show?); run 'ndpack help'` + "\n"},
		{[]string{"insp", "a.npy"}, `ndpack: unknown command "insp" (did you mean inspect?); run 'ndpack help'` + "\n"},
		{[]string{"help", "dif"}, `ndpack: unknown command "dif" (did you mean diff?); run 'ndpack help'` + "\n"},
		{[]string{"--verison"}, `ndpack: unknown command "--verison" (did you mean version?); run 'ndpack help'` + "\n"},
		{[]string{"xyzzy"}, `ndpack: unknown command "xyzzy"; run 'ndpack help'` + "\n"},
		{[]string{"show", "--precison", "3", "a.npy"}, "ndpack show: flag provided but not defined: -precison (did you mean --precision?)\nRun 'ndpack help show' for usage.\n"},
		{[]string{"diff", "--equal-nans", "a.npy", "b.npy"}, "ndpack diff: flag provided but not defined: -equal-nans (did you mean --equal-nan?)\nRun 'ndpack help diff' for usage.\n"},
		{[]string{"convert", "--astpye", "f4", "a.npy", "b.npy"}, "ndpack convert: flag provided but not defined: -astpye (did you mean --astype?)\nRun 'ndpack help convert' for usage.\n"},
		{[]string{"show", "--zzz", "a.npy"}, "ndpack show: flag provided but not defined: -zzz\nRun 'ndpack help show' for usage.\n"},
	} {
		r := cli(t, nil, c.args...)
		assert.Equal(t, 2, r.code, "%v", c.args)
		assert.Equal(t, c.want, r.stderr, "%v", c.args)
	}
}

// An output that cannot be created is named as given, never by the
// temporary file written beside it.
func TestOutputErrorNamesOutput(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc takes no new file on Linux")
	}
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os
np.save(os.path.join(sys.argv[1], "l.npy"), np.arange(10.0))
`, nil, dir)
	r := cli(t, nil, "convert", filepath.Join(dir, "l.npy"), "/proc/o.msgpack")
	assert.Equal(t, 1, r.code)
	assert.Equal(t, "ndpack: /proc/o.msgpack: cannot create a file in /proc: no such file or directory\n", r.stderr)
}

// show's and diff's help say that they read URLs.
func TestHelpSaysURLs(t *testing.T) {
	for _, cmd := range []string{"show", "diff"} {
		r := cli(t, nil, "help", cmd)
		require.Equal(t, 0, r.code)
		assert.Contains(t, strings.Join(strings.Fields(r.stdout), " "), "http://, https:// or s3://BUCKET/KEY, read by Range requests", cmd)
		assert.Contains(t, r.stdout, "  --concurrency N", cmd)
	}
}

// A record dtype of thousands of fields (46 KB of text, which numpy's repr
// prints on one line) is cut in the lines show, diff and inspect print for
// a person, saying how many fields it has; --json keeps it whole.
func TestLongRecordDTypeCut(t *testing.T) {
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np, os
d = sys.argv[1]
np.save(os.path.join(d, "wide.npy"), np.zeros(2, np.dtype([('field_%04d' % i, '<f8') for i in range(2000)])))
np.save(os.path.join(d, "wide2.npy"), np.zeros(2, np.dtype([('f_%04d' % i, '<f8') for i in range(2000)])))
np.save(os.path.join(d, "l.npy"), np.arange(3))
`, nil, dir)
	p := func(n string) string { return filepath.Join(dir, n) }
	r := cli(t, nil, "show", "--max-header-size", "100000", p("wide.npy"), p("l.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	head, _, _ := strings.Cut(r.stdout, "\n")
	assert.Less(t, len(head), 400)
	assert.Contains(t, head, "... (2000 fields, 16000 bytes each) (2,)")
	r = cli(t, nil, "diff", "--max-header-size", "100000", p("wide.npy"), p("wide2.npy"))
	require.Equal(t, 1, r.code, r.stderr)
	assert.Less(t, len(r.stdout), 800)
	assert.Contains(t, r.stdout, "... (2000 fields, 16000 bytes each) vs [('f_0000'")
	r = cli(t, nil, "inspect", "--max-header-size", "100000", p("wide.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "  dtype ") {
			assert.Less(t, len(line), 400, line[:100])
		}
	}
	r = cli(t, nil, "show", "--json", "--max-header-size", "100000", p("wide.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	assert.Contains(t, r.stdout, "('field_1999', '<f8')]", "JSON keeps the dtype whole")
}
