package yaq

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

// The recordings of yaqc with the Python yaqd-fakes daemons, beside the
// repository (the codec's own tests in package avro read them too).
const sharedYaq = "../../shared/yaq/"

var kinds = []string{"fake-camera", "fake-spectrometer", "fake-sensor", "fake-triggered-sensor",
	"fake-continuous-hardware", "fake-discrete-hardware", "fake-has-turret"}

type frame struct {
	Seq   int    `json:"seq"`
	Dir   string `json:"dir"`
	Frame string `json:"frame"`
}

type recordedCall struct {
	I      int                        `json:"i"`
	Method string                     `json:"method"`
	Args   []json.RawMessage          `json:"args"`
	Kwargs map[string]json.RawMessage `json:"kwargs"`
	Result json.RawMessage            `json:"result"`
	Error  *string                    `json:"error"`
	Frames []int                      `json:"frames"`
}

func readTranscript(t *testing.T, kind string) (*Protocol, []frame, []recordedCall) {
	served := sharedfiles.ReadFile(t, sharedYaq+"protocols/"+kind+".served.json")
	p, err := ParseProtocol(string(served))
	require.NoError(t, err)
	raw, err := os.ReadFile(sharedYaq + "transcripts/" + kind + ".jsonl")
	require.NoError(t, err)
	var frames []frame
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var f frame
		require.NoError(t, json.Unmarshal([]byte(line), &f))
		frames = append(frames, f)
	}
	cj, err := os.ReadFile(sharedYaq + "transcripts/" + kind + ".calls.json")
	require.NoError(t, err)
	var calls struct {
		Calls []recordedCall `json:"calls"`
	}
	require.NoError(t, json.Unmarshal(cj, &calls))
	return p, frames, calls.Calls
}

// summarize turns a decoded value into the form the recordings use:
// arrays as {ndarray: {typestr, shape, sha256, nbytes}}, non-finite doubles
// as {double: "NaN"}.
func summarize(v any) any {
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
			out[k] = summarize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = summarize(e)
		}
		return out
	}
	return v
}

func sameJSON(t *testing.T, want json.RawMessage, got any, msgAndArgs ...any) {
	t.Helper()
	b, err := json.Marshal(summarize(got))
	require.NoError(t, err)
	var w, g any
	require.NoError(t, json.Unmarshal(want, &w))
	require.NoError(t, json.Unmarshal(b, &g))
	assert.Equal(t, w, g, msgAndArgs...)
}
