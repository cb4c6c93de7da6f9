package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

const inspectUsage = `Usage: ndpack inspect [--json] FILE...

Show, for every array in each file: the format, dtype, shape, element count,
byte size and byte order, and for numeric arrays the minimum, maximum, mean,
number of NaNs and the first few values. The format follows the extension
(.npy, .npz, .msgpack, .mpk) or, failing that, the file's first bytes.
.npy files are memory-mapped, so only the statistics read the data.

Options:
  --json   print one JSON document (a list with one object per file) for
           scripts; non-finite numbers are the strings "NaN", "+Inf", "-Inf"

Examples:
  ndpack inspect image.npy
  ndpack inspect --json run.npz | jq '.[0].arrays[].shape'
`

// fileReport is what inspect says about one file.
type fileReport struct {
	File    string        `json:"file"`
	Format  string        `json:"format"`
	Version string        `json:"npy_version,omitempty"`
	Arrays  []arrayReport `json:"arrays"`
}

type arrayReport struct {
	Name         string   `json:"name,omitempty"`
	DType        string   `json:"dtype"`
	Kind         string   `json:"kind"`
	Standard     bool     `json:"standard"`
	ByteOrder    string   `json:"byte_order"`
	Shape        []int    `json:"shape"`
	Elements     int      `json:"elements"`
	Bytes        int      `json:"bytes"`
	FortranOrder bool     `json:"fortran_order_on_disk,omitempty"`
	Stats        *stats   `json:"stats,omitempty"`
	First        []string `json:"first"`
}

func runInspect(e env, args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return usageError("name at least one file")
	}
	var reports []fileReport
	for _, name := range files {
		r, err := inspectFile(name)
		if err != nil {
			if _, isPath := err.(*os.PathError); isPath {
				return err
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		if !*asJSON {
			printReport(e.stdout, r)
		}
		reports = append(reports, r)
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(reports)
	}
	return nil
}

func inspectFile(name string) (fileReport, error) {
	r := fileReport{File: name}
	f := formatOf(name)
	if f == "" {
		sniffed, err := sniff(name)
		if err != nil {
			return r, err
		}
		f = sniffed
	}
	r.Format = string(f)
	switch f {
	case formatNPY:
		m, err := npybridge.OpenMapped(name)
		if err != nil {
			return r, err
		}
		defer m.Close()
		r.Version = fmt.Sprintf("%d.%d", m.Header.Major, m.Header.Minor)
		ar := report("", m.Array)
		ar.FortranOrder = m.Header.FortranOrder
		r.Arrays = []arrayReport{ar}
	case formatNPZ:
		arrays, err := npybridge.ReadNPZFile(name)
		if err != nil {
			return r, err
		}
		for _, na := range arrays {
			r.Arrays = append(r.Arrays, report(na.Name, na.Array))
		}
	case formatMsgpack:
		b, err := os.ReadFile(name)
		if err != nil {
			return r, err
		}
		named, err := decodeMsgpackArrays(b)
		if err != nil {
			return r, err
		}
		for _, na := range named {
			r.Arrays = append(r.Arrays, report(na.Name, na.Array))
		}
	}
	return r, nil
}

// sniff tells a file's format from its first bytes.
func sniff(name string) (format, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 6)
	n, _ := io.ReadFull(f, head)
	switch {
	case bytes.Equal(head[:n], []byte(npybridge.Magic)):
		return formatNPY, nil
	case n >= 4 && string(head[:4]) == "PK\x03\x04":
		return formatNPZ, nil
	}
	return formatMsgpack, nil
}

var kindNames = map[ndarray.Kind]string{
	ndarray.Bool: "bool", ndarray.Int: "int", ndarray.Uint: "uint", ndarray.Float: "float",
	ndarray.Complex: "complex", ndarray.Bytes: "bytes", ndarray.Unicode: "unicode",
	ndarray.Void: "void", ndarray.Datetime: "datetime", ndarray.Timedelta: "timedelta",
}

func report(name string, a *ndarray.Array) arrayReport {
	order := map[ndarray.ByteOrder]string{ndarray.LittleEndian: "little", ndarray.BigEndian: "big", ndarray.NotApplicable: "not applicable"}[a.DType.Order]
	r := arrayReport{
		Name: name, DType: a.DType.String(), Kind: kindNames[a.DType.Kind], Standard: a.DType.IsStandard(),
		ByteOrder: order, Shape: append([]int{}, a.Shape...), Elements: a.Len(), Bytes: len(a.Data),
	}
	r.Stats, r.First = summarize(a, firstCount)
	if r.First == nil {
		r.First = []string{}
	}
	return r
}

const firstCount = 8

func printReport(w io.Writer, r fileReport) {
	version := ""
	if r.Version != "" {
		version = " " + r.Version
	}
	fmt.Fprintf(w, "%s: %s%s, %d array(s)\n", r.File, r.Format, version, len(r.Arrays))
	for _, a := range r.Arrays {
		indent := "  "
		if a.Name != "" {
			fmt.Fprintf(w, "  %s:\n", a.Name)
			indent = "    "
		}
		std := ""
		if !a.Standard {
			std = ", outside YEP-110's standard kinds"
		}
		fmt.Fprintf(w, "%sdtype     %s (%s, %d bytes each, byte order %s%s)\n", indent, a.DType, a.Kind, a.Bytes/max(1, a.Elements), a.ByteOrder, std)
		fortran := ""
		if a.FortranOrder {
			fortran = ", stored in Fortran order"
		}
		fmt.Fprintf(w, "%sshape     %s: %d elements, %d bytes%s\n", indent, ndarray.FormatShape(a.Shape), a.Elements, a.Bytes, fortran)
		if s := a.Stats; s != nil {
			fmt.Fprintf(w, "%smin, max  %s, %s\n", indent, s.Min.text(), s.Max.text())
			fmt.Fprintf(w, "%smean      %s\n", indent, s.Mean.text())
			fmt.Fprintf(w, "%sNaNs      %d\n", indent, s.NaNs)
		}
		more := ""
		if a.Elements > len(a.First) {
			more = " ..."
		}
		fmt.Fprintf(w, "%sfirst     [%s%s]\n", indent, strings.Join(a.First, " "), more)
	}
}
