package ndpack_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// The README's Go code compiles as a reader would paste it: each block
// that is not a whole program becomes the body of main, under its imports.
// (The blocks talk to daemons and files a reader has; compiling them is
// what can be checked here, and what a stale name breaks.)
func TestReadmeGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every block")
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) < 5 {
		t.Fatalf("%d Go blocks in the README, want the 5 it has had", len(blocks))
	}
	// Inside the module, so that its packages resolve; a dot directory,
	// so that ./... never sees it.
	dir, err := os.MkdirTemp(".", ".readme-check-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	importDecl := regexp.MustCompile(`(?s)^(import \([^)]*\)|import "[^"]*")\n`)
	var pkgs []string
	for i, b := range blocks {
		src := b[1]
		if !strings.Contains(src, "func main()") {
			imports := importDecl.FindString(src)
			body := strings.TrimPrefix(src, imports)
			src = "package main\n\n" + imports + "\nfunc main() {\n" + body + "}\n"
		}
		pkg := filepath.Join(dir, fmt.Sprintf("block%d", i))
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "main.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "mydaemon.avpr"), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, "./"+filepath.ToSlash(pkg))
	}
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go blocks do not compile: %v\n%s", err, out)
	}
}

// The README's errors.Is hint holds: a truncated .npy and a truncated
// ext 110 blob both match ndarray.ErrTruncated, and a negative dimension
// matches ndarray.ErrShape, whichever codec found them.
func TestReadmeErrorsIsHint(t *testing.T) {
	a, _ := ndarray.FromSlice([]float64{1, 2, 3, 4, 5, 6}, 2, 3)
	var npy bytes.Buffer
	if err := npybridge.Write(&npy, a); err != nil {
		t.Fatal(err)
	}
	_, npyErr := npybridge.Read(bytes.NewReader(npy.Bytes()[:npy.Len()-1]))
	blob, _ := ext110.Marshal(a)
	_, extErr := ext110.Unmarshal(blob[:len(blob)-1])
	for name, err := range map[string]error{"a truncated .npy": npyErr, "a truncated ext 110 blob": extErr} {
		if !errors.Is(err, ndarray.ErrTruncated) {
			t.Errorf("%s: %v is not errors.Is ndarray.ErrTruncated", name, err)
		}
	}
	header := "{'descr': '<f8', 'fortran_order': False, 'shape': (-2, 3), }"
	header += strings.Repeat(" ", 63-(10+len(header))%64) + "\n"
	bad := append([]byte(npybridge.Magic), 1, 0, byte(len(header)), 0)
	_, err := npybridge.Read(bytes.NewReader(append(bad, header...)))
	if !errors.Is(err, ndarray.ErrShape) {
		t.Errorf("a negative dimension: %v is not errors.Is ndarray.ErrShape", err)
	}
}

// .gitignore covers the binary `go build` leaves for every main package of
// the module: at the root (go build ./internal/cmd/apilist) and in the
// package's folder (go build there), so that no build is committed by
// mistake.
func TestGitignoreCoversBinaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{if eq .Name "main"}}{{.ImportPath}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatal(err)
	}
	ignore, err := os.ReadFile(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]bool{}
	for _, line := range strings.Split(string(ignore), "\n") {
		entries[strings.TrimSpace(line)] = true
	}
	mains := strings.Fields(string(out))
	if len(mains) < 7 {
		t.Fatalf("%d main packages, want the 7 or more the module has: %q", len(mains), mains)
	}
	for _, m := range mains {
		rel := strings.TrimPrefix(m, "github.com/ndpack/ndpack/")
		base := filepath.Base(rel)
		for _, want := range []string{"/" + base, "/" + rel + "/" + base} {
			if !entries[want] {
				t.Errorf(".gitignore lacks %s, the binary go build makes of %s", want, m)
			}
		}
	}
}
