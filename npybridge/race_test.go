//go:build race

package npybridge

// raceDetector: the race detector multiplies memory, so RSS bounds do not
// hold under it.
const raceDetector = true
