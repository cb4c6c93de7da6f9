package ndpack

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// failureWords is what a doc comment says when it tells how its function
// fails: "fails", "error" (as in "returns the writer's error" or "Its
// error is always nil"), or a sentinel such as ErrTruncated.
var failureWords = regexp.MustCompile(`\b(?:[Ff]ail(?:s|ed|ing)?|[Ee]rrors?)\b|\bErr[A-Z]\w*`)

// TestErrorDocs keeps the rule of issue #31 for the packages it was applied
// to: every exported function or method that returns an error says, in its
// doc comment, how it fails. Unwrap methods return the causes of an error
// and are left out.
func TestErrorDocs(t *testing.T) {
	var offenders []string
	n := 0
	for _, dir := range []string{".", "ndarray", "ext110", "dialect", "yaqrpc", "npybridge", "yaq", "yaq/avro", "yaq/kit", "render", "remote", "openpi", "conformance", "zarr", "refs"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			for _, decl := range f.Decls {
				fd, ok := decl.(*ast.FuncDecl)
				if !ok || !fd.Name.IsExported() || fd.Name.Name == "Unwrap" || !returnsError(fd.Type) {
					continue
				}
				name := f.Name.Name + "." + fd.Name.Name
				if fd.Recv != nil {
					recv, exported := receiverName(fd.Recv.List[0].Type)
					if !exported {
						continue
					}
					name = f.Name.Name + "." + recv + "." + fd.Name.Name
				}
				n++
				if !failureWords.MatchString(fd.Doc.Text()) {
					offenders = append(offenders, name+" ("+fset.Position(fd.Pos()).String()+")")
				}
			}
		}
	}
	if n < 70 {
		t.Errorf("found only %d exported functions returning an error; is the walk broken?", n)
	}
	if len(offenders) > 0 {
		t.Errorf("%d exported functions return an error without saying in their doc comment how they fail (a sentence with \"fails\", \"error\" or the ErrXxx they match):\n\t%s",
			len(offenders), strings.Join(offenders, "\n\t"))
	}
}

// returnsError reports whether a function's last result is error or
// []error.
func returnsError(ft *ast.FuncType) bool {
	if ft.Results == nil || len(ft.Results.List) == 0 {
		return false
	}
	last := ft.Results.List[len(ft.Results.List)-1].Type
	if a, ok := last.(*ast.ArrayType); ok {
		last = a.Elt
	}
	id, ok := last.(*ast.Ident)
	return ok && id.Name == "error"
}

// receiverName returns a method's receiver type as Go writes it in a method
// value, "(*Array)" or "Options", and whether the type is exported.
func receiverName(e ast.Expr) (string, bool) {
	star := ""
	if s, ok := e.(*ast.StarExpr); ok {
		star, e = "*", s.X
	}
	switch x := e.(type) {
	case *ast.IndexExpr:
		e = x.X
	case *ast.IndexListExpr:
		e = x.X
	}
	id, ok := e.(*ast.Ident)
	if !ok {
		return "", false
	}
	if star != "" {
		return "(*" + id.Name + ")", id.IsExported()
	}
	return id.Name, id.IsExported()
}
