package pypeer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// WorkerTimeout bounds one command of a Worker: a peer that has not
// answered by then is killed and the test fails.
const WorkerTimeout = 2 * time.Minute

// A Worker is a long-running Python peer driven one line at a time: it
// reads a command from its standard input, one line each, and answers each
// with one line on its standard output. Benchmarks use it to time a Python
// operation beside a Go one in every iteration without starting Python, or
// loading its data, each time.
type Worker struct {
	t      testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr bytes.Buffer // written by exec's copying goroutine until wait returns
	wait   func() error
}

// StartWorker starts script (after the reference code) with args as
// sys.argv[1:], waits for the first line it prints (it prints one once its
// data is loaded) and returns the Worker and that line. The script must
// flush every line it prints (print(..., flush=True)). The process is
// killed, by its process id, when the test ends.
func StartWorker(t testing.TB, script string, args ...string) (*Worker, string) {
	t.Helper()
	Require(t)
	w := &Worker{t: t}
	w.cmd = exec.Command(Python, append([]string{"-c", Reference + "\n" + script}, args...)...)
	w.cmd.Stderr = &w.stderr
	in, err := w.cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	w.in, w.out = in, bufio.NewReader(out)
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.wait = sync.OnceValue(w.cmd.Wait)
	t.Cleanup(func() {
		w.cmd.Process.Kill()
		w.wait()
	})
	return w, w.readLine("its first line")
}

// Do sends cmd (one line, without its newline) and returns the line the
// worker answers, without its newline. A worker that exits, or does not
// answer within WorkerTimeout, fails the test with its standard error.
func (w *Worker) Do(cmd string) string {
	w.t.Helper()
	if _, err := io.WriteString(w.in, cmd+"\n"); err != nil {
		w.fail(fmt.Sprintf("python worker did not take %q: %v", cmd, err))
	}
	return w.readLine(fmt.Sprintf("an answer to %q", cmd))
}

// readLine reads one line of the worker's output, killing the worker if
// none comes within WorkerTimeout (which ends the read).
func (w *Worker) readLine(what string) string {
	w.t.Helper()
	timer := time.AfterFunc(WorkerTimeout, func() { w.cmd.Process.Kill() })
	line, err := w.out.ReadString('\n')
	expired := !timer.Stop()
	if err != nil {
		msg := fmt.Sprintf("python worker gave no %s: %v", what, err)
		if expired {
			msg = fmt.Sprintf("python worker gave no %s within %v and was killed", what, WorkerTimeout)
		}
		w.fail(msg)
	}
	return strings.TrimSuffix(line, "\n")
}

// fail ends the worker and fails the test with what it wrote to its
// standard error.
func (w *Worker) fail(msg string) {
	w.t.Helper()
	w.cmd.Process.Kill()
	w.wait()
	w.t.Fatalf("%s\n%s", msg, w.stderr.String())
}
