package npybridge_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// createLimitChild, when set, makes this test binary the child of
// TestCreateMappedUnderAddressSpaceLimit: it limits its own address space
// to 4 GiB, then creates the file named with Replace.
const createLimitChild = "NPYBRIDGE_CREATE_LIMIT_CHILD"

// CreateMapped maps the new file before it gives it the name: when the map
// fails (an address-space limit, as batch schedulers set), nothing appears
// at the name and the file it would replace is kept. Before, it renamed
// the file into place first, so the failure left a 16 GiB file where the
// user's file had been.
func TestCreateMappedUnderAddressSpaceLimit(t *testing.T) {
	if name := os.Getenv(createLimitChild); name != "" {
		lim := syscall.Rlimit{Cur: 4 << 30, Max: 4 << 30} // room for the runtime (Go 1.24 reserves more than 1 GiB), not for 16 GiB
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &lim); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(3)
		}
		for _, o := range []npybridge.MapOptions{{Replace: true}, {}} {
			m, err := o.CreateMapped(name, ndarray.DTypeOf[float64](), 2048, 1024, 1024)
			if err == nil {
				m.Close()
				fmt.Println("mapped 16 GiB under a 1 GiB limit")
				os.Exit(3)
			}
			fmt.Println(err)
		}
		os.Exit(0)
	}
	dir := t.TempDir()
	old := filepath.Join(dir, "old.npy")
	if err := os.WriteFile(old, []byte("the user's file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{old, filepath.Join(dir, "new.npy")} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCreateMappedUnderAddressSpaceLimit$")
		cmd.Env = append(os.Environ(), createLimitChild+"="+name)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), "cannot allocate memory") {
			t.Errorf("the map did not fail for want of address space:\n%s", out)
		}
	}
	fi, err := os.Stat(old)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != int64(len("the user's file")) {
		t.Fatalf("the file replaced by a CreateMapped that failed: now %d bytes", fi.Size())
	}
	if b, err := os.ReadFile(old); err != nil || string(b) != "the user's file" {
		t.Errorf("the file replaced by a CreateMapped that failed: %q, %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files left in the directory, want the old one only", len(entries))
	}
}
