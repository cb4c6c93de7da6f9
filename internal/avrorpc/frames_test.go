package avrorpc

import (
	"bufio"
	"bytes"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readerOf reads the frames of stream as a daemon reads a client's (what
// follows a value in its frame starts the next).
func readerOf(stream []byte) *FrameReader {
	return NewFrameReader(bufio.NewReader(bytes.NewReader(stream)), ReaderOptions{Peer: "client 127.0.0.1:1"})
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
		in := readerOf(framed([]byte{0x02}, []byte{0x02, 'k', 0x02, 'v', 0x00}, mustAppend(stringSchema, "after")))
		in.dropRest = dropRest
		v, err := in.Value(metaSchema)
		require.NoError(t, err)
		assert.Equal(t, map[string]any{"k": []byte("v")}, v)
		v, err = in.Value(stringSchema)
		require.NoError(t, err)
		assert.Equal(t, "after", v)
	}
	// The shape of an ndarray record, and an array inside a record.
	a, _ := ndarray.FromSlice([]int16{1, 2, 3, 4, 5, 6}, 2, 3)
	rec, err := avro.ArrayOptions{}.AppendArray(nil, a)
	require.NoError(t, err)
	require.Equal(t, byte(0x04), rec[0], "a block of two dimensions")
	v, err := readerOf(framed(rec[:1], rec[1:])).Value(mustSchema(avro.ArraySchema))
	require.NoError(t, err)
	assert.True(t, a.Equal(v.(*ndarray.Array)))
}

// Every way of cutting a value into frames (two frames at any point; one
// byte per frame with empty frames between) reads the value a frame of its
// own reads, and the value after it.
func TestFramesValueSplitAnywhere(t *testing.T) {
	a, _ := ndarray.FromSlice([]float64{1.5, -2, 3, 4}, 2, 2)
	hsText := `{"protocol": "x"}`
	hs := mustAppend(handshakeRequest, map[string]any{"clientHash": bytes.Repeat([]byte{1}, 16), "clientProtocol": hsText,
		"serverHash": bytes.Repeat([]byte{2}, 16), "meta": map[string]any{"k": []byte("v"), "kk": []byte{}}})
	measured := mustSchema(`{"type": "map", "values": ["int", "double", ` + avro.ArraySchema + `]}`)
	nulls := mustSchema(`{"type": "array", "items": {"type": "array", "items": "null"}}`)
	cases := []struct {
		name   string
		schema *avro.Schema
		enc    []byte
	}{
		{"handshake request", handshakeRequest, hs},
		{"get_measured", measured, mustAppend(measured, map[string]any{"image": a, "mapping_id": int32(7), "t": 0.25})},
		// Blocks with negative counts and sizes, and items of no bytes.
		{"array<array<null>>", nulls, []byte{0x03, 0x02, 0x06, 0x00, 0x05, 0x00, 0x00, 0x02, 0x00, 0x00}},
		{"string", stringSchema, mustAppend(stringSchema, "in_limits")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			whole, n, err := c.schema.Decode(c.enc)
			require.NoError(t, err)
			require.Equal(t, len(c.enc), n)
			after := mustAppend(stringSchema, "after")
			check := func(stream []byte, how string) {
				in := readerOf(stream)
				v, err := in.Value(c.schema)
				require.NoError(t, err, how)
				assert.Equal(t, whole, v, how)
				v, err = in.Value(stringSchema)
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
		v, err = in.Value(metaSchema)
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
			"avro: truncated input at byte 0: client 127.0.0.1:1 closed the connection, where the string value was to come: EOF"},
		{"half a header", []byte{0, 0}, io.ErrUnexpectedEOF,
			"avro: truncated input at byte 0: the connection from client 127.0.0.1:1 ended inside a frame header (2 of 4 bytes), waiting for the string value: unexpected EOF"},
		{"half a frame", []byte{0, 0, 0, 0, 0, 0, 0, 5, 'a'}, io.ErrUnexpectedEOF,
			"avro: truncated input at byte 4: the connection from client 127.0.0.1:1 ended inside the frame that starts here, waiting for the string value: unexpected EOF"},
		{"half a value", framed([]byte{}, []byte{0x0a, 'a'}), io.ErrUnexpectedEOF,
			"avro: truncated input at byte 10: the connection from client 127.0.0.1:1 ended after 2 bytes of the string value that starts at byte 8, before its end: unexpected EOF"},
		{"negative length", framed([]byte{0x03}), ndarray.ErrMalformed,
			"avro: malformed value at byte 0: string has a negative length (-2) (in the string value from client 127.0.0.1:1, which starts at byte 4 of the stream)"},
		{"over the limit", append(frameOf([]byte{0x0a, 'a'}), 0, 0, 1, 0), ndarray.ErrTooLarge,
			"avro: too large at byte 6: client 127.0.0.1:1 sent a frame of 256 bytes, which with the 2 bytes of the value before it is over the limit of 100"},
		{"a string longer than a value may be", framed([]byte{0x80, 0x02}), ndarray.ErrTooLarge,
			"avro: too large at byte 0: string claims 128 bytes, more than the 100 a value may take (in the string value from client 127.0.0.1:1, which starts at byte 4 of the stream)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := readerOf(c.stream)
			in.max = 100
			_, err := in.Value(stringSchema)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.is)
			assert.EqualError(t, err, c.want)
		})
	}
}

