package main

import (
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/ndpack/ndpack/ndarray"
)

// recordRows is how many records inspect's "first" shows, as numpy's
// repr of a[:3] would.
const recordRows = 3

// firstWidth bounds, in characters, a record row and the line of first
// strings inspect prints; stringWidth bounds one string in that line.
const (
	firstWidth  = 200
	stringWidth = 40
)

// recordRowTexts formats the captured records as numpy prints the
// elements of a structured array (its StructuredVoidFormat): each field
// fitted over the rows shown, a subarray field in brackets, a nested
// record in parentheses. Each row is cut at firstWidth characters, for
// people and JSON alike (a subarray field may hold millions of values).
func recordRowTexts(dt ndarray.DType, captured [][]byte) []*number {
	var rows [][]byte
	for _, it := range captured {
		if it == nil {
			break
		}
		rows = append(rows, it)
	}
	out := make([]*number, len(rows))
	if len(rows) == 0 || dt.ItemSize == 0 {
		return out[:0]
	}
	format := recordFormat(dt, items{n: len(rows), at: func(i int) []byte { return rows[i] }}, numpyDefaults)
	for i, r := range rows {
		s := cutText(format(r), firstWidth)
		out[i] = &number{s: s, json: jsonString(s)}
	}
	return out
}

// recordFormat returns numpy's formatter of records of dt, fitted to the
// records rows, as its StructuredVoidFormat fits one: each field's
// formatter fitted over that field of every row (every element of a
// subarray field), a subarray field in brackets, a nested record in
// parentheses.
func recordFormat(dt ndarray.DType, rows items, o printOptions) func([]byte) string {
	fields := dt.Fields()
	formats := make([]func([]byte) string, len(fields))
	for i, f := range fields {
		fdt, shape := leafDType(f)
		n, _ := ndarray.NumElements(shape)
		size, off := fdt.ItemSize, f.Offset
		vals := items{n: rows.n * n, at: func(j int) []byte {
			at := off + (j%n)*size
			return rows.at(j / n)[at : at+size]
		}}
		elem := newItemFormat(fdt, vals, o)
		if shape == nil {
			formats[i] = func(b []byte) string { return elem(b[off : off+size]) }
			continue
		}
		formats[i] = func(b []byte) string {
			return subArrayString(b[off:off+n*size], size, shape, elem)
		}
	}
	return func(b []byte) string {
		parts := make([]string, len(formats))
		for i, f := range formats {
			parts[i] = f(b)
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
}

// leafDType is a field's element dtype and shape as numpy's a[name]
// gives them: a field of a subarray dtype, ('a', ('<i4', (2,)), (3,)),
// is of '<i4' and shape (3, 2).
func leafDType(f ndarray.Field) (ndarray.DType, []int) {
	dt, shape := f.DType, f.Shape
	for {
		base, sub, ok := dt.Subarray()
		if !ok {
			return dt, shape
		}
		dt, shape = base, append(append([]int{}, shape...), sub...)
	}
}

// subArrayString is a subarray field's value as numpy's SubArrayFormat
// writes it: nested brackets, ", " between items, every item (numpy 1.x
// does not summarise subarrays; inspect cuts the row at firstWidth
// instead).
func subArrayString(data []byte, size int, shape []int, elem func([]byte) string) string {
	var b strings.Builder
	writeSubArray(&b, data, size, shape, elem)
	return b.String()
}

func writeSubArray(b *strings.Builder, data []byte, size int, shape []int, elem func([]byte) string) {
	if len(shape) == 0 {
		b.WriteString(elem(data[:size]))
		return
	}
	inner := size
	for _, d := range shape[1:] {
		inner *= d
	}
	b.WriteByte('[')
	for i := range shape[0] {
		if i > 0 {
			b.WriteString(", ")
		}
		writeSubArray(b, data[i*inner:(i+1)*inner], size, shape[1:], elem)
	}
	b.WriteByte(']')
}

// stringTexts formats the captured S or U items as numpy prints them in
// an array ('text', b'bytes'), each cut to stringWidth characters.
func stringTexts(dt ndarray.DType, items [][]byte) []*number {
	out := make([]*number, 0, len(items))
	for _, it := range items {
		if it == nil && dt.ItemSize > 0 {
			break
		}
		n := formatItem(dt, it)
		n.s = cutText(pyRepr(dt, it), stringWidth)
		out = append(out, n)
	}
	return out
}

// cutText cuts s to width characters, ending it with "..." when cut.
func cutText(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	r := []rune(s)
	return string(r[:width-3]) + "..."
}

// printFirstRecords prints the first records, one a line.
func printFirstRecords(w io.Writer, indent string, a arrayReport) {
	if len(a.First) == 0 {
		return
	}
	label := "first     "
	for _, v := range a.First {
		fmt.Fprintf(w, "%s%s%s\n", indent, label, peertext.Line(v.text()))
		label = strings.Repeat(" ", len(label))
	}
	if a.Elements > len(a.First) {
		fmt.Fprintf(w, "%s%s...\n", indent, label)
	}
}

// firstLine joins the first values of a string array for the "first"
// line, stopping before firstWidth characters.
func firstLine(texts []string, total int) string {
	used := 0
	for i, t := range texts {
		used += utf8.RuneCountInString(t) + 1
		if used > firstWidth && i > 0 {
			return strings.Join(texts[:i], " ") + " ..."
		}
	}
	more := ""
	if total > len(texts) {
		more = " ..."
	}
	return strings.Join(texts, " ") + more
}
