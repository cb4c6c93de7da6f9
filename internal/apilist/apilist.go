// Package apilist lists a module's exported API, one line per name, in the
// manner of the Go project's api/*.txt files: every exported constant,
// variable, type (with its exported struct fields and interface methods),
// function and method of every public package. The listing is checked in
// as api/v1.txt and a test holds the code to it, so that every change to
// the public surface is a deliberate edit of that file.
package apilist

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Listing is the module's API: its lines, sorted, and how many exported
// names they hold (types, functions, methods, constants and variables,
// not struct fields or interface methods, as the API issue counts them).
type Listing struct {
	Lines []string
	Names int
}

// List reads the Go files of the module rooted at root (whose path is
// module) and lists the API of its public packages: every package outside
// an internal folder (at any depth, as Go's rule has it), cmd/ and
// examples/, test files and hidden or testdata folders left out.
func List(root, module string) (Listing, error) {
	var l Listing
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		base := d.Name()
		if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" ||
			base == "internal" || rel == "cmd" || rel == "examples" || rel == "api") {
			return filepath.SkipDir
		}
		pkgPath := module
		if rel != "." {
			pkgPath = path.Join(module, rel)
		}
		return l.addPackage(p, pkgPath)
	})
	sort.Strings(l.Lines)
	return l, err
}

func (l *Listing) addPackage(dir, pkgPath string) error {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		return err
	}
	for name, pkg := range pkgs {
		if name == "main" {
			continue
		}
		p := printerOf(fset, "pkg "+pkgPath+", ")
		for _, f := range pkg.Files {
			for _, decl := range f.Decls {
				l.addDecl(p, decl)
			}
		}
	}
	return nil
}

// lister prints declarations' types without parameter names, positions or
// comments.
type lister struct {
	fset   *token.FileSet
	prefix string
}

func printerOf(fset *token.FileSet, prefix string) lister { return lister{fset, prefix} }

func (p lister) expr(e ast.Expr) string {
	var b bytes.Buffer
	printer.Fprint(&b, p.fset, stripNames(e))
	return strings.Join(strings.Fields(b.String()), " ")
}

func (l *Listing) add(line string, name bool) {
	l.Lines = append(l.Lines, line)
	if name {
		l.Names++
	}
}

func (l *Listing) addDecl(p lister, decl ast.Decl) {
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			return
		}
		sig := strings.TrimPrefix(p.expr(d.Type), "func")
		if d.Recv == nil {
			l.add(fmt.Sprintf("%sfunc %s%s", p.prefix, d.Name.Name, sig), true)
			return
		}
		recv := p.expr(d.Recv.List[0].Type)
		if !ast.IsExported(strings.TrimLeft(strings.SplitN(recv, "[", 2)[0], "*")) {
			return
		}
		l.add(fmt.Sprintf("%smethod (%s) %s%s", p.prefix, recv, d.Name.Name, sig), true)
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					l.addType(p, s)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if !n.IsExported() {
						continue
					}
					line := fmt.Sprintf("%s%s %s", p.prefix, d.Tok, n.Name)
					if s.Type != nil {
						line += " " + p.expr(s.Type)
					}
					l.add(line, true)
				}
			}
		}
	}
}

func (l *Listing) addType(p lister, s *ast.TypeSpec) {
	head := p.prefix + "type " + s.Name.Name
	if s.TypeParams != nil {
		head += "[" + p.expr(&ast.FuncType{Params: s.TypeParams})[len("func("):]
		head = strings.TrimSuffix(head, ")") + "]"
	}
	switch t := s.Type.(type) {
	case *ast.StructType:
		l.add(head+" struct", true)
		for _, f := range t.Fields.List {
			typ := p.expr(f.Type)
			if len(f.Names) == 0 { // embedded
				if ast.IsExported(strings.TrimLeft(strings.SplitN(typ[strings.LastIndex(typ, ".")+1:], "[", 2)[0], "*")) {
					l.add(fmt.Sprintf("%s struct, embedded %s", head, typ), false)
				}
				continue
			}
			for _, n := range f.Names {
				if n.IsExported() {
					l.add(fmt.Sprintf("%s struct, %s %s", head, n.Name, typ), false)
				}
			}
		}
	case *ast.InterfaceType:
		l.add(head+" interface", true)
		for _, m := range t.Methods.List {
			for _, n := range m.Names {
				if n.IsExported() {
					l.add(fmt.Sprintf("%s interface, %s%s", head, n.Name, strings.TrimPrefix(p.expr(m.Type), "func")), false)
				}
			}
			if len(m.Names) == 0 {
				l.add(fmt.Sprintf("%s interface, embedded %s", head, p.expr(m.Type)), false)
			}
		}
	default:
		eq := " "
		if s.Assign.IsValid() {
			eq = " = "
		}
		l.add(head+eq+p.expr(s.Type), true)
	}
}

// stripNames returns e with the names of function parameters and results
// removed, so that renaming a parameter does not change the listing.
func stripNames(e ast.Expr) ast.Expr {
	ft, ok := e.(*ast.FuncType)
	if !ok {
		return e
	}
	strip := func(fl *ast.FieldList) *ast.FieldList {
		if fl == nil {
			return nil
		}
		out := &ast.FieldList{}
		for _, f := range fl.List {
			n := max(len(f.Names), 1)
			for range n {
				out.List = append(out.List, &ast.Field{Type: stripNames(f.Type)})
			}
		}
		return out
	}
	return &ast.FuncType{TypeParams: ft.TypeParams, Params: strip(ft.Params), Results: strip(ft.Results)}
}
