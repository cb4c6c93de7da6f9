//go:build !race

package openpi

const raceEnabled = false
