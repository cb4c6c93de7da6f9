package ndpack_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function of the module may be, from its
// func keyword to its closing brace (doc comment not counted).
const maxFuncLines = 120

// No function in the module's code (test files aside) is over
// maxFuncLines lines: a longer one is split where it does two things.
func TestFunctionLength(t *testing.T) {
	fset := token.NewFileSet()
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			var name string
			switch n := n.(type) {
			case *ast.FuncDecl:
				name = n.Name.Name
				if n.Recv != nil && len(n.Recv.List) == 1 {
					name = recvName(n.Recv.List[0].Type) + "." + name
				}
			case *ast.FuncLit:
				name = "a function literal"
			default:
				return true
			}
			start, end := fset.Position(n.Pos()), fset.Position(n.End())
			if lines := end.Line - start.Line + 1; lines > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it", start, name, lines, maxFuncLines)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("checked %d files: the walk missed the module", files)
	}
}

// recvName names a receiver's type as its method is written: "(*Reader)".
func recvName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return "(*" + strings.Trim(recvName(e.X), "()") + ")"
	case *ast.IndexExpr:
		return recvName(e.X)
	case *ast.IndexListExpr:
		return recvName(e.X)
	case *ast.Ident:
		return "(" + e.Name + ")"
	}
	return "(?)"
}
