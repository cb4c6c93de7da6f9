package main

import (
	"context"
	"net"
	"os"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/yaqrpc"
	"github.com/stretchr/testify/require"
)

// childEnv makes the test binary, run again, the daemon listening on the
// address it names, at an open-file limit of 64
// (TestSensorAtFileLimitChild).
const childEnv = "FAKESENSOR_TEST_FILE_LIMIT_ADDR"

// TestSensorAtFileLimitChild is the child of TestSensorAtFileLimit.
func TestSensorAtFileLimitChild(t *testing.T) {
	hostile.FileLimitChild(t, childEnv, "TestSensorAtFileLimit", func(addr string) int {
		return run([]string{"-addr", addr, "-max-connections", "-1"}, os.Stderr)
	})
}

// At its open-file limit (64 descriptors here, the connection cap off)
// the daemon waits and serves again once connections close, instead of
// log.Fatal: the test opens connections until the daemon says it ran out,
// closes them, and calls it.
func TestSensorAtFileLimit(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	hostile.FileLimit[*yaqrpc.Client]{
		Child: "TestSensorAtFileLimitChild", Env: childEnv, Value: addr,
		Addr:   addr,
		Client: hostile.NewClient(func(ctx context.Context, addr string) (*yaqrpc.Client, error) { return yaqrpc.Dial(ctx, addr, nil) }, (*yaqrpc.Client).Call),
		Name:   "fakesensor",
		Stop: func(ctx context.Context, _ int, c *yaqrpc.Client) error {
			return c.Call(ctx, "shutdown", nil, nil)
		},
		Stopper: "shutdown",
	}.Run(t)
}
