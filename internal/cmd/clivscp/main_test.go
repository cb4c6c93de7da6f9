//go:build linux

package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The summary compares best with best, and gives the per-round ratios'
// median and range as speeds relative to cp.
func TestSummarize(t *testing.T) {
	ms := time.Millisecond
	got := summarize([]time.Duration{200 * ms, 100 * ms, 150 * ms}, []time.Duration{100 * ms, 90 * ms, 150 * ms})
	assert.Equal(t, "best times 100ms against cp's 90ms, 0.90x the speed of cp; per round median 0.90x (0.50-1.00x)", got)
}
