//go:build !race

package pickle

const raceDetector = false
