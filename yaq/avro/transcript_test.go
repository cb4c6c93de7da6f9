package avro

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/yaqrecord"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sharedYaq = "../../../shared/yaq/"

type frame = yaqrecord.Frame

type recordedCall = yaqrecord.Call

var (
	kinds     = yaqrecord.Kinds
	summarize = yaqrecord.Summarize
	sameJSON  = yaqrecord.SameJSON
)

func readTranscript(t *testing.T, kind string) (*Protocol, []frame, []recordedCall) {
	t.Helper()
	text, frames, calls := yaqrecord.Read(t, sharedYaq, kind)
	p, err := ParseProtocol(text)
	require.NoError(t, err)
	return p, frames, calls
}

// Every call of every recorded yaqc session: ndpack encodes the parameters
// to the very frames yaqc sent, and decodes the daemon's frames to the
// values yaqc decoded.
func TestRecordedSessions(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			p, frames, calls := readTranscript(t, kind)
			checked := 0
			for _, c := range calls {
				if c.Method == "" || len(c.Frames) != 2 {
					continue
				}
				msg := p.Messages[c.Method]
				require.NotNil(t, msg, c.Method)
				var c2s, s2c [][]byte
				for _, f := range frames {
					if f.Seq < c.Frames[0] || f.Seq > c.Frames[1] {
						continue
					}
					b, _ := hex.DecodeString(f.Frame)
					if f.Dir == "c2s" {
						c2s = append(c2s, b)
					} else {
						s2c = append(s2c, b)
					}
				}
				// Request: meta (null), name, one frame per parameter, "".
				require.GreaterOrEqual(t, len(c2s), 3, "%s %d", c.Method, c.I)
				assert.Equal(t, []byte{0}, c2s[0])
				name, _ := (&Schema{Type: "string"}).Append(nil, c.Method)
				assert.Equal(t, name, c2s[1])
				args := append([]json.RawMessage{}, c.Args...)
				for _, f := range msg.Request[len(args):] {
					if v, ok := c.Kwargs[f.Name]; ok {
						args = append(args, v)
					}
				}
				for i, arg := range args {
					dec := json.NewDecoder(bytes.NewReader(arg))
					dec.UseNumber()
					var v any
					require.NoError(t, dec.Decode(&v))
					b, err := msg.Request[i].Type.Append(nil, v)
					require.NoError(t, err, "%s parameter %s", c.Method, msg.Request[i].Name)
					assert.Equal(t, hex.EncodeToString(c2s[2+i]), hex.EncodeToString(b), "%s %d parameter %s", c.Method, c.I, msg.Request[i].Name)
				}
				assert.Empty(t, c2s[len(c2s)-1], "the call terminator")

				// Response: meta (null), flag, the value or the error, "".
				require.GreaterOrEqual(t, len(s2c), 3)
				assert.Equal(t, []byte{0}, s2c[0])
				schema := msg.Response
				if s2c[1][0] == 1 {
					schema = msg.Errors
				}
				v, n, err := schema.Decode(s2c[2])
				require.NoError(t, err, "%s %d", c.Method, c.I)
				assert.Equal(t, len(s2c[2]), n)
				if c.Error != nil {
					assert.Equal(t, *c.Error, v, "%s %d error", c.Method, c.I)
				} else {
					sameJSON(t, c.Result, v, "%s %d result", c.Method, c.I)
				}
				checked++
			}
			t.Logf("%s: %d calls", kind, checked)
			assert.Greater(t, checked, 5)
		})
	}
}

// An independent Avro implementation decodes a recorded union-valued
// get_measured answer (a map of int, double or ndarray) as ndpack does,
// and reads ndpack's encoding of the same value back to it.
func TestGetMeasuredWithPythonAvro(t *testing.T) {
	p, frames, calls := readTranscript(t, "fake-camera")
	var value []byte
	for _, c := range calls {
		if c.Method != "get_measured" || len(c.Frames) != 2 || !strings.Contains(string(c.Result), "ndarray") {
			continue
		}
		var s2c [][]byte
		for _, f := range frames {
			if f.Seq >= c.Frames[0] && f.Seq <= c.Frames[1] && f.Dir == "s2c" {
				b, _ := hex.DecodeString(f.Frame)
				s2c = append(s2c, b)
			}
		}
		value = s2c[2]
		break
	}
	require.NotNil(t, value, "a get_measured answer holding an image")
	schema := p.Messages["get_measured"].Response
	ours, _, err := schema.Decode(value)
	require.NoError(t, err)
	again, err := schema.Append(nil, ours)
	require.NoError(t, err)

	pypeer.RequireModule(t, "avro", "python3-avro")
	in, _ := json.Marshal([]string{hex.EncodeToString(value), hex.EncodeToString(again)})
	out := pypeer.Run(t, `
import hashlib, io, json
import avro.schema, avro.io
ndarray = json.loads(sys.argv[1])
schema = avro.schema.parse(json.dumps({"type": "map", "values": ["int", "double", ndarray]}))
res = []
for h in json.load(sys.stdin):
    v = avro.io.DatumReader(schema).read(avro.io.BinaryDecoder(io.BytesIO(bytes.fromhex(h))))
    res.append({k: ({"typestr": x["typestr"], "shape": x["shape"], "sha256": hashlib.sha256(x["data"]).hexdigest()}
                     if isinstance(x, dict) else x) for k, x in v.items()})
print(json.dumps(res))
`, in, ArraySchema)
	var res []map[string]any
	require.NoError(t, json.Unmarshal(out, &res))
	require.Len(t, res, 2)
	assert.Equal(t, res[0], res[1], "python3-avro reads ndpack's encoding as the daemon's")
	m := ours.(map[string]any)
	for k, v := range res[0] {
		if a, ok := m[k].(*ndarray.Array); ok {
			sum := sha256.Sum256(a.Data)
			assert.Equal(t, v.(map[string]any)["sha256"], hex.EncodeToString(sum[:]), k)
			assert.Equal(t, v.(map[string]any)["typestr"], a.DType.String(), k)
		} else {
			assert.EqualValues(t, v, m[k], k)
		}
	}
	t.Logf("get_measured: %d channels", len(res[0]))
}

// FuzzDecodeValue: no input makes schema-driven decoding panic, recurse
// without end or allocate past its bytes; what it accepts re-encodes to a
// value that decodes the same.
func FuzzDecodeValue(f *testing.F) {
	schema, err := ParseSchema(`{"type": "map", "values": ["null", "int", "double", "string", {"type": "array", "items": ["null", "boolean", "long"]}, ` + ArraySchema + `]}`)
	if err != nil {
		f.Fatal(err)
	}
	a, _ := ndarray.FromSlice([]float32{1, 2})
	b, _ := schema.Append(nil, map[string]any{"a": nil, "b": int32(3), "c": 1.5, "d": "x", "e": []any{nil, true, int64(-7)}, "f": a})
	f.Add(b)
	f.Add([]byte{0x01, 0x02, 0x00})
	f.Add([]byte{0xfe, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, in []byte) {
		v, n, err := schema.Decode(in)
		if err != nil {
			return
		}
		if n > len(in) {
			t.Fatalf("took %d of %d bytes", n, len(in))
		}
		out, err := schema.Append(nil, v)
		if err != nil {
			t.Fatalf("decoded value does not encode: %v", err)
		}
		if _, _, err := schema.Decode(out); err != nil {
			t.Fatalf("re-encoded value does not decode: %v", err)
		}
	})
}
