//go:build race

package main

// raceDetector: the race detector multiplies memory, so RSS bounds do not
// hold under it.
const raceDetector = true