// FuzzFrameReader reads whatever a peer sends as a daemon reads a client
// (a handshake, then calls: meta, name, a parameter) and as a client
// reads a daemon's answers (a handshake response, then meta, flag and a
// value), from frames of any lengths. Nothing panics or hangs, and the
// memory taken stays within a small multiple of the bytes sent (frames
// are read as their bytes arrive, not as their headers claim).
func FuzzFrameReader(f *testing.F) {
	proto := `{"protocol": "x"}`
	hs := HandshakeRequest{ClientProtocol: &proto}.Append(nil)
	a, _ := ndarray.FromSlice([]float64{1, 2, 3})
	measured := mustSchema(`{"type": "map", "values": ["int", "double", ` + avro.ArraySchema + `]}`)
	value := mustAppend(measured, map[string]any{"a": a, "id": int32(3)})
	f.Add(framed(hs, []byte{0x00}, mustAppend(stringSchema, "get"), value, nil))
	f.Add(framed(hs[:5], hs[5:], []byte{0x02}, []byte{0x02, 'k', 0x00, 0x00}, []byte{0x06, 'g', 'e', 't'}, value[:3], value[3:]))
	f.Add(framed(HandshakeResponse{Match: MatchNone, ServerProtocol: &proto, ServerHash: &[16]byte{}}.Append(nil), []byte{0x00}, []byte{0x00}, value, nil))
	f.Add([]byte{0x00, 0xff, 0xff, 0xff, 0x01})
	f.Add([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
	flag := mustSchema(`"boolean"`)
	f.Fuzz(func(t *testing.T, stream []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		opts := ReaderOptions{MaxSize: 1 << 16, Peer: "fuzz"}
		r := NewFrameReader(bufio.NewReader(bytes.NewReader(stream)), opts)
		if _, err := r.ReadHandshakeRequest(); err == nil {
			for {
				if _, err := r.CappedValue(metaSchema, 1<<10, "meta map"); err != nil {
					break
				}
				if _, err := r.SmallValue(stringSchema); err != nil {
					break
				}
				if _, err := r.Value(measured); err != nil {
					break
				}
				if r.Pending() == 0 {
					if _, err := r.SkipEmptyFrame(); err != nil {
						break
					}
				}
			}
		}
		opts.DropRest = true
		r = NewFrameReader(bufio.NewReader(bytes.NewReader(stream)), opts)
		if _, err := r.ReadHandshakeResponse(1 << 12); err == nil {
			for {
				if _, err := r.CappedValue(metaSchema, 1<<10, "meta map"); err != nil {
					break
				}
				if _, err := r.SmallValue(flag); err != nil {
					break
				}
				r.Lend(make([]byte, 0, 64))
				_, err := r.Value(measured)
				r.Lent()
				if err != nil {
					break
				}
			}
		}
		runtime.ReadMemStats(&after)
		// Two readers, each with its 4 KiB bufio buffer and the decoding
		// budget of the bytes they read (32 per byte and 16 MiB, which
		// these small values never come near).
		if got, most := after.TotalAlloc-before.TotalAlloc, uint64(2*64*len(stream)+1<<20); got > most {
			t.Fatalf("reading %d bytes allocated %d, over %d", len(stream), got, most)
		}
	})
}
