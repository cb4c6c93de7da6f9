package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"math"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
)

const showUsage = `Usage: ndpack show [options] FILE[:NAME]...

Print the values of the arrays in FILE as numpy's print(a) shows them:
aligned, floats to 8 digits at most, long arrays summarised with "...".
An .npz or a msgpack map prints each array under its name; FILE:NAME
picks one (an npz member, a msgpack path), as convert takes it. A record
array prints field by field.

Options:
  --full           print every value, never "..."
  --precision N    digits after the point for floats (default 8)
  --rows A:B       only rows A to B of the first axis, as Python slices
                   them (negative counts from the end; A or B may be left
                   out)
  --field NAME     only the field NAME of a record array (numpy's
                   a['NAME']; "outer.inner" for a nested record's field)
  --max-header-size N  read .npy headers of up to N bytes (default 10000,
                   numpy's max_header_size): records of thousands of fields
  --max-size SIZE  the largest array read into memory (default half the
                   memory the process may use; 512M, 2G ...): a larger
                   one is refused before anything is allocated
  --csv            write the values as CSV (a 1-D array one per line, a
                   2-D array row by row), for other tools
  --json           write {"dtype", "shape", "values"} as one JSON line (an
                   archive: an object of them by name)
` + remoteHelp + `
Examples:
  ndpack show image.npy
  ndpack show run.npz:spectrum --rows -10:
  ndpack show --csv table.npy > table.csv
  ndpack show --json run.npz | jq '.image.shape'
`

func runShow(e env, args []string) error {
	fs := flag.NewFlagSet("show", flag.ContinueOnError)
	full := fs.Bool("full", false, "")
	precision := fs.Int("precision", 8, "")
	rows := fs.String("rows", "", "")
	field := fs.String("field", "", "")
	asCSV := fs.Bool("csv", false, "")
	asJSON := fs.Bool("json", false, "")
	maxHeader := addMaxHeaderFlag(fs)
	maxSize := addMaxSizeFlag(fs)
	remoteSet := addRemoteFlags(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := remoteSet.check(); err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usageError("name a FILE to show")
	case *precision < 0 || *precision > 30:
		return usageError("--precision %d: want 0 to 30 digits", *precision)
	case *asCSV && *asJSON:
		return usageError("--csv and --json: pick one")
	}
	sel, err := parseRows(*rows)
	if err != nil {
		return err
	}
	o := numpyDefaults
	o.precision = *precision
	if *full {
		o.threshold = math.MaxInt
	}
	for i, spec := range pos {
		in, err := openDiffInput(e, spec, sel, inputOptions{maxHeader: int(*maxHeader), maxSize: int64(*maxSize), stderr: e.stderr, remote: *remoteSet})
		if err != nil {
			return err
		}
		err = showInput(e.stdout, in, o, *field, *asCSV, *asJSON, len(pos) > 1 || len(in.arrays) > 1)
		in.fa.close()
		if err != nil {
			return fmt.Errorf("%s: %w", in.name, err)
		}
		if i < len(pos)-1 && !*asJSON && !*asCSV {
			fmt.Fprintln(e.stdout)
		}
	}
	return nil
}

// showInput prints the arrays of one input.
func showInput(w io.Writer, in *diffInput, o printOptions, field string, asCSV, asJSON, named bool) error {
	values := map[string]any{}
	for i, a := range in.arrays {
		arr, err := readArray(a)
		if err != nil {
			return err
		}
		if field != "" {
			if arr, err = fieldArray(arr, field); err != nil {
				return err
			}
		}
		name := a.name
		if name == "" {
			name = in.name
		}
		switch {
		case asJSON:
			if len(in.arrays) == 1 {
				return writeJSONLine(w, arr)
			}
			values[name] = arr
		case asCSV:
			if len(in.arrays) > 1 {
				return fmt.Errorf("CSV holds one array, and this holds %d (%s): pick one as FILE:NAME", len(in.arrays), names(in.arrays))
			}
			return writeCSV(w, arr)
		default:
			if i > 0 {
				fmt.Fprintln(w)
			}
			if named {
				fmt.Fprintf(w, "%s: %s %s\n", peertext.Line(name), arr.DType, ndarray.FormatShape(arr.Shape))
			}
			printValues(w, arr, o)
		}
	}
	if asJSON {
		return writeJSONLine(w, values)
	}
	return nil
}

// printValues prints a as numpy prints it; a record array field by field.
func printValues(w io.Writer, a *ndarray.Array, o printOptions) {
	if a.DType.IsRecord() {
		for _, f := range a.DType.Fields() {
			v, err := fieldArray(a, f.Name)
			if err != nil {
				fmt.Fprintf(w, "%s: %s\n", peertext.Line(f.Name), oneLine(err.Error()))
				continue
			}
			fmt.Fprintf(w, "%s: ", peertext.Line(f.Name))
			printValues(w, v, o)
		}
		return
	}
	fmt.Fprintln(w, arrayString(a, o))
}

// fieldArray is the field name of a record array, as an array of its own.
func fieldArray(a *ndarray.Array, name string) (*ndarray.Array, error) {
	v, err := a.Field(name)
	if err != nil {
		return nil, err
	}
	return v.Array()
}

// writeCSV writes a 0-d, 1-D or 2-D array as CSV, each value as Python
// prints it (floats with every digit that tells them apart).
func writeCSV(w io.Writer, a *ndarray.Array) error {
	if len(a.Shape) > 2 || a.DType.IsRecord() {
		return fmt.Errorf("CSV holds 1-D and 2-D arrays of plain values; this is %s %s (pick rows, or a field with --field)", a.DType, ndarray.FormatShape(a.Shape))
	}
	cols := 1
	if len(a.Shape) == 2 {
		cols = a.Shape[1]
	}
	cw := csv.NewWriter(w)
	size := a.DType.ItemSize
	row := make([]string, 0, cols)
	for i := 0; i < a.Len(); i++ {
		row = append(row, strings.TrimSpace(scalarString(a.DType, a.Data[i*size:(i+1)*size])))
		if len(row) == cols {
			if err := cw.Write(row); err != nil {
				return err
			}
			row = row[:0]
		}
	}
	cw.Flush()
	return cw.Error()
}
