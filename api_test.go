package ndpack_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/apilist"
)

// The public API is what api/v1.txt lists, line for line, as go/types sees
// it (internal/apilist): a change to an exported name, signature, constant's
// value or field, to a method or field promoted from an embedded struct, or
// to a member of an internal or unexported type the API reaches, fails
// here until the listing is regenerated (go run ./internal/cmd/apilist >
// api/v1.txt) and committed with it, so that every change to the API is
// deliberate.
func TestAPIListing(t *testing.T) {
	l, err := apilist.List(".", "github.com/ndpack/ndpack")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile("api/v1.txt")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, line := range strings.Split(string(file), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			want[line] = true
		}
	}
	var added, removed []string
	have := map[string]bool{}
	for _, line := range l.Lines {
		have[line] = true
		if !want[line] {
			added = append(added, "+ "+line)
		}
	}
	for line := range want {
		if !have[line] {
			removed = append(removed, "- "+line)
		}
	}
	if len(added)+len(removed) > 0 {
		t.Errorf("the exported API differs from api/v1.txt (regenerate it with go run ./internal/cmd/apilist > api/v1.txt if the change is meant):\n%s",
			strings.Join(append(removed, added...), "\n"))
	}
	if header := fmt.Sprintf("# The exported API of github.com/ndpack/ndpack: %d names.", l.Names); !strings.HasPrefix(string(file), header+"\n") {
		t.Errorf("api/v1.txt does not start %q", header)
	}
}
