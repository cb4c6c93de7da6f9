package main

import (
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"

	"github.com/ndpack/ndpack/ndarray"
)

// fieldReport is what inspect says about one field of a record dtype: its
// place in the record, its dtype, and the statistics of its values over
// every record (a subarray field's elements all count), or its own fields
// when it is a record itself.
type fieldReport struct {
	Name   string        `json:"name"`
	Title  string        `json:"title,omitempty"`
	DType  string        `json:"dtype"`
	Offset int           `json:"offset"`          // bytes from the start of the record that holds it
	Shape  []int         `json:"shape,omitempty"` // a subarray field's shape
	Fields []fieldReport `json:"fields,omitempty"`
	Stats  *stats        `json:"stats,omitempty"`
}

// recordStats gathers per-field statistics of records, a chunk of whole
// records at a time: each field with values (not itself a record) gets an
// accumulator, fed with its bytes gathered from every record.
type recordStats struct {
	itemSize int
	leaves   []*leafField
}

type leafField struct {
	report  *fieldReport
	offsets []int // of each copy of the field in the record (more than one inside a subarray of records)
	size    int   // bytes of one copy: item size times the subarray's elements
	acc     *accumulator
	scratch []byte
}

// newRecordStats returns the reports of dt's fields, to be filled by the
// returned recordStats.
func newRecordStats(dt ndarray.DType) ([]fieldReport, *recordStats) {
	rs := &recordStats{itemSize: dt.ItemSize}
	reports := rs.fields(dt, []int{0})
	return reports, rs
}

// fields makes the reports of the fields of the record dt, which lies at
// each of bases in the outer record.
func (rs *recordStats) fields(dt ndarray.DType, bases []int) []fieldReport {
	fs := dt.Fields()
	reports := make([]fieldReport, len(fs))
	for i, f := range fs {
		r := &reports[i]
		*r = fieldReport{Name: f.Name, Title: f.Title, DType: f.DType.String(), Offset: f.Offset, Shape: f.Shape}
		n, _ := ndarray.NumElements(f.Shape)
		var offsets []int
		for _, b := range bases {
			for k := range n {
				offsets = append(offsets, b+f.Offset+k*f.DType.ItemSize)
			}
		}
		if f.DType.IsRecord() {
			r.DType = "record"
			r.Fields = rs.fields(f.DType, offsets)
			continue
		}
		if len(offsets) > 1<<16 {
			continue // a field repeated this often is reported, not summed
		}
		rs.leaves = append(rs.leaves, &leafField{report: r, offsets: offsets, size: f.DType.ItemSize, acc: newAccumulator(f.DType)})
	}
	return reports
}

// add gathers each field's values from chunk, whole records, and adds them.
func (rs *recordStats) add(chunk []byte) {
	if rs.itemSize == 0 {
		return
	}
	n := len(chunk) / rs.itemSize
	for _, l := range rs.leaves {
		if !l.acc.hasStats {
			continue
		}
		need := n * len(l.offsets) * l.size
		if cap(l.scratch) < need {
			l.scratch = make([]byte, need)
		}
		s := l.scratch[:need]
		at := 0
		for i := range n {
			rec := chunk[i*rs.itemSize : (i+1)*rs.itemSize]
			for _, off := range l.offsets {
				at += copy(s[at:], rec[off:off+l.size])
			}
		}
		l.acc.add(s)
	}
}

// finish puts each field's statistics in its report.
func (rs *recordStats) finish() {
	for _, l := range rs.leaves {
		l.report.Stats = l.acc.result()
	}
}

// printFields prints the fields of a record, nested ones indented under
// the field that holds them.
func printFields(w io.Writer, indent string, fields []fieldReport) {
	for _, f := range fields {
		name := peertext.Line(f.Name)
		if f.Title != "" {
			name = fmt.Sprintf("%s (title %q)", name, f.Title)
		}
		shape := ""
		if f.Shape != nil {
			shape = " " + ndarray.FormatShape(f.Shape)
		}
		fmt.Fprintf(w, "%s%-9s %s%s at byte %d\n", indent, name, f.DType, shape, f.Offset)
		if f.Fields != nil {
			printFields(w, indent+"  ", f.Fields)
		}
		if f.Stats != nil {
			printStats(w, indent+"  ", f.Stats)
		}
	}
}
