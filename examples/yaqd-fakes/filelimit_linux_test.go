package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/yaq"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary, run again, the daemon of the config file
// it names, at an open-file limit of 64 (TestFakesAtFileLimitChild).
const childEnv = "YAQD_FAKES_TEST_FILE_LIMIT_CONFIG"

// TestFakesAtFileLimitChild is the child of TestFakesAtFileLimit.
func TestFakesAtFileLimitChild(t *testing.T) {
	hostile.FileLimitChild(t, childEnv, "TestFakesAtFileLimit", func(cfg string) int {
		return run("yaqd-fakes", []string{"fake-camera", "--config", cfg}, os.Stdout, os.Stderr)
	})
}

// At its open-file limit (64 descriptors here, the connection cap set
// above it in the config) the daemon waits and serves again once
// connections close, instead of exiting 1: the test opens connections
// until the daemon says it ran out, closes them, and calls it; then SIGTERM
// ends it with status 0.
func TestFakesAtFileLimit(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // the child's state file, not the user's
	port := freePort(t)
	cfg := filepath.Join(t.TempDir(), "cam.toml")
	require.NoError(t, os.WriteFile(cfg, []byte(fmt.Sprintf("[cam]\nport = %d\nhost = \"127.0.0.1\"\nmax_connections = 1000\n", port)), 0o644))
	hostile.FileLimit[*yaq.Client]{
		Child: "TestFakesAtFileLimitChild", Env: childEnv, Value: cfg,
		Addr:   fmt.Sprintf("127.0.0.1:%d", port),
		Client: hostile.NewClient(func(ctx context.Context, addr string) (*yaq.Client, error) { return yaq.Dial(ctx, addr, nil) }, (*yaq.Client).Call),
		Name:   "cam",
		Stop: func(_ context.Context, pid int, _ *yaq.Client) error {
			return syscall.Kill(pid, syscall.SIGTERM)
		},
		Stopper: "SIGTERM",
	}.Run(t)
}
