package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// liveTraitsSrc returns the yaq-traits sources and the Python yaq sources
// the live yaq-traits test runs with: NDPACK_YAQ_TRAITS when set, else the
// traits/ folder of NDPACK_YAQ_SRC when it holds yaq_traits (so that the
// one variable the other live tests need runs this one too); "" when the
// test has nothing to run.
func liveTraitsSrc(traits, src string) (string, string) {
	if src == "" {
		return "", ""
	}
	if traits == "" {
		if st, err := os.Stat(filepath.Join(src, "traits", "yaq_traits")); err == nil && st.IsDir() {
			traits = filepath.Join(src, "traits")
		}
	}
	if traits == "" {
		return "", ""
	}
	return traits, src
}

func TestYaqTraitsSrcDefault(t *testing.T) {
	src := t.TempDir()
	tr, s := liveTraitsSrc("", src)
	assert.Equal(t, "", tr, "no traits/ beside the sources")
	assert.Equal(t, "", s)
	tr, s = liveTraitsSrc("/elsewhere/yaq-traits", "")
	assert.Equal(t, "", tr, "yaq-traits without the sources (fastavro) cannot run")
	assert.Equal(t, "", s)
	tr, s = liveTraitsSrc("/elsewhere/yaq-traits", src)
	assert.Equal(t, "/elsewhere/yaq-traits", tr)
	assert.Equal(t, src, s)
	assert.NoError(t, os.MkdirAll(filepath.Join(src, "traits", "yaq_traits"), 0o755))
	tr, s = liveTraitsSrc("", src)
	assert.Equal(t, filepath.Join(src, "traits"), tr)
	assert.Equal(t, src, s)
	tr, _ = liveTraitsSrc("/elsewhere/yaq-traits", src)
	assert.Equal(t, "/elsewhere/yaq-traits", tr, "NDPACK_YAQ_TRAITS wins")
}

// configPorts returns the ports a yaq config file sets (its port = N
// lines, one per daemon).
func configPorts(path string) ([]int, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ports []int
	for _, m := range portLine.FindAllStringSubmatch(string(text), -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, err
		}
		ports = append(ports, n)
	}
	if len(ports) == 0 {
		return nil, fmt.Errorf("%s sets no port", path)
	}
	return ports, nil
}

var portLine = regexp.MustCompile(`(?m)^\s*port\s*=\s*(\d+)\s*$`)

// portsFree reports whether a listener could bind each of ports on
// 127.0.0.1 now.
func portsFree(ports []int) bool {
	for _, p := range ports {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// runPortBound runs run, whose daemons listen on the fixed ports, up to
// attempts times: again only when its output says a daemon found its port
// in use, each time once the ports are free (waiting at most wait). The
// yaq-python tests' ports (38001-39446) lie in Linux's ephemeral range,
// where the loopback connections of tests running beside them (go test
// ./..., other packages' floods of clients) come and go; any other failure
// is returned at once.
func runPortBound(ports []int, attempts int, wait time.Duration, run func() (string, error)) (string, error) {
	var out string
	var err error
	for i := 0; i < attempts; i++ {
		for deadline := time.Now().Add(wait); !portsFree(ports) && time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		out, err = run()
		if err == nil || !strings.Contains(out, "address already in use") {
			return out, err
		}
	}
	return out, err
}

// pytestCounts reads the passed and failed counts of pytest -q's summary
// line ("3 passed", "1 failed, 2 passed in 0.5s").
func pytestCounts(out string) (passed, failed int) {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	for _, m := range pytestCount.FindAllStringSubmatch(last, -1) {
		n, _ := strconv.Atoi(m[1])
		switch m[2] {
		case "passed":
			passed = n
		case "failed", "error", "errors":
			failed += n
		}
	}
	return passed, failed
}

var pytestCount = regexp.MustCompile(`(\d+) (passed|failed|errors?)\b`)

func TestConfigPorts(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "config.toml")
	require.NoError(t, os.WriteFile(f, []byte("[a]\nport=38001\nhost = \"x\"\n\n[b]\n  port = 38002\nmax_port = 5\n"), 0o644))
	ports, err := configPorts(f)
	require.NoError(t, err)
	assert.Equal(t, []int{38001, 38002}, ports)
	require.NoError(t, os.WriteFile(f, []byte("[a]\nhost = \"x\"\n"), 0o644))
	_, err = configPorts(f)
	assert.Error(t, err)
}

func TestPytestCounts(t *testing.T) {
	for _, c := range []struct {
		out            string
		passed, failed int
	}{
		{"..                  [100%]\n3 passed in 1.20s\n", 3, 0},
		{"F.\nFAILED x.py::a - E\n1 failed, 2 passed in 0.5s", 2, 1},
		{"E\n1 passed, 2 errors in 0.3s\n", 1, 2},
		{"no tests ran in 0.01s\n", 0, 0},
	} {
		p, f := pytestCounts(c.out)
		assert.Equal(t, c.passed, p, c.out)
		assert.Equal(t, c.failed, f, c.out)
	}
}

// A run that met a taken port is run again once the port is free; any
// other failure, or the last attempt's, is returned as it came.
func TestRunPortBound(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	assert.False(t, portsFree([]int{port}))

	calls := 0
	_, err = runPortBound([]int{port}, 3, time.Millisecond, func() (string, error) {
		calls++
		return "bind: address already in use", errors.New("exit status 1")
	})
	assert.Error(t, err)
	assert.Equal(t, 3, calls, "a port that stays taken fails after the attempts")

	l.Close()
	assert.True(t, portsFree([]int{port}))
	calls = 0
	out, err := runPortBound([]int{port}, 3, 10*time.Second, func() (string, error) {
		calls++
		if calls == 1 { // someone takes the port for a while
			held, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			require.NoError(t, err)
			time.AfterFunc(200*time.Millisecond, func() { held.Close() })
			return "listen tcp :1: bind: address already in use", errors.New("exit status 1")
		}
		assert.True(t, portsFree([]int{port}), "run again only once the port is free")
		return "1 passed", nil
	})
	assert.NoError(t, err)
	assert.Equal(t, "1 passed", out)
	assert.Equal(t, 2, calls)

	calls = 0
	_, err = runPortBound([]int{port}, 3, 10*time.Second, func() (string, error) {
		calls++
		return "AssertionError", errors.New("exit status 1")
	})
	assert.Error(t, err)
	assert.Equal(t, 1, calls, "a real failure is not retried")
}
