// Package sharedfiles reads, for tests, the material kept beside the
// repository in ../shared (specifications, corpora, yaq recordings), which
// is never copied into it.
package sharedfiles

import (
	"os"
	"testing"
)

// ReadFile returns the file at path, a path into ../shared. Where it is
// missing the test is skipped, unless the CI environment variable is set:
// there it fails, so that CI never passes by testing nothing.
func ReadFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is required in CI: %v", path, err)
		}
		t.Skipf("no %s beside the repository: %v", path, err)
	}
	return b
}
