package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

const inspectUsage = `Usage: ndpack inspect [--json] [--quiet] FILE...

Show, for every array in each file: the format, dtype, shape, element count,
byte size and byte order; for numbers the minimum, maximum and mean (with
and without NaNs), for bools the counts of True and False, for datetimes
the earliest and latest as ISO dates; and the first few values. The format
follows the extension (.npy, .npz, .msgpack, .mpk) or, failing that, the
file's first bytes. "-" is standard input.

The data is read once, in chunks: memory stays small whatever the size of
the file. A file that cannot be read is reported and the others are still
inspected; the exit status is then 1. An npz member that is not an array
ndpack holds (a structured or object array, a text file) is reported as
such.

Options:
  --json   print one JSON document (a list with one object per file) for
           scripts: numbers as JSON numbers, "NaN", "+Inf" and "-Inf" as
           strings, complex values as [re, im], a file or member that could
           not be read as {"file"/"name": ..., "error": ...}
  --quiet  no progress on standard error

Examples:
  ndpack inspect image.npy
  ndpack inspect --json run.npz | jq '.[0].arrays[].shape'
  curl -s http://daq/last.npy | ndpack inspect -
`

// fileReport is what inspect says about one file.
type fileReport struct {
	File     string        `json:"file"`
	Error    string        `json:"error,omitempty"`
	Format   string        `json:"format,omitempty"`
	Encoding string        `json:"msgpack_arrays,omitempty"` // ext 110, msgpack-numpy or openpi
	Version  string        `json:"npy_version,omitempty"`
	Arrays   []arrayReport `json:"arrays,omitempty"`
}

type arrayReport struct {
	Name         string    `json:"name,omitempty"`
	Error        string    `json:"error,omitempty"`
	DType        string    `json:"dtype,omitempty"`
	Kind         string    `json:"kind,omitempty"`
	Standard     bool      `json:"standard"`
	ByteOrder    string    `json:"byte_order,omitempty"`
	Shape        []int     `json:"shape"`
	Elements     int       `json:"elements"`
	ItemSize     int       `json:"item_size"`
	Bytes        int64     `json:"bytes"`
	FortranOrder bool      `json:"fortran_order_on_disk,omitempty"`
	Stats        *stats    `json:"stats,omitempty"`
	First        []*number `json:"first"`
	notArray     bool      // not an array ndpack holds: reported, not a failure
}

func runInspect(e env, args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageError("name at least one file (or - for standard input)")
	}
	var reports []fileReport
	failed := 0
	for _, name := range files {
		r, err := inspectFile(e, name, *quiet)
		if err != nil {
			failed++
			r = fileReport{File: name, Error: describe(name, err)}
			fmt.Fprintf(e.stderr, "ndpack: %s\n", oneLine(r.Error))
		} else if !*asJSON {
			printReport(e.stdout, r)
		}
		for _, a := range r.Arrays {
			if a.Error != "" && !a.notArray {
				failed++
			}
		}
		reports = append(reports, r)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(reports); err != nil {
			return err
		}
	}
	if failed > 0 {
		return errReported
	}
	return nil
}

// errReported ends a command that has already reported its failures: exit
// status 1, nothing more printed.
var errReported = errors.New("failures reported")

func inspectFile(e env, name string, quiet bool) (fileReport, error) {
	r := fileReport{File: name}
	fa, err := openArrays(name, e.stdin, formatOf(name))
	if err != nil {
		return r, err
	}
	defer fa.close()
	r.Format, r.Version, r.Encoding = string(fa.format), fa.version, fa.dialect
	prog := e.startProgress("inspect "+name, fa.size, quiet)
	defer prog.finish()
	for _, src := range fa.arrays {
		r.Arrays = append(r.Arrays, inspectArray(src, prog))
	}
	return r, nil
}

// chunkSize is how much data inspect reads at a time: the bound on its
// memory.
const chunkSize = 4 << 20

