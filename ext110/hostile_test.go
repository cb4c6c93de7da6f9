package ext110_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkRefused runs decode on in and checks the hostile-input bounds: an
// error, in time, in bounded memory.
func checkRefused(t *testing.T, in hostile.Input, decode func() error) error {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := hostile.CPUTime()
	err := decode()
	took := hostile.CPUTime() - start
	runtime.ReadMemStats(&after)
	t.Logf("%d-byte input: %v, %d bytes allocated: %v", len(in.Bytes), took, after.TotalAlloc-before.TotalAlloc, err)
	require.Error(t, err)
	assert.Less(t, took, hostile.MaxTime)
	assert.LessOrEqual(t, after.TotalAlloc-before.TotalAlloc, hostile.MaxAlloc(in), "bytes allocated")
	return err
}

// The stream Decoder refuses every hostile input in time and bounded
// memory. (Whole messages are the root package's: see its
// TestUnmarshalMessageRefusesHostileInput.)
func TestDecoderRefusesHostileInput(t *testing.T) {
	for _, in := range hostile.Inputs() {
		t.Run(in.Name, func(t *testing.T) {
			checkRefused(t, in, func() error { _, err := ext110.NewDecoder(bytes.NewReader(in.Bytes)).Decode(); return err })
		})
	}
}
