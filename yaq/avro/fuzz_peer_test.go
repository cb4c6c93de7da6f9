package avro

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
)

// peerSeeds returns, for each recorded daemon, its served protocol and the
// distinct frames it sent (up to 16 KiB each): what a client parses from a
// handshake and the answers it decodes. It returns none where the
// recordings are absent, unless CI requires them.
func peerSeeds(t testing.TB) (protocols map[string]string, answers map[string][][]byte) {
	protocols, answers = map[string]string{}, map[string][][]byte{}
	if _, err := os.Stat(sharedYaq); err != nil && os.Getenv("CI") == "" {
		return protocols, answers
	}
	for _, kind := range kinds {
		protocols[kind] = string(sharedfiles.ReadFile(t, sharedYaq+"protocols/"+kind+".served.json"))
		seen := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(sharedfiles.ReadFile(t, sharedYaq+"transcripts/"+kind+".jsonl"))), "\n") {
			var f frame
			if json.Unmarshal([]byte(line), &f) != nil || f.Dir != "s2c" || seen[f.Frame] || len(f.Frame) > 32<<10 {
				continue
			}
			seen[f.Frame] = true
			b, _ := hex.DecodeString(f.Frame)
			answers[kind] = append(answers[kind], b)
		}
	}
	return protocols, answers
}

// FuzzPeerProtocolAnswer takes what a hostile daemon controls, its
// protocol and an answer: the protocol is parsed as the client parses it
// from a handshake, and the answer decoded with each message's response
// and error schema. Nothing panics; decoding allocates within the budget
// for the answer's bytes; what decodes encodes again. (internal/avrorpc's
// FuzzPeerAnswerFrames reads such answers cut into frames.)
func FuzzPeerProtocolAnswer(f *testing.F) {
	protocols, answers := peerSeeds(f)
	for kind, text := range protocols {
		for _, a := range answers[kind] {
			f.Add(text, a)
		}
	}
	hostile := func(response string) string {
		return `{"protocol": "evil", "messages": {"get": {"request": [], "response": ` + response + `}}}`
	}
	nested := appendVarint(nil, 3000)
	for range 3000 {
		nested = append(appendVarint(nested, 65536), 0x00)
	}
	f.Add(hostile(`{"type": "array", "items": {"type": "array", "items": "null"}}`), append(nested, 0x00))
	f.Add(hostile(`{"type": "array", "items": "null"}`), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x00})
	f.Add(`{"protocol": "evil", "types": [{"type": "fixed", "name": "blob"}], "messages": {"get": {"request": [], "response": "blob"}}}`, []byte{0x00})
	f.Add(hostile(`{"type": "array", "items": {"type": "record", "name": "r", "fields": [{"name": "on", "type": "boolean"}]}}`), append(appendVarint(nil, 4096), make([]byte, 4097)...))
	f.Add(`{"protocol": "nest", "types": [{"type": "record", "name": "node", "fields": [{"name": "next", "type": ["null", "node"]}]}], `+
		`"messages": {"depth": {"request": [], "response": ["null", "node"]}}}`, append(bytes.Repeat([]byte{0x02}, 600), 0x00))
	f.Fuzz(func(t *testing.T, protocol string, answer []byte) {
		p, err := ParseProtocol(protocol)
		if err != nil {
			return
		}
		names := make([]string, 0, len(p.Messages))
		for name := range p.Messages {
			names = append(names, name)
		}
		sort.Strings(names)
		var schemas []*Schema
		for _, name := range names[:min(len(names), 6)] {
			schemas = append(schemas, p.Messages[name].Response, p.Messages[name].Errors)
		}
		type decoded struct {
			v   any
			n   int
			err error
		}
		results := make([]decoded, len(schemas))
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for i, s := range schemas {
			results[i].v, results[i].n, results[i].err = s.Decode(answer)
		}
		runtime.ReadMemStats(&after)
		// The estimate leaves out the slack of growing maps and slices:
		// within twice the budget of each decoding, and the fuzzer's own.
		if got, most := after.TotalAlloc-before.TotalAlloc, uint64(len(schemas)*2*(len(answer)*decodedPerByte+decodedSlack)+1<<20); got > most {
			t.Fatalf("decoding %d bytes with %d schemas allocated %d bytes, over %d", len(answer), len(schemas), got, most)
		}
		for i, s := range schemas {
			v, n, err := results[i].v, results[i].n, results[i].err
			if err != nil {
				continue
			}
			if n > len(answer) {
				t.Fatalf("took %d of %d bytes", n, len(answer))
			}
			if _, err := s.Append(nil, v); err != nil {
				t.Fatalf("a decoded %s does not encode: %v", s, err)
			}
		}
	})
}
