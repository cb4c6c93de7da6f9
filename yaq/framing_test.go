package yaq

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"io"
	"log"
	"math"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// framed frames each of parts.
func framed(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, frameOf(p)...)
	}
	return out
}

// A daemon reads a handshake whose meta map's frame ends after the block
// count, and answers it, where it used to close the connection.
func TestDaemonHandshakeSplitAfterBlockCount(t *testing.T) {
	_, addr := nestDaemon(t)
	hs := append(bytes.Repeat([]byte{' '}, 16), 0x00)
	hs = append(append(hs, bytes.Repeat([]byte{' '}, 16)...), 0x02, 0x02) // meta: a map, a block of 1
	stream := framed(hs, []byte{0x02, 'k', 0x02, 'v', 0x00}, []byte{0x00}, []byte{0x00})
	answer := exchangeRaw(t, addr, stream, 5)
	require.Len(t, answer, 5, "frames answered")
	assert.Equal(t, byte(0x04), answer[0][0], "NONE, with the protocol")
	assert.Equal(t, [][]byte{{0x00}, {0x00}, {}, {}}, answer[1:], "meta, flag, null, terminator")
}

// exchangeRaw sends stream to the daemon at addr and returns the first
// frames it answers, up to want of them, within 5 seconds.
func exchangeRaw(t *testing.T, addr string, stream []byte, want int) [][]byte {
	t.Helper()
	conn := dialRaw(t, addr)
	defer conn.Close()
	go conn.Write(stream)
	return readFrames(conn, want)
}

// dialRaw connects to addr for a test that speaks bytes, with a deadline
// that ends it if the daemon never answers.
func dialRaw(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	return conn
}

// readFrames reads up to want frames from r, stopping at the first error.
func readFrames(r io.Reader, want int) [][]byte {
	var out [][]byte
	br := bufio.NewReader(r)
	for len(out) < want {
		var h [4]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			break
		}
		p := make([]byte, int(h[0])<<24|int(h[1])<<16|int(h[2])<<8|int(h[3]))
		if _, err := io.ReadFull(br, p); err != nil {
			break
		}
		out = append(out, p)
	}
	return out
}

// The Go daemon reads what the recorded edge-split client sent the Python
// daemon (fake-continuous-hardware) and answers with the recorded frames:
// a name and a double each split over two frames, a frame's payload split
// over two writes, a call without its terminator. (Steps 17-21, meta and
// name in one frame, are left out: there the Python daemon drops the name
// with the rest of the frame, and the Go daemon reads it.)
func TestDaemonRecordedEdgeSplit(t *testing.T) {
	served := sharedfiles.ReadFile(t, sharedYaq+"protocols/fake-continuous-hardware.served.json")
	lines := strings.Split(strings.TrimSpace(string(sharedfiles.ReadFile(t, sharedYaq+"transcripts/edge-split.jsonl"))), "\n")
	d, err := NewDaemon("edge", string(served))
	require.NoError(t, err)
	d.ErrorLog = log.New(io.Discard, "", 0)
	require.NoError(t, d.Handle("in_limits", func(_ context.Context, p []any) (any, error) {
		return p[0].(float64) >= 0 && p[0].(float64) <= 1, nil
	}))
	pythonNaN := math.Float64frombits(0x7ff8000000000000) // the NaN the Python daemon sent
	require.NoError(t, d.Handle("get_position", func(context.Context, []any) (any, error) { return pythonNaN, nil }))
	require.NoError(t, d.Handle("busy", func(context.Context, []any) (any, error) { return false, nil }))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go d.Serve(l)
	defer d.Close()
	conn := dialRaw(t, l.Addr().String())
	defer conn.Close()
	br := bufio.NewReader(conn)
	checked := 0
	for _, line := range lines {
		var step struct {
			Seq   int     `json:"seq"`
			Conn  int     `json:"conn"`
			Dir   string  `json:"dir"`
			Raw   *string `json:"raw"`
			Frame *string `json:"frame"`
			Delay float64 `json:"delay_before_s"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &step))
		if step.Conn != 0 || step.Seq > 61 || (step.Seq >= 17 && step.Seq <= 21) || (step.Seq >= 38 && step.Seq <= 51) {
			continue
		}
		if step.Dir == "c2s" {
			raw, err := hex.DecodeString(*step.Raw)
			require.NoError(t, err)
			if step.Delay > 0 {
				time.Sleep(50 * time.Millisecond)
			}
			_, err = conn.Write(raw)
			require.NoError(t, err, "seq %d", step.Seq)
			continue
		}
		require.NotNil(t, step.Frame, "seq %d", step.Seq)
		got := readFrames(br, 1)
		require.Len(t, got, 1, "seq %d: no frame", step.Seq)
		assert.Equal(t, *step.Frame, hex.EncodeToString(got[0]), "seq %d", step.Seq)
		checked++
	}
	assert.Equal(t, 34, checked, "frames compared")
}

// The Go client, against the recorded scripted daemon that answered yaqc's
// id() with differently framed answers, gets what yaqc got: the answer
// with or without its terminator, split over two frames, or after extra
// empty frames; and, like yaqc, no answer when meta, flag and value come
// in one frame.
func TestClientRecordedEdgeFraming(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(string(sharedfiles.ReadFile(t, sharedYaq+"transcripts/edge-yaqc-client.jsonl"))), "\n")
	variants := map[int][]frame{}
	for _, line := range lines {
		var f struct {
			frame
			Conn int `json:"conn"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &f))
		variants[f.Conn] = append(variants[f.Conn], f.frame)
	}
	require.Len(t, variants, 5)
	for v := range 5 {
		t.Run(strconv.Itoa(v), func(t *testing.T) {
			addr, mismatch := replay(t, variants[v])
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := Dial(ctx, addr, nil)
			require.NoError(t, err)
			defer c.Close()
			callCtx, cancelCall := context.WithTimeout(ctx, 300*time.Millisecond)
			defer cancelCall()
			var id any
			err = c.Call(callCtx, "id", nil, &id)
			if v == 2 {
				// The client drops the rest of meta's frame and waits for
				// the flag until the replay hangs up.
				require.Error(t, err, "meta, flag and value in one frame")
				assert.ErrorIs(t, err, io.EOF)
				assert.EqualError(t, err, "avro: truncated input at byte 5572: daemon "+addr+" closed the connection, where the boolean value was to come: EOF")
			} else {
				require.NoError(t, err)
				assert.Equal(t, map[string]any{"name": "fake", "kind": "fake-continuous-hardware"}, id)
			}
			c.Close()
			require.NoError(t, <-mismatch)
		})
	}
}
