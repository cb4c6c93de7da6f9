package remote_test

import (
	"archive/zip"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/remote"
)

// fileServer serves the files of dir over HTTP on 127.0.0.1 (http.ServeContent:
// Range requests), counting requests and bytes served.
type fileServer struct {
	url             string
	requests, bytes atomic.Int64
}

func serveDir(t *testing.T, dir string) *fileServer {
	fs := &fileServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.requests.Add(1)
		f, err := os.Open(filepath.Join(dir, filepath.Base(r.URL.Path)))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		defer f.Close()
		fi, _ := f.Stat()
		w.Header().Set("ETag", fmt.Sprintf(`"%d-%d"`, fi.Size(), fi.ModTime().UnixNano()))
		http.ServeContent(countingWriter{w, &fs.bytes}, r, fi.Name(), fi.ModTime(), f)
	}))
	t.Cleanup(srv.Close)
	fs.url = srv.URL
	return fs
}

func (fs *fileServer) counts() (int64, int64) { return fs.requests.Load(), fs.bytes.Load() }

// numpyRows runs numpy on the files of dir: for each [file, member,
// start, stop] it prints what np.load (np.load(npz)[member] for a member)
// gives for [start:stop] (null: the whole array), as shape and hex bytes.
func numpyRows(t *testing.T, dir string, asks [][]any) map[string][2]string {
	t.Helper()
	in, _ := json.Marshal(asks)
	out := pypeer.Run(t, `
import sys, json, os
import numpy as np
asks = json.loads(sys.stdin.read())
res = {}
for f, member, a, b in asks:
    path = os.path.join(sys.argv[1], f)
    arr = np.load(path, mmap_mode='r') if member is None else np.load(path)[member]
    if a is not None or b is not None:
        arr = arr[a:b]
    arr = np.ascontiguousarray(arr)
    res[json.dumps([f, member, a, b], separators=(',', ':'))] = [str(list(arr.shape)), arr.tobytes().hex()]
print(json.dumps(res))
`, in, dir)
	var res map[string][2]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func sameAsNumpy(t *testing.T, what string, a *ndarray.Array, want [2]string) {
	t.Helper()
	shape := fmt.Sprint(a.Shape)
	wantShape := want[0]
	// "[3, 4]" from Python, "[3 4]" from Go.
	var ws []int
	json.Unmarshal([]byte(wantShape), &ws)
	if shape != fmt.Sprint(ws) || hex.EncodeToString(a.Data) != want[1] {
		t.Errorf("%s: shape %s, %d bytes; numpy: shape %s, %d bytes", what, shape, len(a.Data), wantShape, len(want[1])/2)
	}
}

// TestNPZOverHTTP reads the members of archives numpy wrote, whole and by
// rows, over HTTP, and compares them with what numpy reads locally.
func TestNPZOverHTTP(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import sys, os
import numpy as np
d = sys.argv[1]
rng = np.random.default_rng(7)
arrs = dict(
    a=rng.standard_normal((50, 3)),
    b=np.arange(1000, dtype='<i4'),
    c=np.asfortranarray(rng.integers(0, 100, (6, 5)).astype('<u2')),
    d=np.zeros((0, 4)),
    e=rng.integers(0, 255, (20, 2, 3)).astype('|u1'),
)
np.savez(os.path.join(d, 's.npz'), **arrs)
np.savez_compressed(os.path.join(d, 'z.npz'), **arrs)
np.save(os.path.join(d, 'a.npy'), arrs['a'])
np.save(os.path.join(d, 'c.npy'), arrs['c'])
`, nil, dir)
	fs := serveDir(t, dir)
	slices := [][2]any{{nil, nil}, {2, 7}, {-5, nil}, {nil, -3}, {10, 2}, {-1000, 1000}, {3, 4}}
	var asks [][]any
	for _, f := range []string{"s.npz", "z.npz"} {
		for _, m := range []string{"a", "b", "c", "d", "e"} {
			for _, s := range slices {
				asks = append(asks, []any{f, m, s[0], s[1]})
			}
		}
	}
	for _, s := range slices {
		asks = append(asks, []any{"a.npy", nil, s[0], s[1]}, []any{"c.npy", nil, s[0], s[1]})
	}
	want := numpyRows(t, dir, asks)
	bound := func(v any, def int) int {
		if v == nil {
			return def
		}
		return v.(int)
	}
	for _, ask := range asks {
		key, _ := json.Marshal(ask)
		obj := open(t, fs.url+"/"+ask[0].(string))
		start, stop := bound(ask[2], 0), bound(ask[3], math.MaxInt)
		var a *ndarray.Array
		var err error
		if ask[1] == nil {
			a, err = npybridge.ReadOptions{}.ReadRowsAt(obj, obj.Size(), start, stop)
		} else {
			z, err2 := npybridge.OpenNPZ(obj, obj.Size())
			if err2 != nil {
				t.Fatal(err2)
			}
			whole := ask[2] == nil && ask[3] == nil
			switch {
			case whole:
				a, err = z.Read(ask[1].(string))
			default:
				a, err = z.ReadRows(ask[1].(string), start, stop)
			}
		}
		if err != nil {
			t.Errorf("%s: %v", key, err)
			continue
		}
		sameAsNumpy(t, string(key), a, want[string(key)])
	}
}

// TestNPZListingBudget lists a 100-member, 100 MiB archive numpy wrote
// (each member's header, as ndpack inspect --header does) over HTTP, and
// then reads one stored member, counting requests and bytes.
func TestNPZListingBudget(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import sys, os
import numpy as np
np.savez(os.path.join(sys.argv[1], 'big.npz'), **{'m%02d' % i: np.full(131072, i, dtype='<f8') for i in range(100)})
np.savez_compressed(os.path.join(sys.argv[1], 'small.npz'), **{'m%02d' % i: np.full(131072, i, dtype='<f8') for i in range(3)})
`, nil, dir)
	fs := serveDir(t, dir)
	obj := open(t, fs.url+"/big.npz")
	r0, b0 := fs.counts() // the HEAD
	z, err := npybridge.OpenNPZ(obj, obj.Size())
	if err != nil {
		t.Fatal(err)
	}
	r1, b1 := fs.counts()
	if r1-r0 > 2 || b1-b0 > 64<<10+22 {
		t.Errorf("the directory took %d requests, %d bytes; want at most 2 and 64 KiB + 22 (a zip comment's most and the end record)", r1-r0, b1-b0)
	}
	for _, name := range z.Names() {
		h, err := z.Header(name)
		if err != nil || fmt.Sprint(h.Shape) != "[131072]" {
			t.Fatalf("%s: %v, %v", name, h, err)
		}
	}
	r2, b2 := fs.counts()
	if r2-r1 > 100 || b2-b1 > 100*4<<10 {
		t.Errorf("100 member headers took %d requests, %d bytes; want at most 100 and 400 KiB", r2-r1, b2-b1)
	}
	if b2 >= 1<<20 {
		t.Errorf("listing a 100 MiB archive took %d bytes, want under 1 MiB", b2)
	}
	t.Logf("listing: %d requests, %d bytes", r2, b2)
	a, err := z.Read("m42")
	if err != nil {
		t.Fatal(err)
	}
	if v := a.Data[len(a.Data)-8:]; math.Float64frombits(uint64(v[0])|uint64(v[1])<<8|uint64(v[2])<<16|uint64(v[3])<<24|
		uint64(v[4])<<32|uint64(v[5])<<40|uint64(v[6])<<48|uint64(v[7])<<56) != 42 {
		t.Errorf("m42 ends with % x", v)
	}
	r3, b3 := fs.counts()
	if r3-r2 > 2 || b3-b2 > int64(len(a.Data))+64<<10 {
		t.Errorf("one member of %d bytes took %d requests, %d bytes; want at most 2 and its bytes + 64 KiB", len(a.Data), r3-r2, b3-b2)
	}
	// A deflated member is streamed once: its prefix, then the rest in
	// one request.
	obj = open(t, fs.url+"/small.npz")
	z, err = npybridge.OpenNPZ(obj, obj.Size())
	if err != nil {
		t.Fatal(err)
	}
	r4, b4 := fs.counts()
	if _, err := z.Read("m01"); err != nil {
		t.Fatal(err)
	}
	r5, b5 := fs.counts()
	if r5-r4 > 2 || b5-b4 > obj.Size() {
		t.Errorf("a deflated member took %d requests, %d bytes", r5-r4, b5-b4)
	}
}

