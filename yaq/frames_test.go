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
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readerOf reads the frames of stream as a daemon reads a client's (what
// follows a value in its frame starts the next).
func readerOf(stream []byte) *frames {
	return &frames{br: bufio.NewReader(bytes.NewReader(stream)), max: DefaultMaxSize, peer: "client 127.0.0.1:1"}
}

// framed frames each of parts.
func framed(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, frameOf(p)...)
	}
	return out
}

// A frame that ends right after a block count leaves the value incomplete,
// not malformed: the next frame continues it.
func TestFramesValueSplitAfterBlockCount(t *testing.T) {
	for _, dropRest := range []bool{false, true} {
		in := readerOf(framed([]byte{0x02}, []byte{0x02, 'k', 0x02, 'v', 0x00}, stringSchema.mustAppend("after")))
		in.dropRest = dropRest
		v, err := in.value(metaSchema)
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"k": []byte("v")}, v)
		v, err = in.value(stringSchema)
		require.NoError(t, err)
		assert.Equal(t, "after", v)
	}
	// The shape of an ndarray record, and an array inside a record.
	a, _ := ndarray.FromSlice([]int16{1, 2, 3, 4, 5, 6}, 2, 3)
	rec, err := AppendArray(nil, a)
	require.NoError(t, err)
	require.Equal(t, byte(0x04), rec[0], "a block of two dimensions")
	v, err := readerOf(framed(rec[:1], rec[1:])).value(mustSchema(ArraySchema))
	require.NoError(t, err)
	assert.True(t, a.Equal(v.(*ndarray.Array)))
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

// Every way of cutting a value into frames (two frames at any point; one
// byte per frame with empty frames between) reads the value a frame of its
// own reads, and the value after it.
func TestFramesValueSplitAnywhere(t *testing.T) {
	a, _ := ndarray.FromSlice([]float64{1.5, -2, 3, 4}, 2, 2)
	hsText := `{"protocol": "x"}`
	hs := handshakeRequest.mustAppend(map[string]any{"clientHash": bytes.Repeat([]byte{1}, 16), "clientProtocol": hsText,
		"serverHash": bytes.Repeat([]byte{2}, 16), "meta": map[string]any{"k": []byte("v"), "kk": []byte{}}})
	measured := mustSchema(`{"type": "map", "values": ["int", "double", ` + ArraySchema + `]}`)
	nulls := mustSchema(`{"type": "array", "items": {"type": "array", "items": "null"}}`)
	cases := []struct {
		name   string
		schema *Schema
		enc    []byte
	}{
		{"handshake request", handshakeRequest, hs},
		{"get_measured", measured, measured.mustAppend(map[string]any{"image": a, "mapping_id": int32(7), "t": 0.25})},
		// Blocks with negative counts and sizes, and items of no bytes.
		{"array<array<null>>", nulls, []byte{0x03, 0x02, 0x06, 0x00, 0x05, 0x00, 0x00, 0x02, 0x00, 0x00}},
		{"string", stringSchema, stringSchema.mustAppend("in_limits")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole, n, err := c.schema.Decode(c.enc)
			require.NoError(t, err)
			require.Equal(t, len(c.enc), n)
			after := stringSchema.mustAppend("after")
			check := func(stream []byte, how string) {
				in := readerOf(stream)
				v, err := in.value(c.schema)
				require.NoError(t, err, how)
				assert.Equal(t, whole, v, how)
				v, err = in.value(stringSchema)
				require.NoError(t, err, how)
				assert.Equal(t, "after", v, how)
				assert.Equal(t, int64(len(stream)), in.read, how)
			}
			for k := 1; k < len(c.enc); k++ {
				check(framed(c.enc[:k], c.enc[k:], after), "cut at "+itoa(k))
			}
			var bytewise [][]byte
			for i := range c.enc {
				bytewise = append(bytewise, c.enc[i:i+1], nil)
			}
			check(framed(append(bytewise, after)...), "a byte per frame")
		})
	}
}

