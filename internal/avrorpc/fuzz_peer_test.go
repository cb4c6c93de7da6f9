package avrorpc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/internal/testutil/yaqrecord"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq/avro"
)

// FuzzPeerAnswerFrames takes what a hostile daemon controls, its protocol
// and an answer, as yaq/avro's FuzzPeerProtocolAnswer does (and from the
// same seeds: every distinct frame each recorded daemon sent, and hostile
// values), and reads the answer cut into frames as a daemon may cut it,
// with each message's response and error schema: reading the frames finds
// what decoding the whole does, its end neither before nor past it.
func FuzzPeerAnswerFrames(f *testing.F) {
	if _, err := os.Stat(sharedYaq); err == nil || os.Getenv("CI") != "" {
		for _, kind := range yaqrecord.Kinds {
			text := string(sharedfiles.ReadFile(f, sharedYaq+"protocols/"+kind+".served.json"))
			seen := map[string]bool{}
			lines := strings.Split(strings.TrimSpace(string(sharedfiles.ReadFile(f, sharedYaq+"transcripts/"+kind+".jsonl"))), "\n")
			for _, line := range lines {
				var fr yaqrecord.Frame
				if json.Unmarshal([]byte(line), &fr) == nil && fr.Dir == "s2c" && !seen[fr.Frame] && len(fr.Frame) <= 32<<10 {
					seen[fr.Frame] = true
					b, _ := hex.DecodeString(fr.Frame)
					f.Add(text, b)
				}
			}
		}
	}
	hostile := func(response string) string {
		return `{"protocol": "evil", "messages": {"get": {"request": [], "response": ` + response + `}}}`
	}
	nested := binary.AppendVarint(nil, 3000)
	for range 3000 {
		nested = append(binary.AppendVarint(nested, 65536), 0x00)
	}
	f.Add(hostile(`{"type": "array", "items": {"type": "array", "items": "null"}}`), append(nested, 0x00))
	f.Add(hostile(`{"type": "array", "items": "null"}`), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x00})
	f.Add(`{"protocol": "evil", "types": [{"type": "fixed", "name": "blob"}], "messages": {"get": {"request": [], "response": "blob"}}}`, []byte{0x00})
	f.Add(hostile(`{"type": "array", "items": {"type": "record", "name": "r", "fields": [{"name": "on", "type": "boolean"}]}}`), append(binary.AppendVarint(nil, 4096), make([]byte, 4097)...))
	f.Add(`{"protocol": "nest", "types": [{"type": "record", "name": "node", "fields": [{"name": "next", "type": ["null", "node"]}]}], `+
		`"messages": {"depth": {"request": [], "response": ["null", "node"]}}}`, append(bytes.Repeat([]byte{0x02}, 600), 0x00))
	f.Fuzz(func(t *testing.T, protocol string, answer []byte) {
		p, err := avro.ParseProtocol(protocol)
		if err != nil {
			return
		}
		names := slices.Sorted(maps.Keys(p.Messages))
		for _, name := range names[:min(len(names), 6)] {
			for _, s := range []*avro.Schema{p.Messages[name].Response, p.Messages[name].Errors} {
				v, n, err := s.Decode(answer)
				if err != nil {
					continue
				}
				enc, _ := s.Append(nil, v)
				// The frames of the value alone: the reader must find its
				// end where decoding did, neither before nor past it. (Its
				// memory budget is that of n bytes, not of the whole
				// answer.)
				framed := framedValue(s, answer[:n])
				if framed.err != nil {
					if errors.Is(framed.err, ndarray.ErrTooLarge) && n < len(answer) {
						continue
					}
					t.Fatalf("%s: %d bytes decode whole, but not from frames: %v", s, n, framed.err)
				}
				if framedEnc, _ := s.Append(nil, framed.v); !bytes.Equal(enc, framedEnc) || framed.read != n {
					t.Fatalf("%s: from frames, %d bytes read and %x, not %d and %x", s, framed.read, framedEnc, n, enc)
				}
			}
		}
	})
}

type framedResult struct {
	v    any
	read int // bytes of the answer read
	err  error
}

// framedValue reads a value of s from value cut into frames of 1 to 7
// bytes, with empty frames between them, as the client's frame reader
// reads an answer.
func framedValue(s *avro.Schema, value []byte) framedResult {
	var stream []byte
	for at, i := 0, 0; at < len(value); i++ {
		k := min(1+(i*5+int(value[0]))%7, len(value)-at)
		stream = append(stream, frameOf(value[at:at+k])...)
		if i%3 == 2 {
			stream = append(stream, 0, 0, 0, 0)
		}
		at += k
	}
	in := readerOf(stream)
	in.max = max(len(value), 1)
	v, err := in.Value(s)
	if err != nil {
		return framedResult{err: err}
	}
	// What was read: all but the rest of the last frame and the frames
	// after it.
	rest := len(in.buf)
	for b := stream[in.read:]; len(b) >= 4; {
		n := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		rest += n
		b = b[min(len(b), 4+n):]
	}
	return framedResult{v: v, read: len(value) - rest}
}