// TestRowsOfBigNPY reads 10 rows of a 1 GiB .npy (sparse on disk) over
// HTTP in under 100 KiB.
func TestRowsOfBigNPY(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "big.npy")
	const rows, cols = 131072, 1024 // float64: 8 KiB rows, 1 GiB
	hdr := npybridge.AppendHeader(nil, ndarray.DTypeOf[float64](), []int{rows, cols})
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(hdr)
	if err := f.Truncate(int64(len(hdr)) + rows*cols*8); err != nil {
		t.Fatal(err)
	}
	// Mark rows 100000 to 100009 so that the right rows are read.
	for r := 100000; r < 100010; r++ {
		v := make([]byte, 8)
		for k := range v {
			v[k] = byte(r + k)
		}
		f.WriteAt(v, int64(len(hdr))+int64(r)*cols*8+8*7)
	}
	f.Close()
	fs := serveDir(t, dir)
	obj := open(t, fs.url+"/big.npy")
	_, b0 := fs.counts()
	a, err := npybridge.ReadOptions{}.ReadRowsAt(obj, obj.Size(), -31072, -31062)
	if err != nil {
		t.Fatal(err)
	}
	r1, b1 := fs.counts()
	if b1-b0 >= 100<<10 || r1 != 3 {
		t.Errorf("10 rows took %d requests, %d bytes; want 3 and under 100 KiB", r1, b1-b0)
	}
	if fmt.Sprint(a.Shape) != "[10 1024]" || a.Data[7*8] != byte(100000%256) || a.Data[9*cols*8+7*8+7] != byte((100009+7)%256) {
		t.Errorf("rows: shape %v, marks % x", a.Shape, a.Data[7*8:8*8])
	}
	if pypeerAvailable(t) {
		want := numpyRows(t, dir, [][]any{{"big.npy", nil, -31072, -31062}})
		key, _ := json.Marshal([]any{"big.npy", nil, -31072, -31062})
		sameAsNumpy(t, "rows of big.npy", a, want[string(key)])
	}
}

