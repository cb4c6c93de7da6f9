package yaqrpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/benchbase"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manyCalls has clients goroutines each call echo calls times with a 1 MiB
// array, and checks what comes back.
func manyCalls(t testing.TB, addr string, clients, calls int) {
	manyCallsReusing(t, addr, clients, calls, false)
}

// manyCallsReusing is manyCalls with each client reading its answers into
// one ResultBuffer when reuse is set.
func manyCallsReusing(t testing.TB, addr string, clients, calls int, reuse bool) {
	a, _ := ndarray.New(ndarray.DTypeOf[uint8](), []int{1 << 20}, benchbase.Data(1<<20))
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := Dial(context.Background(), addr, nil)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			var buf ResultBuffer
			for range calls {
				var back *ndarray.Array
				var err error
				if reuse {
					err = c.CallReusing(context.Background(), "echo", []any{a}, &back, &buf)
				} else {
					err = c.Call(context.Background(), "echo", []any{a}, &back)
				}
				if err != nil {
					errs <- err
					return
				}
				if len(back.Data) != len(a.Data) || back.Data[12345] != a.Data[12345] {
					errs <- fmt.Errorf("echo changed the array")
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// manyRawEchoes is the baseline: the same bytes over raw connections.
func manyRawEchoes(t testing.TB, addr string, clients, calls int) {
	data := benchbase.Data(1 << 20)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer conn.Close()
			back := make([]byte, len(data))
			for range calls {
				done := make(chan error, 1)
				go func() { _, err := conn.Write(data); done <- err }()
				if _, err := io.ReadFull(conn, back); err != nil {
					t.Error(err)
					return
				}
				<-done
			}
		}()
	}
	wg.Wait()
}

// manyModes are the configurations the many-clients benchmarks run in: the
// defaults (every array in new memory on both sides), the server's
// ReuseRequestBuffers, and that with the clients' CallReusing as well.
var manyModes = []struct {
	name                       string
	serverReuses, clientReuses bool
}{{"default", false, false}, {"server-reuses", true, false}, {"both-reuse", true, true}}

// BenchmarkManyClients is 64 clients making 200 calls each with a 1 MiB
// array; compare its MB/s with BenchmarkManyRawEchoes.
func BenchmarkManyClients(b *testing.B) {
	for _, mode := range manyModes {
		b.Run(mode.name, func(b *testing.B) {
			addr, _ := testServer(b, 0, func(s *Server) { s.ReuseRequestBuffers = mode.serverReuses })
			b.SetBytes(2 * 64 * 200 << 20)
			for b.Loop() {
				manyCallsReusing(b, addr, 64, 200, mode.clientReuses)
			}
		})
	}
}

// BenchmarkManyClientsVsRaw runs the 64 x 200 calls and 64 raw echo
// streams moving the same bytes alternately, in each of manyModes. Its
// x-baseline is the time ratio, the inverse of the throughput ratio the
// target is set in (at least 0.7, so at most 1.43 here).
func BenchmarkManyClientsVsRaw(b *testing.B) {
	for _, mode := range manyModes {
		b.Run(mode.name, func(b *testing.B) {
			addr, _ := testServer(b, 0, func(s *Server) { s.ReuseRequestBuffers = mode.serverReuses })
			raw := benchbase.EchoServer(b, false)
			benchbase.Versus(b,
				func() { manyCallsReusing(b, addr, 64, 200, mode.clientReuses) },
				func() { manyRawEchoes(b, raw, 64, 200) })
		})
	}
}

func BenchmarkManyRawEchoes(b *testing.B)         { benchManyRaw(b, false) }
func BenchmarkManyRawEchoesBuffered(b *testing.B) { benchManyRaw(b, true) }

func benchManyRaw(b *testing.B, buffered bool) {
	addr := benchbase.EchoServer(b, buffered)
	b.SetBytes(2 * 64 * 200 << 20)
	for b.Loop() {
		manyRawEchoes(b, addr, 64, 200)
	}
}

// TestEchoServerChild is the server process TestManyClientsMemory measures:
// it serves echo and prints its address.
func TestEchoServerChild(t *testing.T) {
	if os.Getenv("NDPACK_ECHO_SERVER") == "" {
		t.Skip("run by TestManyClientsMemory")
	}
	srv := &Server{}
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.Handle("echo", func(_ context.Context, r *Request) (any, error) { v, _ := r.Param(0, "value"); return v, nil })
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fmt.Println(l.Addr())
	go srv.Serve(l)
	io.Copy(io.Discard, os.Stdin) // until the parent closes it
}

// 64 clients with 1 MiB arrays keep the daemon under 64 MiB + 2 x 64 MiB,
// and leave no goroutine behind when they are gone.
func TestManyClientsMemory(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestEchoServerChild$")
	cmd.Env = append(os.Environ(), "NDPACK_ECHO_SERVER=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	require.NoError(t, cmd.Start())
	defer func() { stdin.Close(); cmd.Wait() }()
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	manyCalls(t, strings.TrimSpace(addr), 64, 20)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	var hwm int64
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			hwm, _ = strconv.ParseInt(f[1], 10, 64)
		}
	}
	t.Logf("daemon peak RSS with 64 clients of 1 MiB arrays: %d MiB", hwm>>10)
	if !raceEnabled {
		assert.Less(t, hwm<<10, int64(64<<20+2*64<<20))
	}

	// In process: every connection goroutine ends with its client; with
	// reused request buffers the answers are still right.
	before := runtime.NumGoroutine()
	srvAddr, _ := testServer(t, 0)
	manyCalls(t, srvAddr, 64, 5)
	reuseAddr, _ := testServer(t, 0, func(s *Server) { s.ReuseRequestBuffers = true })
	manyCalls(t, reuseAddr, 16, 5)
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before+2, "the servers' accept loops only")
}
