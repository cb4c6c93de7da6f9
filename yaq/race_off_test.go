//go:build !race

package yaq

const raceEnabled = false