func pypeerAvailable(t *testing.T) bool {
	pypeer.Require(t)
	return true
}

var _ = context.Background
var _ = time.Second
var _ = remote.IsURL

// TestNPZLargeDirectory lists an archive whose directory is larger than
// the 64 KiB tail read first: one more request reads all of it.
func TestNPZLargeDirectory(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import sys, os
import numpy as np
np.savez(os.path.join(sys.argv[1], 'many.npz'), **{'member_with_a_long_name_%05d' % i: np.arange(i % 7) for i in range(1500)})
`, nil, dir)
	fs := serveDir(t, dir)
	obj := open(t, fs.url+"/many.npz")
	r0, _ := fs.counts()
	z, err := npybridge.OpenNPZ(obj, obj.Size())
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := fs.counts()
	if len(z.Names()) != 1500 || r1-r0 != 2 {
		t.Errorf("%d members in %d requests; want 1500 in 2", len(z.Names()), r1-r0)
	}
	a, err := z.Read("member_with_a_long_name_01000")
	if err != nil || fmt.Sprint(a.Shape) != "[6]" {
		t.Errorf("a member: %v, %v", a, err)
	}
}

// One member of an archive of 1,000 members costs three requests (the
// HEAD, the archive's last 64 KiB with the directory, and one stream of the
// member's local header and data) and its bytes + 64 KiB: no other
// member's header is read, whatever the member count.
func TestNPZOneMemberBudget(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import sys, os
import numpy as np
np.savez(os.path.join(sys.argv[1], 'run.npz'), **{'m%03d' % i: np.full(128 if i != 42 else 131072, i, dtype='<f8') for i in range(1000)})
np.savez_compressed(os.path.join(sys.argv[1], 'runz.npz'), **{'m%03d' % i: np.full(128 if i != 42 else 131072, i, dtype='<f8') for i in range(1000)})
`, nil, dir)
	fs := serveDir(t, dir)
	for _, name := range []string{"run.npz", "runz.npz"} {
		r0, b0 := fs.counts()
		obj := open(t, fs.url+"/"+name)
		z, err := npybridge.OpenNPZ(obj, obj.Size())
		if err != nil {
			t.Fatal(err)
		}
		a, err := z.Read("m042")
		if err != nil {
			t.Fatal(err)
		}
		if len(a.Data) != 1<<20 || a.Data[len(a.Data)-2] != 0x45 {
			t.Fatalf("%s: m042 is %d bytes ending % x", name, len(a.Data), a.Data[len(a.Data)-8:])
		}
		// The member's bytes in the archive: from where the one before it
		// ends (np.savez writes them one after another) to its data's end.
		zr, err := zip.OpenReader(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		end := func(i int) int64 {
			off, _ := zr.File[i].DataOffset()
			return off + int64(zr.File[i].CompressedSize64)
		}
		member := end(42) - end(41)
		zr.Close()
		r1, b1 := fs.counts()
		if r1-r0 > 3 || b1-b0 > member+64<<10+22 {
			t.Errorf("%s: one member of %d bytes took %d requests, %d bytes; want at most 3 and %d", name, member, r1-r0, b1-b0, member+64<<10+22)
		}
		t.Logf("%s: %d requests, %d bytes for a member of %d", name, r1-r0, b1-b0, member)
	}
}
