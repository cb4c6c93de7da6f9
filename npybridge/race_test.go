//go:build race

package npybridge

// raceDetector: the race detector multiplies memory and time, so RSS and
// wall-clock bounds do not hold under it.
const raceDetector = true
