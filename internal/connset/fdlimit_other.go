//go:build !unix

package connset

// openFileLimit returns 0: there is no open-file limit to read here.
func openFileLimit() int { return 0 }
