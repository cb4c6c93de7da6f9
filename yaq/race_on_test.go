//go:build race

package yaq

// raceEnabled: the race detector slows the daemon several times over, so
// the stress tests send fewer peers.
const raceEnabled = true
