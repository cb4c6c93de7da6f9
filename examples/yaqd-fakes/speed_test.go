package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"

	"github.com/ndpack/ndpack/yaq"
	"github.com/stretchr/testify/require"
)

// A fake with 100 idle clients (each shaken hands and called once) holds
// under 32 MiB of heap, the daemon and the clients together.
func TestHundredIdleClients(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	addr, _, _ := startAt(t, "fake-camera", "cam", "")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ctx := context.Background()
	for range 100 {
		c, err := yaq.Dial(ctx, addr, nil)
		require.NoError(t, err)
		defer c.Close()
		var busy bool
		require.NoError(t, c.Call(ctx, "busy", nil, &busy))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("heap in use %.1f MiB, %.1f KiB more for 100 idle clients", float64(after.HeapInuse)/(1<<20),
		(float64(after.HeapInuse)-float64(before.HeapInuse))/1024)
	require.Less(t, after.HeapInuse, uint64(32<<20))
}

// BenchmarkGetMeasured2048GoVsPython times get_measured of a 2048x2048
// image from the Go fake-camera and from the Python one (NDPACK_YAQ_SRC),
// through the same Go client, and reports the ratio.
func BenchmarkGetMeasured2048GoVsPython(b *testing.B) {
	src := os.Getenv("NDPACK_YAQ_SRC")
	if src == "" {
		b.Skip("NDPACK_YAQ_SRC does not name the Python yaq sources")
	}
	b.Setenv("XDG_DATA_HOME", b.TempDir())
	const aoi = "aoi_width = 2048\naoi_height = 2048\n"
	port := freePortB(b)
	cfg := filepath.Join(b.TempDir(), "cam.toml")
	require.NoError(b, os.WriteFile(cfg, []byte(fmt.Sprintf("[cam]\nport = %d\nhost = \"127.0.0.1\"\n%s", port, aoi)), 0o644))
	py := exec.Command("/usr/bin/python3", "-c", "from yaqd_fakes._fake_camera import FakeCamera; FakeCamera.main()", "--config", cfg)
	py.Env = append(os.Environ(), "PYTHONPATH="+strings.Join([]string{filepath.Join(src, "fa"), filepath.Join(src, "yaqd-core"),
		filepath.Join(src, "yaqc"), filepath.Join(src, "yaqd-fakes")}, ":"))
	require.NoError(b, py.Start())
	b.Cleanup(func() { py.Process.Kill(); py.Wait() })
	goPort := freePortB(b)
	goCfg := filepath.Join(b.TempDir(), "gocam.toml")
	require.NoError(b, os.WriteFile(goCfg, []byte(fmt.Sprintf("[cam]\nport = %d\nhost = \"127.0.0.1\"\n%s", goPort, aoi)), 0o644))
	go run("yaqd-fakes", []string{"fake-camera", "--config", goCfg}, os.Stdout, os.Stderr)
	time_ := func(port int) time.Duration {
		ctx := context.Background()
		var c *yaq.Client
		var err error
		for range 200 {
			if c, err = yaq.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", port), nil); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		require.NoError(b, err)
		defer c.Close()
		var id int
		require.NoError(b, c.Call(ctx, "measure", nil, &id))
		for busy := true; busy; time.Sleep(10 * time.Millisecond) {
			require.NoError(b, c.Call(ctx, "busy", nil, &busy))
		}
		var buf yaq.ResultBuffer
		best := time.Duration(1 << 62)
		for range 5 {
			var m map[string]any
			begin := time.Now()
			require.NoError(b, c.CallReusing(ctx, "get_measured", nil, &m, &buf))
			best = min(best, time.Since(begin))
		}
		return best
	}
	// The baseline of the Go daemon: a user-space echo of the image's
	// bytes, each whole message read into a reused buffer and sent back
	// (benchbase.MessageEchoer), best of 5 as the calls are.
	echo := benchbase.MessageEchoer(b, 2048*2048*2)
	echoTime := func() time.Duration {
		best := time.Duration(1 << 62)
		for range 5 {
			begin := time.Now()
			echo()
			best = min(best, time.Since(begin))
		}
		return best
	}
	for b.Loop() {
		goT, pyT, echoT := time_(goPort), time_(port), echoTime()
		b.ReportMetric(float64(goT.Microseconds())/1000, "go-ms")
		b.ReportMetric(float64(pyT.Microseconds())/1000, "python-ms")
		b.ReportMetric(float64(pyT)/float64(goT), "x-faster")
		b.ReportMetric(float64(goT)/float64(echoT), "x-echo")
	}
}

func freePortB(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(b, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
