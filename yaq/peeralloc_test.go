package yaq

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigMeta encodes a meta map of about size bytes: entries with distinct
// 4-byte keys and empty values, six bytes each, which decode into some 20
// times their bytes.
func bigMeta(size int) []byte {
	n := size / 6
	b := appendVarint(nil, int64(n))
	for i := 0; i < n; i++ {
		b = append(b, 0x08)
		b = binary.BigEndian.AppendUint32(b, uint32(i))
		b = append(b, 0x00)
	}
	return append(b, 0x00)
}

// A call whose meta map is megabytes is refused at the frame that holds
// it, before it is read or decoded, naming the limit; the connection
// closes (with the answers due before it) and the daemon serves on. A
// handshake's meta, which nothing uses, is read past without being
// decoded. Without either, 2 MiB of meta became some 50 to 90 MiB of Go
// map per connection, and a 64 MiB frame 1.5 GB.
func TestDaemonCapsHandshakeAndMeta(t *testing.T) {
	d, addr, logs := floodDaemon(t, func(*Daemon) {})
	meta := bigMeta(2 << 20)
	spaces := bytes.Repeat([]byte{' '}, 16)
	hs, err := handshakeRequest.Append(nil, map[string]any{"clientHash": spaces, "clientProtocol": "x", "serverHash": d.hash[:], "meta": nil})
	require.NoError(t, err)
	// The request's meta is its last field: null (0x00) becomes the map.
	hsMeta := append(append(hs[:len(hs)-1:len(hs)-1], 0x02), meta...)
	t.Run("handshake meta", func(t *testing.T) {
		var got [][]byte
		allocated, _ := hostile.HeapCost(func() {
			conn := dialRaw(t, addr)
			defer conn.Close()
			go conn.Write(append(append(append(limitFrame(hsMeta...), limitFrame(0)...), limitFrame(avroString("")...)...), rawCall("ping")...))
			got = readFrames(conn, 5+4)
		})
		require.Len(t, got, 9, "the handshake and the call answered")
		assert.Equal(t, []byte{0x00, 0x00, 0x00, 0x00}, got[0], "BOTH")
		assert.Equal(t, []byte{0x02}, got[7], "ping's 1")
		t.Logf("%d bytes of handshake meta skipped, %d bytes allocated", len(hsMeta), allocated)
		assert.Less(t, allocated, uint64(3*len(hsMeta)+1<<20), "bytes allocated")
	})
	for _, c := range []struct {
		name    string
		stream  []byte
		answers int // frames answered before the connection closes
		log     string
		most    int // bytes allocated: the frames read whole, not decoded
	}{
		{"call meta", append(rawHandshake(t, d), append(append(limitFrame(meta...), limitFrame(avroString("ping")...)...), limitFrame()...)...), 5,
			fmt.Sprintf("sent a frame of %d bytes, which with the 0 bytes before it is over the limit of %d bytes on a meta map", len(meta), maxMetaSize), 1 << 20},
		// The next call's meta in the rest of a call's name frame.
		{"meta after a name", append(rawHandshake(t, d), append(append(limitFrame(0), limitFrame(append(avroString("ping"), meta...)...)...), limitFrame()...)...), 5 + 4,
			fmt.Sprintf("sent a meta map of more than %d bytes, the most it may take", maxMetaSize), 2*len(meta) + 1<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got [][]byte
			var rest []byte
			allocated, _ := hostile.HeapCost(func() {
				conn := dialRaw(t, addr)
				defer conn.Close()
				go conn.Write(c.stream)
				got = readFrames(conn, c.answers)
				rest, _ = io.ReadAll(conn)
			})
			assert.Len(t, got, c.answers, "frames answered")
			assert.Zero(t, len(rest), "bytes answered after the meta")
			assert.Less(t, allocated, uint64(c.most), "bytes allocated")
			require.Eventually(t, func() bool { return strings.Contains(logs.String(), c.log) }, 2*time.Second, 10*time.Millisecond,
				"the log says %q; it has %q", c.log, logs.String())
			assert.Contains(t, logs.String(), "too large")
		})
	}
	// A small meta is still echoed, and the daemon serves on.
	small := append(append(appendVarint(nil, 1), avroString("k")...), avroString("v")...)
	small = append(small, 0x00)
	conn := dialRaw(t, addr)
	defer conn.Close()
	go conn.Write(append(rawHandshake(t, d), append(append(limitFrame(small...), limitFrame(avroString("ping")...)...), limitFrame()...)...))
	got := readFrames(conn, 5+4)
	require.Len(t, got, 9)
	assert.Equal(t, small, got[5], "the meta echoed")
	assert.Equal(t, []byte{0x00}, got[6], "flag")
	assert.Equal(t, []byte{0x02}, got[7], "ping's 1")
}

// A daemon that serves a protocol of megabytes is refused by Dial, naming
// the daemon and the limit, with little memory spent: parsing 16 MiB of
// "[]," took some 400 MiB.
func TestClientCapsServedProtocol(t *testing.T) {
	for _, c := range []struct {
		name, protocol, want string
	}{
		{"4 MiB", hostile.HugeProtocol(4 << 20), "over the limit of %d bytes on a handshake response"},
		{"1 MiB and 1 byte", hostile.HugeProtocol(maxProtocolSize)[:maxProtocolSize+1], "served a protocol of 1048577 bytes, over the limit of 1048576 a client parses"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, _ := fakeDaemon(t, c.protocol, []byte{0x00})
			var err error
			allocated, _ := hostile.HeapCost(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				var cl *Client
				if cl, err = Dial(ctx, addr, nil); cl != nil {
					cl.Close()
				}
			})
			require.Error(t, err)
			assert.ErrorIs(t, err, ndarray.ErrTooLarge)
			want := c.want
			if strings.Contains(want, "%d") {
				want = fmt.Sprintf(want, maxProtocolSize+maxHandshakeSize)
			}
			assert.Contains(t, err.Error(), "daemon "+addr)
			assert.Contains(t, err.Error(), want)
			assert.Less(t, allocated, uint64(3*maxProtocolSize+1<<20), "bytes allocated")
		})
	}
}
