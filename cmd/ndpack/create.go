package main

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/internal/atomicfile"
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
  --dtype DTYPE  as np.dtype takes it: float64, f8, <i4, uint8, bool,
                 >c16, datetime64[ns], str, S10, a typestr, or a record:
                 'f4,i2', "[('x', '<f4'), ('y', '<f4')]", a dict
                 "{'names': [...], 'formats': [...], 'offsets': [...]}"
                 (or in JSON), or NAME:DTYPE fields 'x:<f4,y:<f4,id:<u2'
                 ("=" and no byte order are this machine's; long double
                 and object dtypes are refused)
  --shape SHAPE  dimensions separated by commas: 4096,1024; "" or () is a
                 0-d array; a tuple as numpy prints it, (4096, 1024), too
  --force        replace OUT.npy if it exists

Examples:
  ndpack create frames.npy --dtype '<u2' --shape 1000,2048,2048
  ndpack create --force out.npy --dtype float64 --shape 4096,1024
  ndpack create points.npy --dtype 'x:<f4,y:<f4,id:<u2' --shape 1000000
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
		return usageError("--dtype is required (such as float64, <f8 or 'x:<f4,y:<f4')")
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
	dt, err := parseDTypeFlag(*dtype)
	if err != nil {
		return usageError("--dtype %v", err)
	}
	shape, err := parseShape(*shapeText)
	if err != nil {
		return usageError("--shape %q: %v", *shapeText, err)
	}
	if base, sub, ok := dt.Subarray(); ok {
		// open_memmap would write numpy's |V descr and lose the
		// elements' dtype; np.zeros(SHAPE, DTYPE) folds the shape.
		whole := append(append([]int{}, shape...), sub...)
		return usageError("--dtype %s is a subarray dtype, whose shape numpy folds into the array's: give --dtype '%s' --shape %s", dt, base, strings.ReplaceAll(strings.Trim(ndarray.FormatShape(whole), "(,)"), " ", ""))
	}
	// The byte order is the user's to choose: the CLI writes no values,
	// so a byte-swapped file is no trap here.
	return createNPY(e.cleanup, out, dt, shape, *force)
}

// createNPY writes the header of an array of dtype dt and shape and extends
// the file to the data's size (a hole, read as zeros), as
// npybridge.CreateMapped does, but without mapping it: a process whose
// address space is limited (as batch schedulers limit it) creates files
// larger than it could map. The file is made beside out and appears there
// complete, or nothing appears: with force it replaces out only once
// whole, without it an existing out is refused.
func createNPY(c *cleanups, out string, dt ndarray.DType, shape []int, force bool) error {
	invalid := func(err error) error {
		return &os.PathError{Op: "create", Path: out, Err: &ndarray.Error{Pkg: "npybridge", Err: npybridge.ErrInvalidArray, Offset: -1, Cause: err}}
	}
	if err := dt.Validate(); err != nil {
		return invalid(err)
	}
	if dt.IsSubarray() {
		return invalid(fmt.Errorf("an array of the subarray dtype %s: np.save writes its shape as part of the array's", dt))
	}
	if dt.IsRecord() {
		if _, err := dt.Descr(); err != nil {
			return invalid(err)
		}
	}
	n, err := ndarray.ByteSize(dt, shape)
	if err != nil {
		return invalid(err)
	}
	exists := fmt.Errorf("%s: the file exists (--force replaces it)", out)
	if !force {
		if _, err := os.Lstat(out); err == nil {
			return exists
		}
	}
	header := npybridge.AppendHeader(nil, dt, shape)
	size := int64(len(header)) + int64(n)
	fill := func(f *os.File) error {
		if _, err := f.Write(header); err != nil {
			return err
		}
		return f.Truncate(size)
	}
	var t *atomicfile.File
	remove, err := c.make(func() (func(), error) {
		var err error
		if t, err = atomicfile.Create(out, 0o666); err != nil {
			return nil, err
		}
		return t.Abort, nil
	})
	if err != nil {
		return err
	}
	defer remove()
	if err := fill(t.File); err != nil {
		t.Abort()
		return err
	}
	if force {
		return t.Commit()
	}
	err = t.CommitNew()
	switch {
	case err == nil:
		return t.File.Close()
	case errors.Is(err, fs.ErrExist):
		return exists
	}
	// No hard links (FAT): create it in place, where another process may
	// see it for a moment without its header; a failure removes it.
	f, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return exists
	}
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		os.Remove(out)
		return err
	}
	return f.Close()
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
