//go:build !race

package yaqrpc

const raceEnabled = false
