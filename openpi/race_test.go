//go:build race

package openpi

// raceEnabled: the race detector multiplies memory, so memory bounds do
// not hold under it.
const raceEnabled = true
