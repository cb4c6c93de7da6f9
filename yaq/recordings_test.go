package yaq

import (
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/yaqrecord"
	"github.com/stretchr/testify/require"
)

// The recordings of yaqc with the Python yaqd-fakes daemons, beside the
// repository (the codec's own tests in package avro read them too).
const sharedYaq = "../../shared/yaq/"

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
