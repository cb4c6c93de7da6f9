package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

const createUsage = `Usage: ndpack create [--force] --dtype DTYPE --shape D1,D2,... OUT.npy

Create the .npy file OUT.npy for an array of the given dtype and shape, all
zeros, for processes to fill in place: each maps it read-write (numpy's
np.lib.format.open_memmap(OUT, mode="r+"), or npybridge.OpenMappedWritable
in Go) and writes its own rows. The file is the one
open_memmap(OUT, mode="w+", dtype=DTYPE, shape=SHAPE) makes, byte for byte,
but its zeros are not written: on a file system with holes a 64 GiB array
takes no disk space until it is filled, and is created at once. The file
appears complete under its name; an existing file is left alone unless
--force is given, and then replaced whole.

While it is being filled, 'ndpack inspect OUT.npy' shows what has been
written so far (zeros elsewhere).

Options:
  --dtype DTYPE  a NumPy typestr: <f8, <i4, |u1, |b1, >c16, <M8[ns], ...
                 ("=" is this machine's byte order)
  --shape SHAPE  dimensions separated by commas: 4096,1024; "" or () is a
                 0-d array; a tuple as numpy prints it, (4096, 1024), too
  --force        replace OUT.npy if it exists

Examples:
  ndpack create frames.npy --dtype '<u2' --shape 1000,2048,2048
  ndpack create --force out.npy --dtype '<f8' --shape 4096,1024
`

func runCreate(e env, args []string) error {
	flags := flag.NewFlagSet("create", flag.ContinueOnError)
	dtype := flags.String("dtype", "", "")
	shapeText := flags.String("shape", "", "")
	force := flags.Bool("force", false, "")
	var shapeSet bool
	files, err := parseFlags(flags, args)
	if err != nil {
		return err
	}
	flags.Visit(func(f *flag.Flag) { shapeSet = shapeSet || f.Name == "shape" })
	switch {
	case len(files) != 1:
		return usageError("name one output file")
	case *dtype == "":
		return usageError("--dtype is required (a typestr such as <f8)")
	case !shapeSet:
		return usageError("--shape is required (such as 4096,1024)")
	}
	out := files[0]
	if out == "-" {
		return usageError("create writes a file to be mapped, not standard output")
	}
	if f := formatOf(out); f != "" && f != formatNPY {
		return usageError("create makes .npy files, not %s", f)
	}
	dt, err := ndarray.ParseDType(*dtype)
	if err != nil {
		return usageError("--dtype %s: %v", *dtype, err)
	}
	shape, err := parseShape(*shapeText)
	if err != nil {
		return usageError("--shape %q: %v", *shapeText, err)
	}
	// The byte order is the user's to choose: the CLI writes no values,
	// so a byte-swapped file is no trap here.
	m, err := npybridge.MapOptions{Replace: *force, RawByteOrder: true}.CreateMapped(out, dt, shape...)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: the file exists (--force replaces it)", out)
	}
	if err != nil {
		return err
	}
	return m.Close()
}

// parseShape reads "4096,1024", "(4096, 1024)", "7", "(7,)", "" or "()".
func parseShape(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	s = strings.TrimSuffix(s, ",")
	if s == "" {
		return []int{}, nil
	}
	parts := strings.Split(s, ",")
	shape := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(p))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("dimension %d is %q, not a count", i, strings.TrimSpace(p))
		}
		shape[i] = n
	}
	return shape, nil
}
