// Package pypeer runs the reference peers, NumPy and msgpack-python under
// Debian's /usr/bin/python3, for the interop tests of the module.
//
// A test that needs them calls Run. Where they are missing the test is
// skipped, unless the CI environment variable is set: there a missing peer
// is a failure, so that CI can never pass by testing nothing.
package pypeer

import (
	"bufio"
	"bytes"
	_ "embed"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// Python is the interpreter the peers are installed for (Debian's
// python3-numpy and python3-msgpack).
const Python = "/usr/bin/python3"

// Reference is the YEP-110 reference code (pack_ndarray, ext_hook), which
// Run puts before every script.
//
//go:embed yep110.py
var Reference string

// Helpers is Python for the interop tests. little_endian_bytes(arr) gives
// the array's row-major bytes in little-endian order by byte operations
// only (no value conversion), so NaN payloads and long-double padding
// survive: tests compare values through it without trusting either codec.
// random_array(rng, typestr, shape) fills an array with random bits (0 or 1
// for bools).
const Helpers = `
import numpy as np

def random_array(rng, typestr, shape):
    dt = np.dtype(typestr)
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == 'b':
        return rng.integers(0, 2, n).astype(dt).reshape(shape)
    return np.frombuffer(rng.bytes(n * dt.itemsize), dtype=dt).reshape(shape)

def little_endian_bytes(arr):
    arr = np.ascontiguousarray(arr)
    if arr.dtype.byteorder == '>':
        arr = arr.byteswap().view(arr.dtype.newbyteorder('<'))
    return arr.tobytes()
`

var probe = sync.OnceValue(func() error {
	return exec.Command(Python, "-c", "import numpy, msgpack").Run()
})

// Require skips t, or fails it when CI is set, if the peers are missing.
func Require(t testing.TB) {
	t.Helper()
	if err := probe(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Python peers are required in CI: %s -c 'import numpy, msgpack': %v "+
				"(apt-get install -y python3-numpy python3-msgpack)", Python, err)
		}
		t.Skipf("Python peers not available (%v); install python3-numpy and python3-msgpack", err)
	}
}

// Run runs script (after the reference code) with stdin as its standard
// input and args as sys.argv[1:], and returns its standard output. A
// non-zero exit fails the test with the script's standard error.
func Run(t testing.TB, script string, stdin []byte, args ...string) []byte {
	t.Helper()
	Require(t)
	cmd := exec.Command(Python, append([]string{"-c", Reference + "\n" + script}, args...)...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python peer failed: %v\n%s", err, stderr.String())
	}
	return out
}

// Start starts script (after the reference code) in the background with
// args as sys.argv[1:], waits for the first line it prints and returns it
// (a daemon prints its port). The process is killed when the test ends.
func Start(t testing.TB, script string, args ...string) string {
	t.Helper()
	Require(t)
	cmd := exec.Command(Python, append([]string{"-u", "-c", Reference + "\n" + script}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("python peer printed nothing: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(line)
}

// RequireModule skips t, or fails it when CI is set, if the Python module
// (from the Debian package pkg) is missing.
func RequireModule(t testing.TB, module, pkg string) {
	t.Helper()
	Require(t)
	if err := exec.Command(Python, "-c", "import "+module).Run(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v (apt-get install -y %s)", module, err, pkg)
		}
		t.Skipf("%s not available (%v); install %s", module, err, pkg)
	}
}
