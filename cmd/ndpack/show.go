package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
)

const showUsage = `Usage: ndpack show [options] FILE[:NAME]...

Print the values of the arrays in FILE as numpy's print(a) shows them:
aligned, floats to 8 digits at most, long arrays summarised with "...",
records as tuples of their fields ((1.5, [1, 2], 'ab')), datetime64 as
'2024-02-29' and timedelta64 as its count. An .npz or a msgpack map
prints each array under its name; FILE:NAME picks one (an npz member, a
msgpack path), as convert takes it. FILE may be a URL: http://,
https:// or s3://BUCKET/KEY, read by Range requests.

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
  --csv            write the values as CSV (RFC 4180): a 1-D array one
                   per line, a 2-D array row by row, a record array a row
                   per record and a column per field (pos.x, v[0]) under
                   a row of their names
  --json           write {"dtype", "shape", "values"} as one JSON line (an
                   archive: an object of them by name): values nested as
                   numpy's tolist nests them, a record an object of its
                   fields in order, NaN and infinities "NaN", "+Inf",
                   "-Inf", complex [re, im], datetime64 its text,
                   timedelta64 its count
` + remoteHelp + `
Examples:
  ndpack show image.npy
  ndpack show run.npz:spectrum --rows -10:
  ndpack show --csv table.npy > table.csv
  ndpack show --json run.npz | jq '.image.shape'
  ndpack show https://data.example.org/run.npz:spectrum
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
				fmt.Fprintf(w, "%s: %s %s\n", peertext.Line(name), peertext.Line(shortDType(arr.DType)), ndarray.FormatShape(arr.Shape))
			}
			printValues(w, arr, o)
		}
	}
	if asJSON {
		return writeJSONLine(w, values)
	}
	return nil
}

// printValues prints a as numpy's print(a) prints it.
func printValues(w io.Writer, a *ndarray.Array, o printOptions) {
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

// writeCSV writes a 0-d, 1-D or 2-D array as CSV (RFC 4180, as
// encoding/csv quotes), each value as csvText gives it. A record array
// (0-d or 1-D) is a row per record and a column per leaf field, each
// element of a subarray field a column of its own, under a first row of
// the columns' names ("pos.x", "v[0]", "m[1][2]").
func writeCSV(w io.Writer, a *ndarray.Array) error {
	if len(a.Shape) > 2 || (a.DType.IsRecord() && len(a.Shape) > 1) {
		return fmt.Errorf("CSV holds 1-D and 2-D arrays of plain values and 1-D record arrays; this is %s %s (pick rows, or a field with --field)", shortDType(a.DType), ndarray.FormatShape(a.Shape))
	}
	cw := csv.NewWriter(w)
	size := a.DType.ItemSize
	var leaves []csvColumn
	cols := 1
	switch {
	case a.DType.IsRecord():
		leaves = csvColumns(a.DType, "", 0)
		if len(leaves) == 0 {
			return fmt.Errorf("CSV needs a column, and these records have no fields (%s)", shortDType(a.DType))
		}
		header := make([]string, len(leaves))
		for i, c := range leaves {
			header[i] = escapeText(c.name, "\n\t\r")
		}
		if err := cw.Write(header); err != nil {
			return err
		}
		cols = 0
	case len(a.Shape) == 2:
		cols = a.Shape[1]
	}
	row := make([]string, 0, max(cols, len(leaves)))
	for i := 0; i < a.Len(); i++ {
		item := a.Data[i*size : (i+1)*size]
		if leaves != nil {
			for _, c := range leaves {
				row = append(row, csvText(c.dtype, item[c.offset:c.offset+c.dtype.ItemSize]))
			}
		} else {
			row = append(row, csvText(a.DType, item))
		}
		if cols == 0 || len(row) == cols {
			if err := writeCSVRow(w, cw, row); err != nil {
				return err
			}
			row = row[:0]
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeCSVRow writes row to cw, which writes to w; a row of one empty
// field is written "", as Python's csv module writes it, so that it is
// not read back as a row of none.
func writeCSVRow(w io.Writer, cw *csv.Writer, row []string) error {
	if len(row) != 1 || row[0] != "" {
		return cw.Write(row)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\"\"\n")
	return err
}

// csvColumn is one column of a record array's CSV: a leaf field, or one
// element of a subarray field.
type csvColumn struct {
	name   string
	dtype  ndarray.DType
	offset int
}

// csvColumns lists the columns of the records of dt, which lie at offset
// in the record that holds them, their names after prefix.
func csvColumns(dt ndarray.DType, prefix string, offset int) []csvColumn {
	var out []csvColumn
	for _, f := range dt.Fields() {
		fdt, shape := leafDType(f)
		n, _ := ndarray.NumElements(shape)
		for k := range n {
			name := prefix + f.Name + elementIndex(k, shape)
			at := offset + f.Offset + k*fdt.ItemSize
			if fdt.IsRecord() {
				out = append(out, csvColumns(fdt, name+".", at)...)
				continue
			}
			out = append(out, csvColumn{name: name, dtype: fdt, offset: at})
		}
	}
	return out
}

// elementIndex is the index of element k of a subarray of shape as
// "[i][j]" ("" for a scalar field).
func elementIndex(k int, shape []int) string {
	idx := make([]string, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		idx[d] = "[" + strconv.Itoa(k%max(shape[d], 1)) + "]"
		k /= max(shape[d], 1)
	}
	return strings.Join(idx, "")
}

// csvText is one value in CSV: numbers as Python prints them (floats
// with every digit that tells them apart), True and False, a datetime64
// as its ISO text, a timedelta64 as its count, NaT; text as it is, a
// newline, tab or carriage return kept (encoding/csv quotes the field,
// as RFC 4180 says) and the other characters Python's repr escapes
// escaped as it escapes them.
func csvText(dt ndarray.DType, b []byte) string {
	switch dt.Kind {
	case 'U', 'S':
		return textOf(dt, b, "\n\t\r")
	case 'M':
		if s, ok := datetimeString(int64Of(dt, b), dt.Unit); ok {
			return s
		}
		return strconv.FormatInt(int64Of(dt, b), 10)
	case 'm':
		if v := int64Of(dt, b); v != nat {
			return strconv.FormatInt(v, 10)
		}
		return "NaT"
	}
	return strings.TrimSpace(scalarString(dt, b, numpyDefaults))
}
