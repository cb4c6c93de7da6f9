//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A FIFO (or any file that is not regular) is never replaced by a rename:
// the node would be lost. Create refuses it, and leaves it as it was.
func TestCreateRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(fifo, 0o666)
	if !errors.Is(err, ErrNotRegular) {
		t.Fatalf("Create on a FIFO: %v, %v; want ErrNotRegular", f, err)
	}
	fi, err := os.Lstat(fifo)
	if err != nil || fi.Mode().Type() != os.ModeNamedPipe {
		t.Fatalf("the FIFO is now %v (%v)", fi.Mode(), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("%d entries in the directory, want the FIFO alone", len(entries))
	}
}
