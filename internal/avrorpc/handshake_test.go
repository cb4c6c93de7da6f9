package avrorpc

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/yaqrecord"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sharedYaq = "../../../shared/yaq/"

// python3-avro writes the HandshakeRequest ndpack's client sends, and reads
// a recorded HandshakeResponse as ndpack reads it.
func TestHandshakeRecordsWithPythonAvro(t *testing.T) {
	_, frames, _ := yaqrecord.Read(t, sharedYaq, "fake-sensor")
	pypeer.RequireModule(t, "avro", "python3-avro")
	resp, _ := hex.DecodeString(frames[3].Frame) // the NONE answer
	ours, _, err := handshakeResponse.Decode(resp)
	require.NoError(t, err)
	in, _ := json.Marshal([]string{hex.EncodeToString(resp)})
	out := pypeer.Run(t, `
import hashlib, io, json
import avro.schema, avro.io
names = avro.schema.Names()
md5 = {"type": "fixed", "name": "MD5", "size": 16, "namespace": "org.apache.avro.ipc"}
req = avro.schema.parse(json.dumps({"type": "record", "name": "HandshakeRequest", "namespace": "org.apache.avro.ipc", "fields": [
    {"name": "clientHash", "type": md5}, {"name": "clientProtocol", "type": ["null", "string"]},
    {"name": "serverHash", "type": "MD5"}, {"name": "meta", "type": ["null", {"type": "map", "values": "bytes"}]}]}))
resp = avro.schema.parse(json.dumps({"type": "record", "name": "HandshakeResponse", "namespace": "org.apache.avro.ipc", "fields": [
    {"name": "match", "type": {"type": "enum", "name": "HandshakeMatch", "symbols": ["BOTH", "CLIENT", "NONE"]}},
    {"name": "serverProtocol", "type": ["null", "string"]},
    {"name": "serverHash", "type": ["null", md5]}, {"name": "meta", "type": ["null", {"type": "map", "values": "bytes"}]}]}))
buf = io.BytesIO()
avro.io.DatumWriter(req).write({"clientHash": b" " * 16, "clientProtocol": None, "serverHash": b" " * 16, "meta": {}}, avro.io.BinaryEncoder(buf))
r = avro.io.DatumReader(resp).read(avro.io.BinaryDecoder(io.BytesIO(bytes.fromhex(json.load(sys.stdin)[0]))))
print(json.dumps({"request": buf.getvalue().hex(), "match": r["match"], "hash": r["serverHash"].hex(),
                  "protocol_md5": hashlib.md5(r["serverProtocol"].encode()).hexdigest()}))
`, in)
	var res map[string]string
	require.NoError(t, json.Unmarshal(out, &res))
	assert.Equal(t, frames[0].Frame, res["request"], "yaqc's first HandshakeRequest, as python3-avro writes it")
	m := ours.(map[string]any)
	assert.Equal(t, res["match"], m["match"])
	assert.Equal(t, res["hash"], hex.EncodeToString(m["serverHash"].([]byte)))
	assert.Equal(t, res["hash"], res["protocol_md5"])

	// The records' Go side: yaqc's request written, yaqd-core's answer
	// read and written again, byte for byte.
	var spaces [16]byte
	copy(spaces[:], "                ")
	assert.Equal(t, frames[0].Frame, hex.EncodeToString(HandshakeRequest{ClientHash: spaces, ServerHash: spaces}.Append(nil)))
	r := NewFrameReader(bufio.NewReader(bytes.NewReader(frameOf(resp))), ReaderOptions{})
	hr, err := r.ReadHandshakeResponse(len(resp))
	require.NoError(t, err)
	assert.Equal(t, MatchNone, hr.Match)
	require.NotNil(t, hr.ServerHash)
	assert.Equal(t, res["hash"], hex.EncodeToString(hr.ServerHash[:]))
	assert.Equal(t, resp, hr.Append(nil), "yaqd-core's NONE answer")
}

// A handshake's records read back as they were written, the request's
// meta skipped whatever it holds, and refused whole when cut short.
func TestHandshakeRoundTrip(t *testing.T) {
	proto := `{"protocol": "x"}`
	req := HandshakeRequest{ClientHash: [16]byte{1}, ClientProtocol: &proto, ServerHash: [16]byte{2}}
	withMeta := mustAppend(handshakeRequest, map[string]any{"clientHash": req.ClientHash[:], "clientProtocol": proto,
		"serverHash": req.ServerHash[:], "meta": map[string]any{"k": []byte("v")}})
	for _, b := range [][]byte{req.Append(nil), withMeta} {
		got, err := readerOf(frameOf(b)).ReadHandshakeRequest()
		require.NoError(t, err)
		assert.Equal(t, req, got)
		_, err = readerOf(frameOf(b[:len(b)-1])).ReadHandshakeRequest()
		assert.ErrorIs(t, err, ndarray.ErrTruncated)
	}
	for _, resp := range []HandshakeResponse{{Match: MatchBoth}, {Match: MatchClient, ServerProtocol: &proto, ServerHash: &[16]byte{3}}} {
		got, err := readerOf(frameOf(resp.Append(nil))).ReadHandshakeResponse(1 << 10)
		require.NoError(t, err)
		assert.Equal(t, resp, got)
	}
	_, err := readerOf(frameOf(HandshakeResponse{Match: MatchNone, ServerProtocol: &proto}.Append(nil))).ReadHandshakeResponse(8)
	assert.ErrorIs(t, err, ndarray.ErrTooLarge)
	assert.Equal(t, "HandshakeMatch(7)", HandshakeMatch(7).String())
	assert.Equal(t, "HandshakeRequest", handshakeRequest.Name)
}
