package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"strings"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

const inspectUsage = `Usage: ndpack inspect [--json] [--quiet] [--preview] [--header] [--rows START:STOP] [--field NAME] FILE[:NAME]...

Show, for every array in each file: the format, dtype, shape, element count,
byte size and byte order; for numbers the minimum, maximum and mean (with
and without NaNs), for bools the counts of True and False, for datetimes
the earliest and latest as ISO dates; and the first few values: strings
as numpy prints them ('text', b'bytes'), a record array's fields with
their statistics and its first three records, one a line, as numpy
prints the elements of a[:3] (each cut at 200 characters, in JSON too).
A msgpack message's other values (an RPC request's method and id, a
message that holds no array at all) are shown by their value, as jq -c
prints it, cut at 72 characters; the arrays inside a list or map as
<ext 110, N bytes> or <msgpack-numpy array, N bytes> in it, and each
again by its path (params/0).
The format follows the extension (.npy, .npz, .msgpack, .mpk) or, failing
that, the file's first bytes. "-" is standard input. A FILE may be a URL:
http://, https:// or s3://BUCKET/KEY (see the README for the AWS settings
honoured), read by ranges: only the bytes needed travel. FILE:NAME, or
--member NAME, inspects the array NAME alone.

The data is read once, in chunks: memory stays small whatever the size of
the file. A file that cannot be read is reported and the others are still
inspected; the exit status is then 1. An npz member that is not an array
ndpack holds (a structured or object array, a text file) is reported as
such.

Options:
  --json   print one JSON document (a list with one object per file) for
           scripts: numbers as JSON numbers, "NaN", "+Inf" and "-Inf" as
           strings, complex values as [re, im], a file or member that could
           not be read as {"file"/"name": ..., "error": ...}, a value
           that is not an array as {"name": ..., "value": VALUE} with
           VALUE as JSON (a long one cut, "value_truncated": true)
  --quiet  no progress on standard error
  --objects  read object arrays (numpy dtype O, a pickle): their element
           types and first values, read as data; nothing in the pickle
           runs (without it they are listed as not read)
  --max-objects-size SIZE  with --objects, refuse an object array whose
           pickle, values in memory, or values written out (a value the
           pickle shares counted at every place) would pass SIZE bytes
           (a number, or with K, M, G or T: KiB, MiB ...; default 24 times
           the pickle's stored bytes plus 64M)
  --preview  draw each 1-D or 2-D array below its statistics: 2-D as
           Unicode half blocks in 24-bit colour (viridis), fitted to the
           terminal, 1-D as a sparkline; 2-D arrays are drawn whenever
           standard output is a terminal (--preview=false: never)
  --width N  the preview's width in columns (default: $COLUMNS, else the
           terminal's)
  --header   dtype, shape and sizes only (no first values): no data is
           read (an .npz over HTTP or S3: its directory and each
           member's headers)
  --rows START:STOP  only these rows (the first axis; Python slice rules:
           either bound may be left out, negative ones count from the end;
           no step) of .npy files and .npz members, read alone
  --field NAME  only the field NAME of record arrays (numpy's a['NAME'];
           "outer.inner" for a nested record's field)
  --member NAME  only the array NAME of an .npz or a msgpack map, as
           FILE:NAME picks it (of a remote .npz: its request alone)
  --max-header-size N  read .npy headers of up to N bytes (default 10000,
           numpy's max_header_size): records of thousands of fields
` + remoteHelp + `
Examples:
  ndpack inspect image.npy
  ndpack inspect --json run.npz | jq '.[0].arrays[].shape'
  curl -s http://daq/last.npy | ndpack inspect -
  ndpack inspect --header s3://lab-data/run7.npz
  ndpack inspect --rows -100: https://data.example.org/big.npy
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
	Name         string          `json:"name,omitempty"`
	Error        string          `json:"error,omitempty"`
	Value        string          `json:"-"` // a value that is not an array, short, as jq -c prints it
	DType        string          `json:"dtype,omitempty"`
	Kind         string          `json:"kind,omitempty"`
	Standard     bool            `json:"standard"`
	ByteOrder    string          `json:"byte_order,omitempty"`
	Shape        []int           `json:"shape"`
	Elements     int             `json:"elements"`
	ItemSize     int             `json:"item_size"`
	Bytes        int64           `json:"bytes"`
	FortranOrder bool            `json:"fortran_order_on_disk,omitempty"`
	Stats        *stats          `json:"stats,omitempty"`
	Fields       []fieldReport   `json:"fields,omitempty"`  // of a record dtype, with their statistics
	Objects      *objectsReport  `json:"objects,omitempty"` // of an object array (--objects)
	First        []*number       `json:"first"`
	notArray     bool            // not an array ndpack holds: reported, not a failure
	valueJSON    json.RawMessage // Value as JSON (msgValueJSON)
	valueCut     bool            // valueJSON leaves part of the value out
	header       bool            // --header: no data read, so no first values
}

// MarshalJSON writes the report as inspect --json shows it: a value that
// is not an array as {"name", "value"} with the value as JSON, a failure
// as {"name", "error"}, an array with its fields, "first" left out when
// no data was read (--header).
func (a arrayReport) MarshalJSON() ([]byte, error) {
	type plain arrayReport // its fields, without this method
	var v any = plain(a)
	switch {
	case a.valueJSON != nil:
		v = struct {
			Name  string          `json:"name,omitempty"`
			Value json.RawMessage `json:"value"`
			Cut   bool            `json:"value_truncated,omitempty"` // cut where JSON allows
		}{a.Name, a.valueJSON, a.valueCut}
	case a.Error != "":
		v = struct {
			Name  string `json:"name,omitempty"`
			Error string `json:"error"`
		}{a.Name, a.Error}
	case a.header:
		v = struct {
			plain
			First *[]*number `json:"first,omitempty"` // hides plain's
		}{plain: plain(a)}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

func runInspect(e env, args []string) error {
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "")
	quiet := fs.Bool("quiet", false, "")
	objects := fs.Bool("objects", false, "")
	var maxObjects byteSize
	fs.Var(&maxObjects, "max-objects-size", "")
	header := fs.Bool("header", false, "")
	rowsFlag := fs.String("rows", "", "")
	field := fs.String("field", "", "")
	member := fs.String("member", "", "")
	maxHeader := addMaxHeaderFlag(fs)
	remoteSet := addRemoteFlags(fs)
	pf := addPreviewFlags(fs) // preview.go
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := remoteSet.check(); err != nil {
		return err
	}
	rows, err := parseRows(*rowsFlag)
	if err != nil {
		return err
	}
	opts := inspectOpts{quiet: *quiet, objects: *objects, maxObjects: int64(maxObjects), header: *header, rows: rows, field: *field, maxHeader: int(*maxHeader), remote: *remoteSet, member: *member}
	if len(files) == 0 {
		return usageError("name at least one file (or - for standard input)")
	}
	// Reports are written as each array is read, not gathered first: an
	// archive of 100,000 arrays would otherwise hold 100,000 reports.
	var out reportWriter = &textReports{w: e.stdout}
	if *asJSON {
		out = &jsonReports{w: bufio.NewWriterSize(e.stdout, 64<<10)}
	}
	if out, err = pf.wrap(e, fs, out, *asJSON); err != nil {
		return err
	}
	failed := 0
	for _, name := range files {
		err := inspectEach(e, name, opts, out, func(a arrayReport) {
			if a.Error != "" && !a.notArray {
				failed++
				// Reported in the listing, and as every failure is, on
				// standard error.
				msg := a.Error
				if a.Name != "" {
					msg = peertext.Line(a.Name) + ": " + msg
				}
				fmt.Fprintf(e.stderr, "ndpack: %s\n", oneLine(describe(name, errors.New(msg))))
			}
		})
		if err != nil {
			failed++
			r := fileReport{File: displayName(name), Error: describe(name, err)}
			fmt.Fprintf(e.stderr, "ndpack: %s\n", oneLine(r.Error))
			out.file(r, 0, 0)
		}
		out.fileEnd()
	}
	if err := out.end(); err != nil {
		return err
	}
	if failed > 0 {
		return errReported
	}
	return nil
}

// errReported ends a command that has already reported its failures: exit
// status 1, nothing more printed.
var errReported = errors.New("failures reported")

// inspectFile reads every array of the file name and returns the report.
func inspectFile(e env, name string, quiet bool) (fileReport, error) {
	c := &collectReports{}
	if err := inspectEach(e, name, inspectOpts{quiet: quiet}, c, func(arrayReport) {}); err != nil {
		return fileReport{File: name}, err
	}
	return *c.r, nil
}

// inspectEach reads every array of the file name and hands out the file's
// report and then each array's, as they are made; seen is called with
// each array's too.
func inspectEach(e env, name string, o inspectOpts, out reportWriter, seen func(arrayReport)) error {
	quiet := o.quiet
	name, member := splitMember(name, o.member)
	f := formatOf(name)
	if isRegularFile(name) {
		f = "" // its first bytes tell, whatever its name says
	}
	fa, err := openInputArrays(name, e.stdin, f, inputOptions{objects: o.objects, maxObjects: o.maxObjects, maxHeader: o.maxHeader, stderr: e.stderr, remote: o.remote, values: true})
	if err != nil {
		return err
	}
	defer fa.close()
	fa.withRows(o.rows)
	fa.withFieldAndType(o.field, nil)
	n, at := fa.len(), fa.at
	if member != "" {
		// FILE:NAME or --member: that array alone, found as convert
		// finds it (an .npz member by its directory, one request).
		picked, err := convertOptions{member: member}.pickFrom(fa)
		if err != nil {
			return err
		}
		n, at = 1, func(int) arraySource { return picked[0] }
	}
	r := fileReport{File: displayName(name), Format: string(fa.format), Version: fa.version, Encoding: fa.dialect}
	if out.needsCounts() {
		others := 0
		for i := range n {
			if err := at(i).err; err != nil && strings.Contains(describe("", err), errNotArray.Error()) {
				others++
			}
		}
		out.file(r, n-others, others)
	} else {
		out.file(r, 0, 0)
	}
	prog := e.startProgress("inspect "+displayName(name), fa.size, quiet)
	defer prog.finish()
	var buf []byte // one buffer for every array, the size of the largest chunk
	for i := range n {
		var a arrayReport
		var pv *arrayPreview // drawn below the statistics (preview.go)
		if src := at(i); src.objects != nil {
			a = inspectObjects(src)
		} else if o.header {
			a = headerReport(src)
			a.header, a.First = true, nil
		} else {
			pv = startPreview(out, &src)
			a = inspectArray(src, prog, &buf)
		}
		seen(a)
		out.array(a)
		pv.draw(a)
	}
	return nil
}

// reportWriter writes inspect's reports as they are made: for each file
// its report (without arrays; arrays and others count them for a header),
// then each array's, then fileEnd; end after the last file.
type reportWriter interface {
	needsCounts() bool
	file(r fileReport, arrays, others int)
	array(a arrayReport)
	fileEnd()
	end() error
}

// textReports prints reports for people.
type textReports struct {
	w io.Writer
}

func (t *textReports) needsCounts() bool { return true }

func (t *textReports) file(r fileReport, arrays, others int) {
	if r.Error != "" {
		return // said on standard error
	}
	version := ""
	if r.Version != "" {
		version = " " + r.Version
	}
	if r.Encoding != "" {
		version = " (" + r.Encoding + ")"
	}
	more := ""
	if others > 0 {
		more = fmt.Sprintf(" and %d other %s", others, plural(int64(others), "value"))
	}
	fmt.Fprintf(t.w, "%s: %s%s, %d %s%s\n", peertext.Line(r.File), r.Format, version, arrays, plural(int64(arrays), "array"), more)
}

func (t *textReports) array(a arrayReport) {
	if a.Error != "" && !a.notArray {
		// A failure: its message said once, on standard error, by
		// inspect's loop; an archive's member is still listed.
		if a.Name != "" {
			fmt.Fprintf(t.w, "  %s:\n    not read  (said on standard error)\n", peertext.Line(a.Name))
		}
		return
	}
	printArray(t.w, a)
}
func (t *textReports) fileEnd()   {}
func (t *textReports) end() error { return nil }

// jsonReports writes the JSON document inspect --json prints: a list with
// one object per file, each with its list of arrays, written as they come
// and laid out as json.Encoder with a two-space indent lays out the whole.
type jsonReports struct {
	w       *bufio.Writer
	files   int
	head    []byte // the file's object, held until its first array
	inArray bool   // its "arrays" list is open
	err     error
}

func (j *jsonReports) needsCounts() bool { return false }

// encode lays v out as it would be at the depth of prefix, with no
// control character raw (escapeJSON).
func (j *jsonReports) encode(v any, prefix string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil && j.err == nil {
		j.err = err
	}
	return peertext.JSON(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func (j *jsonReports) file(r fileReport, _, _ int) {
	if j.files == 0 {
		j.w.WriteString("[\n  ")
	} else {
		j.w.WriteString(",\n  ")
	}
	j.files++
	r.Arrays = nil
	j.head = j.encode(r, "  ")
	j.inArray = false
}

func (j *jsonReports) array(a arrayReport) {
	if !j.inArray {
		// The object without its closing brace, then the list.
		j.w.Write(bytes.TrimSuffix(j.head, []byte("\n  }")))
		j.w.WriteString(",\n    \"arrays\": [\n      ")
		j.inArray = true
	} else {
		j.w.WriteString(",\n      ")
	}
	j.w.Write(j.encode(a, "      "))
}

func (j *jsonReports) fileEnd() {
	if j.inArray {
		j.w.WriteString("\n    ]\n  }")
	} else {
		j.w.Write(j.head)
	}
	j.head, j.inArray = nil, false
}

func (j *jsonReports) end() error {
	if j.files == 0 {
		j.w.WriteString("[")
	}
	j.w.WriteString("\n]\n")
	if err := j.w.Flush(); err != nil {
		return err
	}
	return j.err
}

// collectReports keeps the report of one file, arrays and all.
type collectReports struct{ r *fileReport }

func (c *collectReports) needsCounts() bool                { return false }
func (c *collectReports) file(r fileReport, arrays, _ int) { c.r = &r }
func (c *collectReports) array(a arrayReport)              { c.r.Arrays = append(c.r.Arrays, a) }
func (c *collectReports) fileEnd()                         {}
func (c *collectReports) end() error                       { return nil }

// chunkSize is how much data inspect reads at a time: the bound on its
// memory.
const chunkSize = 4 << 20

// inspectArray reads the array of src a chunk at a time into *buf, which it
// grows to the chunk it needs: an archive of many small arrays costs the
// largest of them, not a chunk each.
// inspectOpts are inspect's choices for each file.
type inspectOpts struct {
	quiet, objects bool
	maxObjects     int64       // --max-objects-size; 0 is the default
	header         bool        // --header: no data read
	rows           *rowRange   // --rows, or nil
	field          string      // --field, or ""
	maxHeader      int         // --max-header-size; 0 is numpy's 10,000
	member         string      // --member: the one array to inspect
	remote         remoteFlags // --concurrency, --part-size
}

// headerReport describes src from its header alone.
func headerReport(src arraySource) arrayReport {
	r := arrayReport{Name: src.name, First: []*number{}}
	if src.err != nil {
		r.Error = describe("", src.err)
		r.notArray = errors.Is(src.err, npybridge.ErrUnsupported) || errors.Is(src.err, ndarray.ErrNotArray) ||
			errors.Is(src.err, errNotArray) || errors.Is(src.err, dialect.ErrPickle)
		if r.notArray && src.value != nil {
			r.Value = shortValue(src.value) // listed by its value, as jq prints it
			r.valueJSON, r.valueCut = msgValueJSON(src.value)
		}
		return r
	}
	dt := src.dtype
	n, _ := ndarray.NumElements(src.shape)
	r.DType, r.Kind, r.Standard = dt.String(), kindNames[dt.Kind], dt.IsStandard()
	r.ByteOrder = map[byte]string{'<': "little", '>': "big", '|': "not applicable"}[dt.Order]
	r.Shape, r.Elements, r.ItemSize, r.Bytes, r.FortranOrder = append([]int{}, src.shape...), n, dt.ItemSize, src.size, src.fortran
	if dt.IsRecord() {
		r.Kind = "record"
	}
	return r
}

func inspectArray(src arraySource, prog *progress, buf *[]byte) arrayReport {
	r := headerReport(src)
	if src.err != nil {
		return r
	}
	dt := src.dtype

	acc := newAccumulator(dt)
	var records *recordStats
	count := firstCount
	if dt.IsRecord() {
		r.Kind = "record"
		r.Fields, records = newRecordStats(dt)
		count = recordRows
	}
	first := newFirstCapture(dt, src.shape, src.fortran, count)
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
	size = int(min(int64(size), src.size))
	if cap(*buf) < size {
		*buf = make([]byte, size)
	}
	chunk := (*buf)[:size]
	var index int64
	for done := int64(0); done < src.size; {
		k, err := io.ReadFull(rc, chunk[:min(int64(size), src.size-done)])
		if err != nil {
			if err == io.ErrUnexpectedEOF || err == io.EOF {
				err = &ndarray.Error{Pkg: "npybridge", Err: ndarray.ErrTruncated, Offset: -1,
					Detail: fmt.Sprintf("the data ends after %d of %d bytes", done+int64(k), src.size)}
			}
			r.Error = describe("", err)
			return r
		}
		acc.add(chunk[:k])
		if records != nil {
			records.add(chunk[:k])
		}
		first.add(chunk[:k], index)
		done += int64(k)
		if dt.ItemSize > 0 {
			index += int64(k / dt.ItemSize)
		}
		prog.add(int64(k))
	}
	r.Stats = acc.result()
	switch {
	case records != nil:
		records.finish()
		r.First = recordRowTexts(dt, first.items) // inspectrows.go
	case dt.Kind == 'S' || dt.Kind == 'U':
		r.First = stringTexts(dt, first.items)
	default:
		r.First = first.values(dt)
	}
	return r
}

var kindNames = map[byte]string{
	'b': "bool", 'i': "int", 'u': "uint", 'f': "float",
	'c': "complex", 'S': "bytes", 'U': "unicode",
	'V': "void", 'M': "datetime", 'm': "timedelta",
}

const firstCount = 8

// printArray prints the report of one array, under its name if it has one.
func printArray(w io.Writer, a arrayReport) {
	indent := "  "
	if a.Name != "" {
		fmt.Fprintf(w, "  %s:\n", peertext.Line(a.Name))
		indent = "    "
	}
	if a.Value != "" {
		fmt.Fprintf(w, "%svalue     %s\n", indent, peertext.Line(a.Value))
		return
	}
	if a.Error != "" {
		fmt.Fprintf(w, "%snot read  %s\n", indent, oneLine(a.Error))
		return
	}
	if a.Objects != nil {
		fmt.Fprintf(w, "%sdtype     |O (object: Python values, read from the pickle without running it)\n", indent)
		fmt.Fprintf(w, "%sshape     %s: %d %s\n", indent, ndarray.FormatShape(a.Shape), a.Elements, plural(int64(a.Elements), "element"))
		printObjects(w, indent, a.Objects, a.Elements)
		return
	}
	std := ""
	if !a.Standard {
		std = ", outside YEP-110's standard kinds"
	}
	fmt.Fprintf(w, "%sdtype     %s (%s, %d %s each, byte order %s%s)\n", indent, cutDTypeText(a.DType), a.Kind, a.ItemSize, plural(int64(a.ItemSize), "byte"), a.ByteOrder, std)
	fortran := ""
	if a.FortranOrder {
		fortran = ", stored in Fortran order"
	}
	fmt.Fprintf(w, "%sshape     %s: %d %s, %d %s%s\n", indent, ndarray.FormatShape(a.Shape), a.Elements, plural(int64(a.Elements), "element"), a.Bytes, plural(int64(a.Bytes), "byte"), fortran)
	if s := a.Stats; s != nil {
		printStats(w, indent, s)
	}
	if a.Fields != nil {
		fmt.Fprintf(w, "%sfields\n", indent)
		printFields(w, indent+"  ", a.Fields)
		printFirstRecords(w, indent, a) // inspectrows.go
		return
	}
	if a.header {
		return // no data read, no values to show
	}
	more := ""
	if a.Elements > len(a.First) {
		more = " ..."
	}
	texts := make([]string, len(a.First))
	for i, v := range a.First {
		texts[i] = v.text()
	}
	if a.Kind == "bytes" || a.Kind == "unicode" {
		fmt.Fprintf(w, "%sfirst     [%s]\n", indent, peertext.Line(firstLine(texts, a.Elements)))
		return
	}
	fmt.Fprintf(w, "%sfirst     [%s%s]\n", indent, strings.Join(texts, " "), more)
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