func itoa(i int) string { return string(appendInt(nil, i)) }

func appendInt(b []byte, i int) []byte {
	if i >= 10 {
		b = appendInt(b, i/10)
	}
	return append(b, byte('0'+i%10))
}

// A value in many frames is decoded once it is complete, with work linear
// in its bytes: 100,000 one-entry blocks of a map, one per frame, take
// moments (decoding again after each frame took minutes).
func TestFramesManySmallFramesLinear(t *testing.T) {
	const blocks = 100_000
	parts := [][]byte{{}}
	for i := range blocks {
		parts = append(parts, []byte{0x02, 0x02, byte('a' + i%26), 0x00})
	}
	parts = append(parts, []byte{0x00})
	in := readerOf(framed(parts...))
	var v any
	var err error
	done := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(done)
		v, err = in.value(metaSchema)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a value in 100,000 frames took over 5 s to read")
	}
	t.Logf("a value in 100,000 frames read in %v", time.Since(start))
	require.NoError(t, err)
	assert.Len(t, v, 26)
	assert.Equal(t, []byte{}, v.(map[string]any)["q"])
}

// A connection that ends says which peer, what was awaited and where,
// and still wraps io.EOF or io.ErrUnexpectedEOF.
func TestFramesErrorsSayWhere(t *testing.T) {
	cases := []struct {
		name   string
		stream []byte
		is     error
		want   string
	}{
		{"nothing", nil, io.EOF,
			"yaq: truncated input at byte 0: client 127.0.0.1:1 closed the connection, where the string value was to come: EOF"},
		{"half a header", []byte{0, 0}, io.ErrUnexpectedEOF,
			"yaq: truncated input at byte 0: the connection from client 127.0.0.1:1 ended inside a frame header (2 of 4 bytes), waiting for the string value: unexpected EOF"},
		{"half a frame", []byte{0, 0, 0, 0, 0, 0, 0, 5, 'a'}, io.ErrUnexpectedEOF,
			"yaq: truncated input at byte 4: the connection from client 127.0.0.1:1 ended inside the frame that starts here, waiting for the string value: unexpected EOF"},
		{"half a value", framed([]byte{}, []byte{0x0a, 'a'}), io.ErrUnexpectedEOF,
			"yaq: truncated input at byte 10: the connection from client 127.0.0.1:1 ended after 2 bytes of the string value that starts at byte 8, before its end: unexpected EOF"},
		{"negative length", framed([]byte{0x03}), ErrMalformed,
			"yaq: malformed value at byte 0: string has a negative length (-2) (in the string value from client 127.0.0.1:1, which starts at byte 4 of the stream)"},
		{"over the limit", append(frameOf([]byte{0x0a, 'a'}), 0, 0, 1, 0), ErrMalformed,
			"yaq: malformed value at byte 6: client 127.0.0.1:1 sent a frame of 256 bytes, which with the 2 bytes of the value before it is over the limit of 100"},
		{"a string longer than a value may be", framed([]byte{0x80, 0x02}), ErrLimit,
			"yaq: over a decoding limit at byte 0: string claims 128 bytes, more than the 100 a value may take (in the string value from client 127.0.0.1:1, which starts at byte 4 of the stream)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := readerOf(c.stream)
			in.max = 100
			_, err := in.value(stringSchema)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.is)
			assert.EqualError(t, err, c.want)
		})
	}
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
		t.Run(itoa(v), func(t *testing.T) {
			addr, mismatch := replay(t, variants[v])
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			c, err := Dial(ctx, addr)
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
				assert.EqualError(t, err, "yaq: truncated input at byte 5572: daemon "+addr+" closed the connection, where the boolean value was to come: EOF")
			} else {
				require.NoError(t, err)
				assert.Equal(t, map[string]any{"name": "fake", "kind": "fake-continuous-hardware"}, id)
			}
			c.Close()
			require.NoError(t, <-mismatch)
		})
	}
}
