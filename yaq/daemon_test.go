package yaq

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"log"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The Go daemon, serving a recorded protocol with handlers that return the
// recorded answers, answers yaqc's recorded frames with the frames the
// Python daemon sent: the same bytes, or (where map key order differs) the
// same values.
func TestDaemonAnswersRecordedSessions(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			p, frames, calls := readTranscript(t, kind)
			served, _ := os.ReadFile(sharedYaq + "protocols/" + kind + ".served.json")
			d, err := NewDaemon("recorded", string(served))
			require.NoError(t, err)
			d.ErrorLog = log.New(io.Discard, "", 0)
			method := map[int]string{} // seq -> the method whose frames it is
			answers := map[string][]any{}
			for _, c := range calls {
				if len(c.Frames) != 2 {
					continue
				}
				name := c.Method
				if c.I == 0 {
					name = "id"
				}
				var s2c [][]byte
				for _, f := range frames {
					if f.Seq >= c.Frames[0] && f.Seq <= c.Frames[1] {
						method[f.Seq] = name
						if f.Dir == "s2c" {
							b, _ := hex.DecodeString(f.Frame)
							s2c = append(s2c, b)
						}
					}
				}
				// The answer is the value frame after meta and flag (for the
				// constructor, after the two handshakes' ten frames).
				at := len(s2c) - 4
				msg := p.Messages[name]
				if s2c[at+1][0] == 1 {
					e, _, err := msg.Errors.Decode(s2c[at+2])
					require.NoError(t, err)
					answers[name] = append(answers[name], errors.New(e.(string)))
				} else {
					v, _, err := msg.Response.Decode(s2c[at+2])
					require.NoError(t, err)
					answers[name] = append(answers[name], v)
				}
			}
			for name := range answers {
				require.NoError(t, d.Handle(name, func(ctx context.Context, params []any) (any, error) {
					a := answers[name][0]
					answers[name] = answers[name][1:]
					if err, ok := a.(error); ok {
						return nil, err
					}
					return a, nil
				}))
			}
			l, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			go d.Serve(l)
			defer d.Close()
			conn, err := net.Dial("tcp", l.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			br := bufio.NewReader(conn)
			same, equal := 0, 0
			var flag byte
			for i, f := range frames {
				want, _ := hex.DecodeString(f.Frame)
				if f.Dir == "c2s" {
					require.NoError(t, writeFrames(conn, [][]byte{want}))
					continue
				}
				if method[f.Seq] == "shutdown" && i == len(frames)-1 {
					break
				}
				conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				var h [4]byte
				_, err := io.ReadFull(br, h[:])
				require.NoError(t, err, "frame %d", f.Seq)
				got := make([]byte, binary.BigEndian.Uint32(h[:]))
				_, err = io.ReadFull(br, got)
				require.NoError(t, err)
				if bytes.Equal(got, want) {
					same++
				} else {
					// Only a value may differ, and only in map key order.
					msg := p.Messages[method[f.Seq]]
					require.NotNil(t, msg, "frame %d differs: %x, want %x", f.Seq, got, want)
					schema := msg.Response
					if flag == 1 {
						schema = msg.Errors
					}
					gv, _, err := schema.Decode(got)
					require.NoError(t, err, "frame %d", f.Seq)
					wv, _, _ := schema.Decode(want)
					assert.Equal(t, summarize(wv), summarize(gv), "frame %d (%s)", f.Seq, method[f.Seq])
					equal++
				}
				if len(want) == 1 {
					flag = want[0] // the last one-byte frame before a value is its flag
				}
			}
			t.Logf("%s: %d frames identical, %d equal in value", kind, same, equal)
		})
	}
}
