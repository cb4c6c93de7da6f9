package pypeer

import (
	"testing"
)

// A worker answers each command line with one line, keeps its state
// between commands, and is ended (and reaped) when its test ends.
func TestWorker(t *testing.T) {
	Require(t)
	var w *Worker
	t.Run("session", func(t *testing.T) {
		var first string
		w, first = StartWorker(t, `
import sys
n = 0
print("ready", sys.argv[1], flush=True)
for line in sys.stdin:
    n += 1
    print(n, line.strip().upper(), flush=True)
`, "arg")
		if first != "ready arg" {
			t.Fatalf("first line %q, want %q", first, "ready arg")
		}
		for i, want := range []string{"1 SAVE", "2 LOAD", "3 "} {
			cmd := []string{"save", "load", ""}[i]
			if got := w.Do(cmd); got != want {
				t.Fatalf("Do(%q) = %q, want %q", cmd, got, want)
			}
		}
	})
	if w == nil || w.cmd.ProcessState == nil {
		t.Fatal("the worker was not waited for when its test ended")
	}
}
