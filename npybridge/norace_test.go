//go:build !race

package npybridge

const raceDetector = false