func inspectArray(src arraySource, prog *progress) arrayReport {
	r := arrayReport{Name: src.name, First: []*number{}}
	if src.err != nil {
		r.Error = describe("", src.err)
		r.notArray = errors.Is(src.err, npybridge.ErrUnsupported) || errors.Is(src.err, npybridge.ErrNotArray) ||
			errors.Is(src.err, errNotArray)
		return r
	}
	dt := src.dtype
	n, _ := ndarray.NumElements(src.shape)
	r.DType, r.Kind, r.Standard = dt.String(), kindNames[dt.Kind], dt.IsStandard()
	r.ByteOrder = map[ndarray.ByteOrder]string{ndarray.LittleEndian: "little", ndarray.BigEndian: "big", ndarray.NotApplicable: "not applicable"}[dt.Order]
	r.Shape, r.Elements, r.ItemSize, r.Bytes, r.FortranOrder = append([]int{}, src.shape...), n, dt.ItemSize, src.size, src.fortran

	acc := newAccumulator(dt)
	first := newFirstCapture(dt, src.shape, src.fortran, firstCount)
	rc, err := src.open()
	if err != nil {
		r.Error = describe("", err)
		return r
	}
	defer rc.Close()
	// A chunk holds whole elements, and starts aligned for them.
	size := chunkSize
	if dt.ItemSize > 0 {
		size = max(dt.ItemSize, chunkSize/dt.ItemSize*dt.ItemSize)
	}
	buf := make([]byte, size)
	var index int64
	for done := int64(0); done < src.size; {
		k, err := io.ReadFull(rc, buf[:min(int64(size), src.size-done)])
		if err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = &npybridge.Error{Err: npybridge.ErrTruncated, Offset: -1,
					Detail: fmt.Sprintf("the data ends after %d of %d bytes", done+int64(k), src.size)}
			}
			r.Error = describe("", err)
			return r
		}
		acc.add(buf[:k])
		first.add(buf[:k], index)
		done += int64(k)
		if dt.ItemSize > 0 {
			index += int64(k / dt.ItemSize)
		}
		prog.add(int64(k))
	}
	r.Stats = acc.result()
	r.First = first.values(dt)
	return r
}

var kindNames = map[ndarray.Kind]string{
	ndarray.Bool: "bool", ndarray.Int: "int", ndarray.Uint: "uint", ndarray.Float: "float",
	ndarray.Complex: "complex", ndarray.Bytes: "bytes", ndarray.Unicode: "unicode",
	ndarray.Void: "void", ndarray.Datetime: "datetime", ndarray.Timedelta: "timedelta",
}

const firstCount = 8

func printReport(w io.Writer, r fileReport) {
	version := ""
	if r.Version != "" {
		version = " " + r.Version
	}
	if r.Encoding != "" {
		version = " (" + r.Encoding + ")"
	}
	arrays, others := 0, ""
	for _, a := range r.Arrays {
		if a.Error == "" || !strings.Contains(a.Error, errNotArray.Error()) {
			arrays++
		}
	}
	if n := len(r.Arrays) - arrays; n > 0 {
		others = fmt.Sprintf(" and %d other value(s)", n)
	}
	fmt.Fprintf(w, "%s: %s%s, %d array(s)%s\n", r.File, r.Format, version, arrays, others)
	for _, a := range r.Arrays {
		indent := "  "
		if a.Name != "" {
			fmt.Fprintf(w, "  %s:\n", a.Name)
			indent = "    "
		}
		if a.Error != "" {
			fmt.Fprintf(w, "%snot read  %s\n", indent, oneLine(a.Error))
			continue
		}
		std := ""
		if !a.Standard {
			std = ", outside YEP-110's standard kinds"
		}
		fmt.Fprintf(w, "%sdtype     %s (%s, %d bytes each, byte order %s%s)\n", indent, a.DType, a.Kind, a.ItemSize, a.ByteOrder, std)
		fortran := ""
		if a.FortranOrder {
			fortran = ", stored in Fortran order"
		}
		fmt.Fprintf(w, "%sshape     %s: %d elements, %d bytes%s\n", indent, ndarray.FormatShape(a.Shape), a.Elements, a.Bytes, fortran)
		if s := a.Stats; s != nil {
			printStats(w, indent, s)
		}
		more := ""
		if a.Elements > len(a.First) {
			more = " ..."
		}
		texts := make([]string, len(a.First))
		for i, v := range a.First {
			texts[i] = v.text()
		}
		fmt.Fprintf(w, "%sfirst     [%s%s]\n", indent, strings.Join(texts, " "), more)
	}
}

func printStats(w io.Writer, indent string, s *stats) {
	switch {
	case s.True != nil:
		fmt.Fprintf(w, "%sTrue      %d\n%sFalse     %d\n", indent, *s.True, indent, *s.False)
		return
	case s.NaTs != nil:
		fmt.Fprintf(w, "%smin, max  %s, %s\n%sNaTs      %d\n", indent, s.Min.text(), s.Max.text(), indent, *s.NaTs)
		return
	}
	if s.Min != nil || s.NaNs == nil {
		fmt.Fprintf(w, "%smin, max  %s, %s\n", indent, s.Min.text(), s.Max.text())
	}
	mean := s.Mean.text()
	if s.NaNs != nil && *s.NaNs > 0 && s.NaNMean != nil {
		mean += fmt.Sprintf(" (%s without the NaNs)", s.NaNMean.text())
	}
	fmt.Fprintf(w, "%smean      %s\n", indent, mean)
	if s.NaNs != nil {
		fmt.Fprintf(w, "%sNaNs      %d\n", indent, *s.NaNs)
	}
}
