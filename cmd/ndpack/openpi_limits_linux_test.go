//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/openpi"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// peakRSS returns the peak resident memory of process pid so far.
func peakRSS(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// TestOpenpiServeHostileObservationsRSS: four clients each sending, at
// once, a 60 MiB observation of empty lists (2.5 GB once decoded, before
// the bounds) keep "ndpack openpi serve" under 512 MiB of resident memory,
// and a robot's calls meanwhile and after are answered: before, one such
// observation took the server to 2.84 GB, and four killed it under an
// 8 GiB address-space limit.
func TestOpenpiServeHostileObservationsRSS(t *testing.T) {
	if raceDetector {
		t.Skip("the race detector multiplies memory")
	}
	cmd, url, _ := startServeCmd(t, "--addr", "127.0.0.1:0", "--echo")
	n := 60<<20 - 8 // lists, in a message of 60 MiB
	msg := append([]byte{0x81, 0xa1, 'a', 0xdd, byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, bytes.Repeat([]byte{0x90}, n)...)
	var wg sync.WaitGroup
	answers := make([]string, 4)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = sendHostile(url, msg)
		}()
	}
	robot := func() time.Duration {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c, err := openpi.Dial(ctx, url, nil)
		require.NoError(t, err, "a robot's connection")
		defer c.Close()
		img, _ := ndarray.Zeros(ndarray.MustParseDType("|u1"), 224, 224, 3)
		_, err = c.Infer(ctx, map[string]any{"image": img, "prompt": "fold the towel"})
		require.NoError(t, err, "a robot's call")
		return time.Since(start)
	}
	during := robot()
	wg.Wait()
	after := robot()
	rss := peakRSS(t, cmd.Process.Pid)
	t.Logf("four 60 MiB observations of empty lists at once: peak RSS %d MiB; a robot's call took %v during, %v after", rss>>20, during, after)
	for _, a := range answers {
		assert.Regexp(t, "too large|memory", a, "a hostile observation's answer")
	}
	assert.Less(t, rss, int64(512<<20), "peak RSS")
}

// sendHostile connects to url, sends msg as an observation, and returns
// the server's answer (a text message saying why it was refused), or why
// there was none.
func sendHostile(url string, msg []byte) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return err.Error()
	}
	defer conn.CloseNow()
	if _, _, err := conn.Read(ctx); err != nil { // the metadata
		return err.Error()
	}
	go conn.Write(ctx, websocket.MessageBinary, msg) // the answer may come before all is sent
	_, text, err := conn.Read(ctx)
	if err != nil {
		return err.Error()
	}
	return string(text)
}
