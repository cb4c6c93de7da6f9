package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/ndpack/ndpack/render"
)

// previewFlags are inspect's --preview and --width.
type previewFlags struct {
	preview *bool
	width   *int
}

func addPreviewFlags(fs *flag.FlagSet) *previewFlags {
	return &previewFlags{preview: fs.Bool("preview", false, ""), width: fs.Int("width", 0, "")}
}

// defaultWidth is the preview's width when neither --width, COLUMNS nor
// the terminal says.
const defaultWidth = 80

// wrap returns out drawing previews below the statistics: of 1-D and 2-D
// arrays with --preview, of 2-D arrays by default when standard output is
// a terminal. JSON is for scripts: --preview with --json is refused.
func (pf *previewFlags) wrap(e env, fs *flag.FlagSet, out reportWriter, asJSON bool) (reportWriter, error) {
	explicit := false
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "preview" })
	switch {
	case *pf.width < 0:
		return nil, usageError("--width %d: want a number of columns", *pf.width)
	case asJSON && *pf.preview:
		return nil, usageError("--preview draws for a terminal; --json prints for scripts")
	case asJSON, explicit && !*pf.preview, !explicit && !e.stdoutTerminal:
		return out, nil
	}
	width := *pf.width
	if width == 0 {
		width, _ = strconv.Atoi(os.Getenv("COLUMNS"))
	}
	if width <= 0 && e.stdoutTerminal {
		width = terminalColumns(os.Stdout)
	}
	if width <= 0 {
		width = defaultWidth
	}
	return &previewReports{reportWriter: out, w: e.stdout, width: width, sparklines: *pf.preview}, nil
}

// previewReports is a text report writer that also draws the arrays.
type previewReports struct {
	reportWriter
	w          io.Writer
	width      int
	sparklines bool // 1-D arrays too: --preview was asked for
}

// arrayPreview is the preview of one array being inspected.
type arrayPreview struct {
	p      *render.Preview
	w      io.Writer
	indent string
}

// startPreview makes *src feed a preview as inspect reads its data, when
// out draws previews and the array can be drawn (numbers, 1-D or 2-D, not
// empty); otherwise it returns nil, whose draw does nothing.
func startPreview(out reportWriter, src *arraySource) *arrayPreview {
	pr, ok := out.(*previewReports)
	if !ok || src.err != nil || len(src.shape) != 2 && !(pr.sparklines && len(src.shape) == 1) {
		return nil
	}
	indent := "  "
	if src.name != "" {
		indent = "    " // as printArray indents a named array
	}
	p, err := render.NewPreview(src.dtype, src.shape, src.fortran, max(1, pr.width-len(indent)), render.Options{Colormap: "viridis"})
	if err != nil {
		return nil // records, strings, dates, empty arrays: nothing to draw
	}
	open := src.open
	src.open = func() (io.ReadCloser, error) {
		rc, err := open()
		if err != nil {
			return nil, err
		}
		return teeReadCloser{io.TeeReader(rc, p), rc}, nil
	}
	return &arrayPreview{p: p, w: pr.w, indent: indent}
}

type teeReadCloser struct {
	io.Reader
	io.Closer
}

// draw prints the preview under the array's report, unless reading the
// array failed.
func (ap *arrayPreview) draw(a arrayReport) {
	if ap == nil || a.Error != "" {
		return
	}
	var b bytes.Buffer
	ap.p.WriteTo(&b)
	var out strings.Builder
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			out.WriteString(ap.indent + line)
		}
	}
	io.WriteString(ap.w, out.String())
}
