package hostile

import (
	"os"
	"testing"
)

// TruncateFile cuts the file at path to size through a descriptor of its
// own, as another process would while the code under test reads it.
func TruncateFile(t testing.TB, path string, size int64) {
	t.Helper()
	other, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := other.Close(); err != nil {
		t.Fatal(err)
	}
}
