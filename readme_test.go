package ndpack_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// The README's Go code compiles as a reader would paste it: each block
// that is not a whole program becomes the body of main, under its imports.
// (TestReadmeGoBlocksRun runs those that need nothing a reader starts.)
func TestReadmeGoBlocksCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every block")
	}
	blocks := writeReadmeBlocks(t)
	var pkgs []string
	for _, b := range blocks {
		pkgs = append(pkgs, b.pkg)
	}
	cmd := exec.Command("go", append([]string{"vet"}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the README's Go blocks do not compile: %v\n%s", err, out)
	}
}

// readmeBlock is one Go block of the README, as a package of its own.
type readmeBlock struct {
	src    string // the block as the README has it
	before string // the README's text just before it (800 bytes at most, back to the last block)
	pkg    string // ./.readme-check-*/blockN, the block as a program
}

// writeReadmeBlocks writes each Go block of the README as a program in a
// dot directory of the module (removed when t ends), so that its packages
// resolve and ./... never sees it.
func writeReadmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	found := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatchIndex(string(readme), -1)
	if len(found) < 5 {
		t.Fatalf("%d Go blocks in the README, want the 5 it has had", len(found))
	}
	dir, err := os.MkdirTemp(".", ".readme-check-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	importDecl := regexp.MustCompile(`(?s)^(import \([^)]*\)|import "[^"]*")\n`)
	var out []readmeBlock
	last := 0
	for i, m := range found {
		b := readmeBlock{src: string(readme[m[2]:m[3]]), before: string(readme[max(last, m[0]-800):m[0]])}
		last = m[1]
		src := b.src
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
		b.pkg = "./" + filepath.ToSlash(pkg)
		out = append(out, b)
	}
	return out
}

// Every Go block of the README runs as written after the blocks and
// commands before it, or the text before it says in one sentence what to
// start first: a block that calls a server (S3, a yaq daemon, a yaq-RPC
// sensor, a policy server) is preceded by the command that starts one; a
// block that serves runs until stopped; every other block is run here, in
// a directory holding what the text before it says to make, and must end
// well within a minute.
func TestReadmeGoBlocksRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs README blocks")
	}
	needs := []struct{ call, start string }{
		{"remote.Options{}.Open", "AWS_ENDPOINT_URL"},
		{"yaq.Dial(", "go run ./examples/yaqd-fakes fake-camera --config cam.toml"},
		{"yaqrpc.Dial(", "go run ./examples/fakesensor -addr 127.0.0.1:38000"},
		{"openpi.Dial(", "ndpack openpi serve --addr 127.0.0.1:8000 --echo"},
		{"gr00tpolicy.Dial(", "ndpack gr00t serve --addr 127.0.0.1:5555 --echo"},
	}
	bin := t.TempDir()
	ran := 0
blocks:
	for i, b := range writeReadmeBlocks(t) {
		for _, n := range needs {
			if strings.Contains(b.src, n.call) {
				if !strings.Contains(strings.Join(strings.Fields(b.before), " "), n.start) {
					t.Errorf("block %d calls %s, and the text before it does not say to start %q first", i, n.call, n.start)
				}
				continue blocks
			}
		}
		if strings.Contains(b.src, ".Main()") || strings.Contains(b.src, ".Serve(") {
			continue // a daemon or a server: it runs until stopped
		}
		exe := filepath.Join(bin, fmt.Sprintf("block%d", i))
		if out, err := exec.Command("go", "build", "-o", exe, b.pkg).CombinedOutput(); err != nil {
			t.Fatalf("block %d: %v\n%s", i, err, out)
		}
		work := t.TempDir()
		if strings.Contains(strings.Join(strings.Fields(b.before), " "), "ndpack create image.npy --dtype float32 --shape 480,640") {
			img, _ := ndarray.Zeros(ndarray.MustParseDType("<f4"), 480, 640)
			if err := npybridge.WriteFile(filepath.Join(work, "image.npy"), img); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, exe)
		cmd.Dir = work
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("README block %d does not run as written: %v\n%s\n%s", i, err, out, b.src)
		}
		ran++
	}
	if ran < 3 {
		t.Errorf("ran %d README blocks, want the 3 or more that need nothing started", ran)
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
