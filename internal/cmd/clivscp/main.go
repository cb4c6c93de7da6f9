//go:build linux

package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

func main() {
	size := flag.Int("size", 512, "MiB of array data")
	rounds := flag.Int("rounds", 9, "rounds of each timing")
	dir := flag.String("dir", "", "where to build and write (default: a new temporary directory, removed after)")
	flag.Parse()
	if *dir == "" {
		d, err := os.MkdirTemp("", "clivscp")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	bin := filepath.Join(*dir, "ndpack")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/ndpack").CombinedOutput(); err != nil {
		fail(fmt.Errorf("go build ./cmd/ndpack: %v: %s", err, out))
	}
	npy, ext := filepath.Join(*dir, "big.npy"), filepath.Join(*dir, "big.msgpack")
	if err := writeNPY(npy, *size<<20); err != nil {
		fail(err)
	}
	if _, err := run(bin, "convert", npy, ext); err != nil {
		fail(err)
	}
	out, copied := filepath.Join(*dir, "out"), filepath.Join(*dir, "copied")
	for _, d := range []struct{ name, in, ext string }{
		{".npy to ext 110", npy, ".msgpack"},
		{"ext 110 to .npy", ext, ".npy"},
	} {
		var ours, cps []time.Duration
		for range *rounds {
			os.Remove(out + d.ext)
			os.Remove(copied)
			syscall.Sync()
			r, err := run(bin, "convert", d.in, out+d.ext)
			if err != nil {
				fail(err)
			}
			syscall.Sync()
			c, err := run("cp", d.in, copied)
			if err != nil {
				fail(err)
			}
			ours, cps = append(ours, r.took), append(cps, c.took)
			fmt.Fprintf(os.Stderr, "%s: ndpack %v, cp %v\n", d.name, r.took.Round(time.Millisecond), c.took.Round(time.Millisecond))
		}
		os.Remove(out + d.ext)
		rss, err := peakRSS(filepath.Join(*dir, "rss"), bin, "convert", d.in, out+d.ext)
		if err != nil {
			fail(err)
		}
		fmt.Printf("%s, %d MiB: %s; peak RSS %.1f MB\n", d.name, *size, summarize(ours, cps), float64(rss)/1e6)
	}
	os.Remove(out + ".msgpack")
	os.Remove(out + ".npy")
	os.Remove(copied)
}

// summarize words the conversion's speed relative to cp's, round by
// round: above 1 is faster than cp.
func summarize(ours, cps []time.Duration) string {
	ratios := make([]float64, len(ours))
	for i := range ours {
		ratios[i] = float64(cps[i]) / float64(ours[i])
	}
	slices.Sort(ratios)
	return fmt.Sprintf("best times %v against cp's %v, %.2fx the speed of cp; per round median %.2fx (%.2f-%.2fx)",
		slices.Min(ours).Round(time.Millisecond), slices.Min(cps).Round(time.Millisecond),
		float64(slices.Min(cps))/float64(slices.Min(ours)), ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1])
}

// result is one timed run of a command.
type result struct {
	took time.Duration
}

func run(name string, args ...string) (result, error) {
	cmd := exec.Command(name, args...)
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return result{}, fmt.Errorf("%s %v: %w", name, args, err)
	}
	return result{took: time.Since(start)}, nil
}

// peakRSS runs a command under GNU time and returns its peak RSS in
// bytes. Not from this process's own rusage of the child: Linux charges
// a child, until it execs, this process's resident memory, the 512 MiB
// array written at the start among it.
func peakRSS(report string, name string, args ...string) (int64, error) {
	if _, err := run("/usr/bin/time", append([]string{"-f", "%M", "-o", report, name}, args...)...); err != nil {
		return 0, err
	}
	b, err := os.ReadFile(report)
	if err != nil {
		return 0, err
	}
	var kib int64
	if _, err := fmt.Sscan(string(b), &kib); err != nil {
		return 0, fmt.Errorf("/usr/bin/time wrote %q: %w", b, err)
	}
	return kib << 10, nil
}

// writeNPY writes a .npy of n bytes of <f8 counting up.
func writeNPY(name string, n int) error {
	v := make([]float64, n/8)
	for i := range v {
		v[i] = float64(i)
	}
	a, err := ndarray.View(v)
	if err != nil {
		return err
	}
	return npybridge.WriteFile(name, a)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "clivscp:", err)
	os.Exit(1)
}
