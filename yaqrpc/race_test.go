//go:build race

package yaqrpc

// raceEnabled: the race detector multiplies memory, so RSS bounds do not apply.
const raceEnabled = true
