package refs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/npybridge"
)

const corpusDir = "../../shared/corpus/external"

func requirePeers(t *testing.T) {
	t.Helper()
	for module, pkg := range map[string]string{"zarr": "python3-zarr", "fsspec": "python3-fsspec", "aiohttp": "python3-aiohttp"} {
		pypeer.RequireModule(t, module, pkg)
	}
}

// corpusInputs lists the corpus files np.load reads without pickles: the
// .npy files and .npz archives expected.json calls valid or structured.
func corpusInputs(t *testing.T) []string {
	var expected map[string]struct {
		Kind, Verdict string
	}
	if err := json.Unmarshal(sharedfiles.ReadFile(t, filepath.Join(corpusDir, "expected.json")), &expected); err != nil {
		t.Fatal(err)
	}
	var files []string
	for name, e := range expected {
		if (e.Kind == "npy" || e.Kind == "npz") && (e.Verdict == "valid" || e.Verdict == "structured") {
			files = append(files, name)
		}
	}
	sort.Strings(files)
	return files
}

// countingServer serves dir over HTTP on 127.0.0.1, with Range, counting
// requests and bytes by path.
type countingServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests map[string]int
}

func serveCounting(t *testing.T, dir string) *countingServer {
	s := &countingServer{requests: map[string]int{}}
	files := http.FileServer(http.Dir(dir))
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[strings.TrimPrefix(r.URL.Path, "/")]++
		s.mu.Unlock()
		files.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestCorpusThroughZarrPython makes references to every array of the
// external corpus that Zarr v2 can express, local and over HTTP: through
// fsspec's reference file system, zarr.open(...)[name][...] equals
// np.load, value and dtype, every .npz member too. Each remote .npy costs
// one request, each .npz at most two and one per member.
func TestCorpusThroughZarrPython(t *testing.T) {
	requirePeers(t)
	inputs := corpusInputs(t)
	srv := serveCounting(t, corpusDir)
	out := t.TempDir()
	var lines []string
	refused := map[string]string{}
	for i, name := range inputs {
		local := filepath.Join(corpusDir, name)
		for _, via := range []string{"file", "http"} {
			url := local
			if via == "http" {
				url = srv.URL + "/" + name
			}
			b := Options{}.NewBuilder()
			err := b.AddFiles(context.Background(), []string{url})
			if err != nil {
				if !errors.Is(err, npybridge.ErrCompressed) && !errors.Is(err, ErrUnsupported) {
					t.Errorf("%s (%s): %v", name, via, err)
				}
				refused[name] = err.Error()
				continue
			}
			refs := filepath.Join(out, fmt.Sprintf("%d-%s.json", i, via))
			f, _ := os.Create(refs)
			b.Set().WriteTo(f)
			f.Close()
			lines = append(lines, fmt.Sprintf("%s\t%s\t%s", refs, local, NameOf(url)))
		}
		if _, ok := refused[name]; ok {
			continue
		}
		srv.mu.Lock()
		n := srv.requests[name]
		srv.mu.Unlock()
		if strings.HasSuffix(name, ".npy") && n != 1 {
			t.Errorf("%s: %d requests for its references, want 1", name, n)
		}
	}
	for name, why := range refused {
		t.Logf("refused: %s: %s", name, why)
	}
	// Refused are the archives with deflated members, and nothing else.
	for name := range refused {
		if !strings.HasSuffix(name, ".npz") {
			t.Errorf("%s was refused", name)
		}
	}
	if len(lines) < 2*250 {
		t.Fatalf("only %d reference files", len(lines))
	}
	got := pypeer.Run(t, `
import sys, fsspec, zarr, numpy as np
bad = n = 0
for line in sys.stdin.read().splitlines():
    refs, path, name = line.split('\t')
    root = zarr.open(fsspec.get_mapper('reference://', fo=refs), mode='r')
    want = np.load(path)
    pairs = [(root[name], want)] if path.endswith('.npy') or not hasattr(want, 'files') else [(root[name][m], want[m]) for m in want.files]
    for z, a in pairs:
        n += 1
        got = z[...]
        if got.dtype != a.dtype or got.shape != a.shape or np.ascontiguousarray(got).tobytes() != np.ascontiguousarray(a).tobytes():
            print('DIFFERENT', refs, path, got.dtype, a.dtype, got.shape, a.shape)
            bad += 1
print('compared', n, 'arrays, different:', bad)
`, []byte(strings.Join(lines, "\n")))
	if !bytes.HasSuffix(bytes.TrimSpace(got), []byte("different: 0")) || bytes.Contains(got, []byte("DIFFERENT")) {
		t.Errorf("zarr-python through fsspec:\n%s", got)
	}
	t.Logf("%d reference files: %s; %d inputs refused", len(lines), bytes.TrimSpace(got), len(refused))
}
