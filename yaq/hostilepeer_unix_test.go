//go:build unix

package yaq

import (
	"bytes"
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cpuTime is the CPU time this process has used, user and system.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// A handshake whose meta map comes as 93,000 one-entry blocks, one per
// 3-4 byte frame, costs the daemon CPU linear in its bytes (it took about
// 68 s decoding again after every frame), is answered, and a normal client
// on another connection is answered within its 2 s deadline meanwhile.
func TestDaemonValueInManyFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("a stress test")
	}
	_, addr := nestDaemon(t)
	good, err := Dial(context.Background(), addr, nil)
	require.NoError(t, err)
	defer good.Close()

	spaces := bytes.Repeat([]byte{' '}, 16)
	hs := append(append(append([]byte{}, spaces...), 0x00), spaces...)
	parts := [][]byte{append(hs, 0x02)} // meta: the map branch, then its blocks
	for i := range 93_000 {
		if i%2 == 0 {
			parts = append(parts, []byte{0x02, 0x00, 0x00}) // one entry: "" -> b""
		} else {
			parts = append(parts, []byte{0x02, 0x02, byte('a' + i%26), 0x00}) // "x" -> b""
		}
	}
	parts = append(parts, []byte{0x00}, []byte{0x00}, []byte{0x00}) // the map's end, meta, name ""
	attack := framed(parts...)
	t.Logf("%d frames, %d bytes", len(parts), len(attack))

	before := cpuTime(t)
	start := time.Now()
	answered := make(chan [][]byte, 1)
	go func() {
		conn := dialRaw(t, addr)
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(8 * time.Second))
		go conn.Write(attack)
		answered <- readFrames(conn, 5)
	}()
	time.Sleep(20 * time.Millisecond) // the attack is under way
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var id any
	callStart := time.Now()
	require.NoError(t, good.Call(ctx, "id", nil, &id), "a normal client during the attack")
	t.Logf("a normal call during the attack took %v", time.Since(callStart))
	answer := <-answered
	took, cpu := time.Since(start), cpuTime(t)-before
	t.Logf("the attack was answered after %v; the process used %v of CPU", took, cpu)
	require.Len(t, answer, 5, "the handshake is answered")
	assert.Equal(t, byte(0x04), answer[0][0], "NONE, with the protocol")
	assert.Less(t, cpu, 3*time.Second, "CPU spent on the attack")
}
