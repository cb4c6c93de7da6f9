package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/vmihailenco/msgpack/v5"
)

const demoUsage = `Usage: ndpack demo [--keep]

Make a sample 64x64 float64 array, write it as .npy and as an ext 110
msgpack object into a temporary folder, convert each file into the other
format with 'ndpack convert', check the results byte for byte, and compare
the ext 110 size with the same values sent as a plain msgpack array.

Options:
  --keep   keep the folder and its files to look at (it is removed
           otherwise)

Example:
  go run ./cmd/ndpack demo
`

func runDemo(e env, args []string) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	keep := fs.Bool("keep", false, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("demo takes no arguments")
	}
	out := e.stdout
	dir, err := os.MkdirTemp("", "ndpack-demo-")
	if err != nil {
		return err
	}
	if !*keep {
		defer os.RemoveAll(dir)
	}
	path := func(name string) string { return filepath.Join(dir, name) }

	// A sample "sensor image": a smooth pattern with a little structure.
	const side = 64
	values := make([]float64, side*side)
	for i := range values {
		y, x := float64(i/side), float64(i%side)
		values[i] = math.Sin(x/7) * math.Cos(y/5)
	}
	a, err := ndarray.FromSlice(values, side, side)
	if err != nil {
		return err
	}
	a, err = a.ToOrder('<')
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintf(out, "ndpack demo, in %s (kept)\n", dir)
	} else {
		fmt.Fprintf(out, "ndpack demo, in %s (removed when done; --keep keeps it)\n", dir)
	}
	fmt.Fprintf(out, "  array       %s: %d elements, %d bytes of data\n", a, a.Len(), len(a.Data))

	if err := npybridge.WriteFile(path("sample.npy"), a); err != nil {
		return err
	}
	blob, err := ext110.Marshal(a)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path("sample.msgpack"), blob, 0o644); err != nil {
		return err
	}
	npySize := fileSize(path("sample.npy"))
	fmt.Fprintf(out, "  wrote       sample.npy      %6d bytes (%d of header)\n", npySize, npySize-int64(len(a.Data)))
	fmt.Fprintf(out, "  wrote       sample.msgpack  %6d bytes (ext 110, %d of framing)\n", len(blob), len(blob)-len(a.Data))

	for _, step := range []struct{ in, out, want string }{
		{"sample.npy", "from-npy.msgpack", "sample.msgpack"},
		{"sample.msgpack", "from-msgpack.npy", "sample.npy"},
	} {
		if err := runConvert(e, []string{path(step.in), path(step.out)}); err != nil {
			return err
		}
		got, _ := os.ReadFile(path(step.out))
		want, _ := os.ReadFile(path(step.want))
		if !bytes.Equal(got, want) {
			return fmt.Errorf("demo: %s converted to %s differs from %s", step.in, step.out, step.want)
		}
		fmt.Fprintf(out, "  converted   %-14s -> %-16s identical to %s\n", step.in, step.out, step.want)
	}

	back, err := ext110.Unmarshal(blob)
	if err != nil {
		return err
	}
	v, err := ndarray.Values[float64](back)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  decoded     %s, first values %.4f\n", back, v[:4])

	plain, err := msgpack.Marshal(values)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "  plain msgpack array of the same %d floats: %d bytes; ext 110 is %.1f%% smaller\n",
		len(values), len(plain), 100*(1-float64(len(blob))/float64(len(plain))))
	fmt.Fprintln(out, "All conversions were byte-identical.")
	return nil
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return -1
	}
	return fi.Size()
}
