// Command parallelfill splits one computation over worker processes that
// share nothing but a memory-mapped .npy file, as NEP 1's "Polly Parallel"
// does with numpy's open_memmap:
//
//	go run ./examples/parallelfill -out dist.npy -rows 4096 -cols 1024 -workers 4
//
// It creates the file with npybridge.CreateMapped (all zeros, taking no
// disk space yet), starts -workers copies of itself, each of which opens the
// file with npybridge.OpenMappedWritable and fills its own block of rows
// through Mapped.Rows, waits for them, and checks every value through its
// own map, which shows what the workers wrote. The value at row i, column j
// is the squared distance of (i, j) from the centre of the array, so that
// numpy can check it exactly:
//
//	i, j = np.ogrid[:rows, :cols]; (i - rows//2)**2 + (j - cols//2)**2
//
// The workers write disjoint rows, so they need no lock and no messages.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// value is what the computation puts at row i, column j.
func value(i, j, rows, cols int) float64 {
	di, dj := i-rows/2, j-cols/2
	return float64(di*di + dj*dj)
}

// run is the program, parent or worker; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("parallelfill", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "parallelfill.npy", "the .npy file to create and fill")
	rows := fs.Int("rows", 4096, "rows of the array")
	cols := fs.Int("cols", 1024, "columns of the array")
	workers := fs.Int("workers", 4, "worker processes")
	force := fs.Bool("force", false, "replace -out if it exists")
	worker := fs.String("worker", "", "internal: fill rows LO,HI of -out and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *worker != "" {
		if err := fill(*out, *worker); err != nil {
			fmt.Fprintf(stderr, "parallelfill worker %s: %v\n", *worker, err)
			return 1
		}
		return 0
	}
	if *rows < 0 || *cols < 0 || *workers < 1 {
		fmt.Fprintln(stderr, "parallelfill: -rows and -cols must be at least 0, -workers at least 1")
		return 2
	}
	start := time.Now()
	if err := parent(*out, *rows, *cols, *workers, *force); err != nil {
		fmt.Fprintf(stderr, "parallelfill: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %dx%d <f8 filled by %d processes and verified in %v\n", *out, *rows, *cols, *workers, time.Since(start).Round(time.Millisecond))
	return 0
}

// parent creates the file, starts the workers, waits for them and checks
// the result.
func parent(name string, rows, cols, workers int, force bool) error {
	m, err := npybridge.MapOptions{Replace: force}.CreateMapped(name, ndarray.DTypeOf[float64](), rows, cols)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists: -force replaces it, or choose another -out", name)
	}
	if err != nil {
		return err
	}
	defer m.Close()
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmds := make([]*exec.Cmd, workers)
	for w := range cmds {
		lo, hi := w*rows/workers, (w+1)*rows/workers
		cmds[w] = exec.Command(self, "-out", name, "-worker", fmt.Sprintf("%d,%d", lo, hi))
		cmds[w].Stdout, cmds[w].Stderr = os.Stderr, os.Stderr
		if err := cmds[w].Start(); err != nil {
			for _, c := range cmds[:w] {
				c.Process.Kill()
				c.Wait()
			}
			return err
		}
	}
	var failed error
	for w, c := range cmds {
		if err := c.Wait(); err != nil {
			failed = errors.Join(failed, fmt.Errorf("worker %d: %v", w, err))
		}
	}
	if failed != nil {
		return failed
	}
	// The parent's own map shows what the workers wrote: the pages are the
	// file's, shared by every process that maps it.
	v, err := ndarray.Values[float64](m.Array)
	if err != nil {
		return err
	}
	for k, x := range v {
		if want := value(k/cols, k%cols, rows, cols); x != want {
			return fmt.Errorf("%s: row %d column %d holds %v, want %v", name, k/cols, k%cols, x, want)
		}
	}
	return m.Close()
}

// fill is a worker: it maps the file the parent created and computes rows
// lo to hi-1 (spec "LO,HI") into it.
func fill(name, spec string) error {
	a, b, _ := strings.Cut(spec, ",")
	lo, err1 := strconv.Atoi(a)
	hi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("-worker %q is not LO,HI", spec)
	}
	m, err := npybridge.MapOptions{}.OpenMappedWritable(name)
	if err != nil {
		return err
	}
	defer m.Close()
	if len(m.Array.Shape) != 2 || m.Array.DType != ndarray.DTypeOf[float64]() {
		return fmt.Errorf("%s holds %s %s, not a 2-d array of float64", name, m.Array.DType, ndarray.FormatShape(m.Array.Shape))
	}
	part, err := m.Rows(lo, hi)
	if err != nil {
		return err
	}
	v, err := ndarray.Values[float64](part) // aliases the file's pages
	if err != nil {
		return err
	}
	rows, cols := m.Array.Shape[0], m.Array.Shape[1]
	for k := range v {
		v[k] = value(lo+k/cols, k%cols, rows, cols)
	}
	return m.Close()
}
