package yaq

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// replay serves one connection as the recorded daemon did: for each frame
// the client sent in the recording it reads one from the client and checks
// it is the same; for each frame the daemon sent, it sends it.
func replay(t *testing.T, frames []frame) (addr string, mismatch <-chan error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		conn, err := l.Accept()
		if err != nil {
			errs <- err
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		lastC2S := -1
		for i, f := range frames {
			if f.Dir != "s2c" {
				lastC2S = i
			}
		}
		for i, f := range frames {
			want, _ := hex.DecodeString(f.Frame)
			if f.Dir == "s2c" {
				var h [4]byte
				binary.BigEndian.PutUint32(h[:], uint32(len(want)))
				if _, err := conn.Write(append(h[:], want...)); err != nil {
					if i > lastC2S {
						// The client has what it reads of the last answer
						// (not the terminator, as yaqc) and may have hung up.
						return
					}
					errs <- err
					return
				}
				continue
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			var h [4]byte
			if _, err := io.ReadFull(br, h[:]); err != nil {
				errs <- fmt.Errorf("frame %d: %w", f.Seq, err)
				return
			}
			got := make([]byte, binary.BigEndian.Uint32(h[:]))
			if _, err := io.ReadFull(br, got); err != nil {
				errs <- fmt.Errorf("frame %d: %w", f.Seq, err)
				return
			}
			if !bytes.Equal(got, want) {
				errs <- fmt.Errorf("frame %d: sent %x, yaqc sent %x", f.Seq, got, want)
				return
			}
		}
	}()
	return l.Addr().String(), errs
}

func decodeArg(t *testing.T, raw json.RawMessage) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

// The Go client, making the calls of every recorded yaqc session against a
// replay of the daemon, sends exactly yaqc's frames and gets the results
// yaqc got.
func TestClientReplaysRecordedSessions(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			_, frames, calls := readTranscript(t, kind)
			addr, mismatch := replay(t, frames)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := Dial(ctx, addr, nil)
			require.NoError(t, err)
			defer c.Close()
			var id any
			require.NoError(t, c.Call(ctx, "id", nil, &id), "the constructor's id()")
			sameJSON(t, calls[0].Result, id)
			assert.Equal(t, kind, c.Protocol().Name)
			made := 0
			for _, call := range calls[1:] {
				if call.Method == "" {
					continue // a sleep
				}
				msg := c.Protocol().Messages[call.Method]
				require.NotNil(t, msg)
				var params []any
				for _, a := range call.Args {
					params = append(params, decodeArg(t, a))
				}
				for _, f := range msg.Request[len(params):] {
					if a, ok := call.Kwargs[f.Name]; ok {
						params = append(params, decodeArg(t, a))
					}
				}
				var result any
				err := c.Call(ctx, call.Method, params, &result)
				if call.Error != nil {
					var re *RemoteError
					require.True(t, errors.As(err, &re), "%s %d: %v", call.Method, call.I, err)
					assert.Equal(t, *call.Error, re.Message)
				} else {
					require.NoError(t, err, "%s %d", call.Method, call.I)
					sameJSON(t, call.Result, result, "%s %d", call.Method, call.I)
				}
				made++
			}
			c.Close()
			require.NoError(t, <-mismatch)
			t.Logf("%s: %d calls", kind, made)
		})
	}
}
