package apilist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A module whose API hides behind what a syntax-only listing missed: an
// alias of an internal type, fields and methods promoted from unexported
// embedded structs, an internal type and an unexported one that functions
// return, a field promoted twice at one depth (ambiguous, so no API),
// parameter names (not API).
var module = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.24\n",
	"internal/in/in.go": `package in

type T struct {
	X int
	y int
}

func (T) M()  {}
func (*T) P() {}

type U struct{ Y []T }

func (U) Z() *T { return nil }
`,
	"a/a.go": `package a

import (
	"io"

	"example.com/m/internal/in"
)

type Alias = in.T

type S struct {
	inner
	*Exp
	Field func(n int, rest ...string) (err error)
	left
	right
}

type inner struct {
	Hidden string
	deeper
}

type deeper struct{ Deep int }

type left struct{ Both int }
type right struct{ Both int }

func (inner) Promoted() {}

type Exp struct{ E map[string]chan<- int }

func (*Exp) PM(x ...string) {}

func Reach() in.U { return in.U{} }

const C = 3

const D Kind = 2

type Kind uint8

var V error

func G[T ~int | ~string](t T) []T { return nil }

type I interface {
	io.Reader
	Extra(int) bool
}

type Gen[T any] struct{ V T }

func (g *Gen[T]) Get() T { return g.V }

type unexported struct{ A int }

type hidden struct{ V int }

func (hidden) M() {}

func Hide() *hidden { return nil }
`,
	"a/internal/deep/deep.go": "package deep\n\nfunc Hidden() {}\n",
	"cmd/x/main.go":           "package main\n\nfunc Exported() {}\n\nfunc main() {}\n",
	"examples/e/e.go":         "package e\n\nfunc Example() {}\n",
}

const want = `pkg example.com/m/a, const C untyped int = 3
pkg example.com/m/a, const D Kind = 2
pkg example.com/m/a, func G[T ~int | ~string](T) []T
pkg example.com/m/a, func Hide() *hidden
pkg example.com/m/a, func Reach() in.U
pkg example.com/m/a, method (*Alias) P()
pkg example.com/m/a, method (*Exp) PM(...string)
pkg example.com/m/a, method (*Gen[T]) Get() T
pkg example.com/m/a, method (Alias) M()
pkg example.com/m/a, method (S) PM(...string)
pkg example.com/m/a, method (S) Promoted()
pkg example.com/m/a, method (hidden) M()
pkg example.com/m/a, type Alias = in.T
pkg example.com/m/a, type Alias struct
pkg example.com/m/a, type Alias struct, X int
pkg example.com/m/a, type Exp struct
pkg example.com/m/a, type Exp struct, E map[string]chan<- int
pkg example.com/m/a, type Gen[T any] struct
pkg example.com/m/a, type Gen[T any] struct, V T
pkg example.com/m/a, type I interface
pkg example.com/m/a, type I interface, Extra(int) bool
pkg example.com/m/a, type I interface, Read([]byte) (int, error)
pkg example.com/m/a, type Kind uint8
pkg example.com/m/a, type S struct
pkg example.com/m/a, type S struct, Deep int (promoted)
pkg example.com/m/a, type S struct, E map[string]chan<- int (promoted)
pkg example.com/m/a, type S struct, Field func(int, ...string) error
pkg example.com/m/a, type S struct, Hidden string (promoted)
pkg example.com/m/a, type S struct, embedded *Exp
pkg example.com/m/a, type hidden struct
pkg example.com/m/a, type hidden struct, V int
pkg example.com/m/a, var V error
pkg example.com/m/internal/in, method (U) Z() *T
pkg example.com/m/internal/in, type U struct
pkg example.com/m/internal/in, type U struct, Y []T`

func TestList(t *testing.T) {
	l, err := List(writeModule(t, module), "example.com/m")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.Lines, "\n"); got != want {
		t.Errorf("listing:\n%s\nwant:\n%s", got, want)
	}
	// Constants, variables, functions, types (aliases too) and methods,
	// promoted ones and an alias's included.
	if l.Names != 23 {
		t.Errorf("Names = %d, want 23", l.Names)
	}
}

func TestListReportsBrokenPackage(t *testing.T) {
	root := writeModule(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.24\n",
		"a/a.go": "package a\n\nfunc F() undefined { return nil }\n",
	})
	_, err := List(root, "example.com/m")
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "example.com/m/a") || !strings.Contains(err.Error(), "undefined") {
		t.Errorf("List of a package that does not compile: %v, want an error naming it", err)
	}
}

func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}
