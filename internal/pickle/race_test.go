//go:build race

package pickle

// raceDetector: the race detector slows these loops tenfold.
const raceDetector = true
