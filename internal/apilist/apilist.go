// Package apilist lists a module's exported API, one line per name, in the
// manner of the Go project's api/*.txt files, from the packages' types as
// the compiler sees them (go/types over the compiler's export data), not
// from their syntax: every exported constant (with its value), variable,
// function and type of every public package; every exported field of a
// struct type, those promoted from embedded structs (exported or not)
// included; every method of a type's method set, promoted ones included;
// for an alias of a type that no public package declares (an internal
// one), that type's shape, fields and methods under the alias's name; and
// any other type a user cannot name but holds values of (an internal or
// unexported type that a signature or field names), under its own
// package's path. The listing is checked in
// as api/v1.txt and a test holds the code to it, so that every change to
// the public surface, however it is reached, is a deliberate edit of that
// file.
package apilist

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
)

// Listing is the module's API: its lines, sorted, and how many exported
// names they hold (constants, variables, functions, types and methods,
// promoted methods and an alias's members included; not struct fields or
// interface methods).
type Listing struct {
	Lines []string
	Names int
}

// listedPackage is what go list says of one package.
type listedPackage struct {
	ImportPath, Name, Export string
	Error                    *struct{ Err string }
}

// List lists the API of the public packages of the module rooted at root
// (whose path is module): every package outside an internal folder (at
// any depth, as Go's rule has it), cmd/ and examples/, and not a main
// package. It runs go list -export in root, so the packages and their
// dependencies are compiled (or taken from the build cache) first.
func List(root, module string) (Listing, error) {
	pkgs, err := goList(root)
	if err != nil {
		return Listing{}, err
	}
	exports := map[string]string{}
	var public []string
	for _, p := range pkgs {
		if p.Error != nil && isPublic(p, module) {
			return Listing{}, fmt.Errorf("apilist: %s: %s", p.ImportPath, strings.TrimSpace(p.Error.Err))
		}
		exports[p.ImportPath] = p.Export
		if isPublic(p, module) {
			public = append(public, p.ImportPath)
		}
	}
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, fmt.Errorf("apilist: go list gave no export data for %s", path)
		}
		return os.Open(exports[path])
	})
	l := &lister{module: module, public: map[string]bool{}, reached: map[string]*types.TypeName{}, listed: map[string]bool{}}
	for _, path := range public {
		l.public[path] = true
	}
	for _, path := range public {
		pkg, err := imp.Import(path)
		if err != nil {
			return Listing{}, fmt.Errorf("apilist: %s: %w", path, err)
		}
		l.addPackage(pkg)
	}
	l.addReached()
	sort.Strings(l.Lines)
	return l.Listing, nil
}

func goList(root string) ([]listedPackage, error) {
	cmd := exec.Command("go", "list", "-e", "-export", "-deps", "-json=ImportPath,Name,Export,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("apilist: go list: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return pkgs, nil
		} else if err != nil {
			return nil, fmt.Errorf("apilist: reading go list's output: %w", err)
		}
		pkgs = append(pkgs, p)
	}
}

// isPublic reports whether p is one of the module's public library
// packages.
func isPublic(p listedPackage, module string) bool {
	if p.Name == "main" || (p.ImportPath != module && !strings.HasPrefix(p.ImportPath, module+"/")) {
		return false
	}
	rel := strings.Split(strings.TrimPrefix(p.ImportPath, module), "/")
	if len(rel) > 1 && (rel[1] == "cmd" || rel[1] == "examples" || rel[1] == "api") {
		return false
	}
	for _, elem := range rel {
		if elem == "internal" || elem == "testdata" || strings.HasPrefix(elem, ".") || strings.HasPrefix(elem, "_") {
			return false
		}
	}
	return true
}

// lister adds one package's lines at a time.
type lister struct {
	Listing
	module string
	public map[string]bool // import paths of the listed packages
	pkg    *types.Package  // the package being listed
	prefix string          // "pkg PATH, "

	// reached holds the types a user cannot name (see hidden) that the
	// lines written so far name, by "path.Name"; listed, those whose
	// members are listed already (under an alias's name).
	reached map[string]*types.TypeName
	listed  map[string]bool
}

func key(obj *types.TypeName) string { return obj.Pkg().Path() + "." + obj.Name() }

// hidden reports whether obj is a type of the module that a user cannot
// name: one of an internal package, or an unexported one.
func (l *lister) hidden(obj *types.TypeName) bool {
	if obj.Pkg() == nil || (l.public[obj.Pkg().Path()] && obj.Exported()) {
		return false
	}
	return obj.Pkg().Path() == l.module || strings.HasPrefix(obj.Pkg().Path(), l.module+"/")
}

// addReached lists, under their own packages' paths, the types a user
// cannot name (an internal package's, or unexported ones) that the API
// names (in a field, a signature, an alias) without an alias that lists
// their members: a user holds values of them, so their fields and methods
// are API too. Listing one can reach others, so it goes on until none is
// new.
func (l *lister) addReached() {
	for {
		var todo []string
		for k := range l.reached {
			if !l.listed[k] {
				todo = append(todo, k)
			}
		}
		if len(todo) == 0 {
			return
		}
		sort.Strings(todo)
		for _, k := range todo {
			obj := l.reached[k]
			l.listed[k] = true
			l.pkg, l.prefix = obj.Pkg(), "pkg "+obj.Pkg().Path()+", "
			l.addType(obj)
		}
	}
}

func (l *lister) add(name bool, format string, args ...any) {
	l.Lines = append(l.Lines, l.prefix+fmt.Sprintf(format, args...))
	if name {
		l.Names++
	}
}

