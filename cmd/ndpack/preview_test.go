package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sgrCodes = regexp.MustCompile("\x1b\\[[0-9;]*m")

// previewLines returns the lines of inspect's output that draw, with the
// colour codes taken out.
func previewLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(sgrCodes.ReplaceAllString(out, ""), "\n") {
		if strings.ContainsAny(l, "▀▄▁▂▃▄▅▆▇█") {
			lines = append(lines, l)
		}
	}
	return lines
}

func previewFiles(t *testing.T) string {
	pypeer.Require(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import numpy as np
d = sys.argv[1]
y, x = np.mgrid[0:120, 0:200]
np.save(d + '/img.npy', np.asfortranarray(np.sin(x / 20.0) * np.cos(y / 15.0)).astype('>f4'))
np.save(d + '/spectrum.npy', np.exp(-((np.arange(500) - 250) / 40.0) ** 2))
np.savez(d + '/run.npz', frame=np.arange(12, dtype='<u2').reshape(3, 4), names=np.array(['a', 'b']))
`, nil, dir)
	return dir
}

func TestInspectPreview(t *testing.T) {
	dir := previewFiles(t)
	r := cli(t, nil, "inspect", "--preview", "--width", "42", filepath.Join(dir, "img.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	lines := previewLines(r.stdout)
	// 200 x 120 fitted to 40 columns (42 less the indent): 40 x 24 pixels,
	// 12 lines of half blocks, below the statistics.
	require.Len(t, lines, 12, r.stdout)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "  "), "%q", l)
		assert.Equal(t, 42, utf8.RuneCountInString(l), "%q", l)
	}
	assert.Less(t, strings.Index(r.stdout, "first "), strings.Index(r.stdout, "▀"), "the preview comes after the statistics")
	assert.Contains(t, r.stdout, "\x1b[38;2;", "24-bit colour")

	// A 1-D array is a sparkline; the curve's peak is in the middle.
	r = cli(t, nil, "inspect", "--preview", "--width", "52", filepath.Join(dir, "spectrum.npy"))
	require.Equal(t, 0, r.code, r.stderr)
	lines = previewLines(r.stdout)
	require.Len(t, lines, 1, r.stdout)
	spark := []rune(strings.TrimPrefix(lines[0], "  "))
	require.Len(t, spark, 50)
	assert.Equal(t, '▁', spark[0])
	assert.Equal(t, '█', spark[24])

	// Members are indented under their names; what cannot be drawn is not.
	r = cli(t, nil, "inspect", "--preview", "--width", "30", filepath.Join(dir, "run.npz"))
	require.Equal(t, 0, r.code, r.stderr)
	lines = previewLines(r.stdout)
	require.NotEmpty(t, lines)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "    "), "%q", l)
		assert.LessOrEqual(t, utf8.RuneCountInString(l), 30)
	}

	// COLUMNS gives the width when --width does not.
	cmd := exec.Command(ndpackBin, "inspect", "--preview", filepath.Join(dir, "img.npy"))
	cmd.Env = append(os.Environ(), "COLUMNS=22")
	r = runCmd(t, cmd, nil)
	require.Equal(t, 0, r.code, r.stderr)
	for _, l := range previewLines(r.stdout) {
		assert.Equal(t, 22, utf8.RuneCountInString(l), "%q", l)
	}

	// Not with --json, and not when stdout is not a terminal.
	r = cli(t, nil, "inspect", "--json", "--preview", filepath.Join(dir, "img.npy"))
	assert.Equal(t, 2, r.code)
	r = cli(t, nil, "inspect", filepath.Join(dir, "img.npy"))
	assert.Empty(t, previewLines(r.stdout))
}

// On a terminal a 2-D array is drawn without asking; a 1-D one is not,
// and --preview=false draws nothing.
func TestInspectPreviewOnATerminal(t *testing.T) {
	dir := previewFiles(t)
	inspect := func(args ...string) string {
		var out, errb bytes.Buffer
		code := run(env{stdin: bytes.NewReader(nil), stdout: &out, stderr: &errb, stdoutTerminal: true}, append([]string{"inspect", "--width", "30"}, args...))
		require.Equal(t, 0, code, errb.String())
		return out.String()
	}
	assert.Len(t, previewLines(inspect(filepath.Join(dir, "img.npy"))), 9) // 28 x 17 pixels
	assert.Empty(t, previewLines(inspect(filepath.Join(dir, "spectrum.npy"))))
	assert.Empty(t, previewLines(inspect("--preview=false", filepath.Join(dir, "img.npy"))))
}
