package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every hostile message, as a .msgpack file, ends convert and inspect with
// the one-line error and exit status 1, quickly and in bounded memory;
// inspect lists the values of one that is a well-formed message holding
// no array, as quickly and in as little memory.
func TestHostileMsgpackFiles(t *testing.T) {
	dir := t.TempDir()
	for i, in := range hostile.Inputs() {
		src := filepath.Join(dir, "hostile"+string(rune('a'+i))+".msgpack")
		require.NoError(t, os.WriteFile(src, in.Bytes, 0o644))
		for _, args := range [][]string{
			{"convert", src, filepath.Join(dir, "out.npz")},
			{"convert", src, filepath.Join(dir, "out.npy")},
			{"inspect", src},
			{"inspect", "--json", src},
		} {
			want := 1
			if args[0] == "inspect" && in.Name == "request of 3 million one-entry maps" {
				want = 0
			}
			t.Run(in.Name+"/"+strings.Join(args[:len(args)-1], " "), func(t *testing.T) {
				// In process, to count what is allocated.
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				start := hostile.CPUTime()
				var stderr bytes.Buffer
				code := run(env{stdin: bytes.NewReader(nil), stdout: io.Discard, stderr: &stderr}, args)
				took := hostile.CPUTime() - start
				runtime.ReadMemStats(&after)
				assert.Equal(t, want, code, stderr.String())
				maxTime := hostile.MaxTime
				if raceDetector {
					// The race detector slows the walk 2 to 20 times (Go's
					// documentation); inspect's walk of 3 million maps took
					// 5.0 s of CPU under it, 1 s without.
					maxTime *= 10
				}
				assert.Less(t, took, maxTime)
				// Reading the file costs its size once.
				assert.LessOrEqual(t, after.TotalAlloc-before.TotalAlloc, hostile.MaxAlloc(in), "bytes allocated")

				// As users run it: one line, and no output file.
				r := cli(t, nil, args...)
				if want == 0 {
					assert.Equal(t, 0, r.code, r.stderr)
					assert.Empty(t, r.stderr)
					return
				}
				assert.Equal(t, 1, r.code)
				assert.Regexp(t, `^ndpack: [^\n]*\n$`, r.stderr)
				assert.NotContains(t, r.stderr, "goroutine")
				if args[0] == "convert" {
					assert.NoFileExists(t, args[2])
				}
			})
		}
	}
}
