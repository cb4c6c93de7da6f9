// Package yaqrecord reads the recordings of yaqc talking to the Python
// yaqd-fakes daemons, kept beside the repository in ../shared/yaq (the
// served protocol, every frame each way, and each call with its decoded
// result), for the tests of package yaq and of its codec, yaq/avro.
package yaqrecord

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Kinds are the daemons recorded.
var Kinds = []string{"fake-camera", "fake-spectrometer", "fake-sensor", "fake-triggered-sensor",
	"fake-continuous-hardware", "fake-discrete-hardware", "fake-has-turret"}

// Frame is one Avro RPC frame as it crossed the wire, in hex.
type Frame struct {
	Seq   int    `json:"seq"`
	Dir   string `json:"dir"`
	Frame string `json:"frame"`
}

// Call is one call yaqc made, with what it decoded and the frames that
// carried it.
type Call struct {
	I      int                        `json:"i"`
	Method string                     `json:"method"`
	Args   []json.RawMessage          `json:"args"`
	Kwargs map[string]json.RawMessage `json:"kwargs"`
	Result json.RawMessage            `json:"result"`
	Error  *string                    `json:"error"`
	Frames []int                      `json:"frames"`
}

// Read returns the protocol the daemon of kind served (its JSON text),
// the frames and the calls recorded in dir (the path of ../shared/yaq/
// from the test's package). It skips the test when the shared folder is
// absent, and fails it under CI, as sharedfiles does.
func Read(t *testing.T, dir, kind string) (string, []Frame, []Call) {
	t.Helper()
	served := sharedfiles.ReadFile(t, dir+"protocols/"+kind+".served.json")
	raw, err := os.ReadFile(dir + "transcripts/" + kind + ".jsonl")
	require.NoError(t, err)
	var frames []Frame
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var f Frame
		require.NoError(t, json.Unmarshal([]byte(line), &f))
		frames = append(frames, f)
	}
	cj, err := os.ReadFile(dir + "transcripts/" + kind + ".calls.json")
	require.NoError(t, err)
	var calls struct {
		Calls []Call `json:"calls"`
	}
	require.NoError(t, json.Unmarshal(cj, &calls))
	return string(served), frames, calls.Calls
}

// Summarize turns a decoded value into the form the recordings use:
// arrays as {ndarray: {typestr, shape, sha256, nbytes}}, non-finite
// doubles as {double: "NaN"}.
func Summarize(v any) any {
	switch x := v.(type) {
	case *ndarray.Array:
		sum := sha256.Sum256(x.Data)
		return map[string]any{"ndarray": map[string]any{"typestr": x.DType.String(), "shape": x.Shape,
			"sha256": hex.EncodeToString(sum[:]), "nbytes": len(x.Data)}}
	case float64:
		switch {
		case math.IsNaN(x):
			return map[string]any{"double": "NaN"}
		case math.IsInf(x, 1):
			return map[string]any{"double": "Infinity"}
		case math.IsInf(x, -1):
			return map[string]any{"double": "-Infinity"}
		}
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = Summarize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Summarize(e)
		}
		return out
	}
	return v
}

// SameJSON asserts that got, summarized, is the recorded value want.
func SameJSON(t *testing.T, want json.RawMessage, got any, msgAndArgs ...any) {
	t.Helper()
	b, err := json.Marshal(Summarize(got))
	require.NoError(t, err)
	var w, g any
	require.NoError(t, json.Unmarshal(want, &w))
	require.NoError(t, json.Unmarshal(b, &g))
	assert.Equal(t, w, g, msgAndArgs...)
}
