package openpi

import (
	"bufio"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// The live tests run openpi's own Python peers (openpi-client's
// WebsocketClientPolicy, openpi's WebsocketPolicyServer, on websockets
// 11 or later) when NDPACK_OPENPI_SRC names a folder that holds their
// sources: see the README's testing section. They are never part of the
// repository, so without the variable the tests skip, in CI too.
const peersVar = "NDPACK_OPENPI_SRC"

// pythonPath finds, under NDPACK_OPENPI_SRC, the folders that hold the
// packages openpi_client, openpi (with openpi/serving) and websockets,
// and returns them as a PYTHONPATH; it skips t when the variable is not
// set, and fails it when the sources are not all there.
func pythonPath(t testing.TB) string {
	t.Helper()
	root := os.Getenv(peersVar)
	if root == "" {
		t.Skipf("%s is not set: the live tests against openpi's Python peers do not run", peersVar)
	}
	pypeer.Require(t)
	p, err := findPeers(root)
	if err != nil {
		t.Fatalf("%s=%s: %v", peersVar, root, err)
	}
	return p
}

var (
	peersOnce sync.Once
	peersPath string
	peersErr  error
)

func findPeers(root string) (string, error) {
	peersOnce.Do(func() {
		want := map[string]string{
			"openpi_client/websocket_client_policy.py":  "",
			"openpi/serving/websocket_policy_server.py": "",
			"websockets/sync/client.py":                 "",
		}
		base := strings.Count(filepath.Clean(root), string(filepath.Separator))
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			if strings.Count(path, string(filepath.Separator))-base > 5 || d.Name() == ".git" {
				return filepath.SkipDir
			}
			for rel, found := range want {
				if found == "" {
					if _, err := os.Stat(filepath.Join(path, rel)); err == nil {
						want[rel] = path
					}
				}
			}
			return nil
		})
		var dirs []string
		for rel, dir := range want {
			if dir == "" {
				peersErr = &os.PathError{Op: "find", Path: rel, Err: os.ErrNotExist}
				return
			}
			if !slicesContains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		peersPath = strings.Join(dirs, string(os.PathListSeparator))
	})
	return peersPath, peersErr
}

func slicesContains(s []string, v string) bool {
	for _, e := range s {
		if e == v {
			return true
		}
	}
	return false
}

// python returns a command running script under Debian's Python with the
// peers on its path.
func python(t testing.TB, script string, args ...string) *exec.Cmd {
	cmd := exec.Command(pypeer.Python, append([]string{"-u", "-c", script}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pythonPath(t))
	return cmd
}

// startPython starts script, waits for the first line it prints and
// returns it with the process's stdin and stdout; the process is killed
// when the test ends.
func startPython(t testing.TB, script string, args ...string) (string, *os.File, *bufio.Reader) {
	t.Helper()
	cmd := python(t, script, args...)
	stdin, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdin = stdin
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdin.Close()
	t.Cleanup(func() {
		w.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the Python peer printed nothing: %v\n%s", err, stderr.String())
	}
	return strings.TrimSpace(line), w, br
}