func (l *lister) addPackage(pkg *types.Package) {
	l.pkg, l.prefix = pkg, "pkg "+pkg.Path()+", "
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		switch obj := obj.(type) {
		case *types.Const:
			l.add(true, "const %s %s = %s", name, l.typ(obj.Type()), obj.Val().ExactString())
		case *types.Var:
			l.add(true, "var %s %s", name, l.typ(obj.Type()))
		case *types.Func:
			sig := obj.Type().(*types.Signature)
			l.add(true, "func %s%s%s", name, l.typeParams(sig.TypeParams()), l.signature(sig))
		case *types.TypeName:
			l.addType(obj)
		}
	}
}

// addType lists a type: its declaration, and the members of a defined
// type, or of an alias's target when no listed package declares it.
func (l *lister) addType(obj *types.TypeName) {
	if obj.IsAlias() {
		l.add(true, "type %s = %s", obj.Name(), l.typ(types.Unalias(obj.Type())))
		named, ok := types.Unalias(obj.Type()).(*types.Named)
		if !ok || !l.hidden(named.Obj()) || l.listed[key(named.Origin().Obj())] {
			return
		}
		l.listed[key(named.Origin().Obj())] = true
		l.addMembers(obj.Name(), obj.Name(), named)
		return
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		return
	}
	var params []string
	for i := 0; i < named.TypeParams().Len(); i++ {
		params = append(params, named.TypeParams().At(i).Obj().Name())
	}
	recv := obj.Name()
	if len(params) > 0 {
		recv += "[" + strings.Join(params, ", ") + "]"
	}
	l.addMembers(obj.Name()+l.typeParams(named.TypeParams()), recv, named)
}

// addMembers lists a named type under the name head (with its type
// parameters) and receiver name recv: its kind, its struct fields or
// interface methods, and its method set.
func (l *lister) addMembers(head, recv string, named *types.Named) {
	switch u := named.Underlying().(type) {
	case *types.Struct:
		l.add(true, "type %s struct", head)
		l.addFields(head, named)
	case *types.Interface:
		l.add(true, "type %s interface", head)
		for i := 0; i < u.NumEmbeddeds(); i++ {
			if e := u.EmbeddedType(i); !isInterfaceWithMethodsOnly(e) {
				l.add(false, "type %s interface, embedded %s", head, l.typ(e))
			}
		}
		for i := 0; i < u.NumMethods(); i++ {
			if m := u.Method(i); m.Exported() {
				l.add(false, "type %s interface, %s%s", head, m.Name(), l.signature(m.Type().(*types.Signature)))
			}
		}
		return // an interface's method set is its methods, listed above
	default:
		l.add(true, "type %s %s", head, l.typ(u))
	}
	l.addMethods(recv, named)
}

// isInterfaceWithMethodsOnly reports whether an embedded interface
// element adds only methods (which the interface's lines list), not a
// type set.
func isInterfaceWithMethodsOnly(t types.Type) bool {
	i, ok := t.Underlying().(*types.Interface)
	return ok && i.IsMethodSet()
}

// addFields lists the exported fields a selector reaches on a value of
// the struct type t: its own, and those promoted from embedded structs
// (marked "promoted": unlike its own fields, they cannot be set in a
// composite literal of t), as Go's selector rules resolve them.
func (l *lister) addFields(head string, t types.Type) {
	seen := map[string]bool{}
	for _, f := range candidateFields(t, nil) {
		if !f.Exported() || seen[f.Name()] {
			continue
		}
		seen[f.Name()] = true
		obj, index, _ := types.LookupFieldOrMethod(t, true, l.pkg, f.Name())
		v, ok := obj.(*types.Var)
		if !ok || !v.IsField() {
			continue // ambiguous, or shadowed by a method
		}
		what := v.Name() + " " + l.typ(v.Type())
		if v.Embedded() {
			what = "embedded " + l.typ(v.Type())
		}
		if len(index) > 1 {
			what += " (promoted)"
		}
		l.add(false, "type %s struct, %s", head, what)
	}
}

// candidateFields returns the fields of the struct type t and of every
// struct embedded in it, at any depth, each struct visited once.
func candidateFields(t types.Type, visited map[types.Type]bool) []*types.Var {
	if visited == nil {
		visited = map[types.Type]bool{}
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	s, ok := t.Underlying().(*types.Struct)
	if !ok || visited[t] {
		return nil
	}
	visited[t] = true
	var fields []*types.Var
	for i := 0; i < s.NumFields(); i++ {
		f := s.Field(i)
		fields = append(fields, f)
		if f.Embedded() {
			fields = append(fields, candidateFields(f.Type(), visited)...)
		}
	}
	return fields
}

// addMethods lists the exported methods of the method sets of named (as
// "(T)") and of its pointer (as "(*T)", those not already in named's).
func (l *lister) addMethods(recv string, named *types.Named) {
	value := types.NewMethodSet(named)
	for i := 0; i < value.Len(); i++ {
		if m := value.At(i).Obj(); m.Exported() {
			l.add(true, "method (%s) %s%s", recv, m.Name(), l.signature(value.At(i).Type().(*types.Signature)))
		}
	}
	ptr := types.NewMethodSet(types.NewPointer(named))
	for i := 0; i < ptr.Len(); i++ {
		if m := ptr.At(i).Obj(); m.Exported() && value.Lookup(m.Pkg(), m.Name()) == nil {
			l.add(true, "method (*%s) %s%s", recv, m.Name(), l.signature(ptr.At(i).Type().(*types.Signature)))
		}
	}
}
