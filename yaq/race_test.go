//go:build race

package yaq

// raceEnabled: the race detector multiplies memory, so RSS bounds do not apply.
const raceEnabled = true
