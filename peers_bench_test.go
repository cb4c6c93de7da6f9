package ndpack_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// BenchmarkPeers measures, in the same run as the Go rows, what numpy and
// msgpack_numpy take for the same work against the same kind of baseline,
// timed in turn in Python as benchbase.Versus times the Go rows (median
// of per-iteration ratios): the peers' column of the README's performance
// table. It needs the Python peers, and reports only x-baseline.
func BenchmarkPeers(b *testing.B) {
	pypeer.Require(b)
	dir := b.TempDir()
	v := make([]float64, 2<<20) // 16 MiB
	for i := range v {
		v[i] = float64(i)
	}
	a, _ := ndarray.FromSlice(v, 2048, 1024)
	le := filepath.Join(dir, "le.npy")
	if err := npybridge.WriteFile(le, a); err != nil {
		b.Fatal(err)
	}
	be, _ := a.ToOrder('>')
	if err := npybridge.WriteFile(filepath.Join(dir, "be.npy"), be); err != nil {
		b.Fatal(err)
	}
	col, _ := a.ColumnMajorData()
	text := "{'descr': '<f8', 'fortran_order': True, 'shape': (2048, 1024), }"
	for (10+len(text)+1)%64 != 0 {
		text += " "
	}
	fortran := append(append([]byte(npybridge.Magic), 1, 0, byte(len(text)+1), 0), text+"\n"...)
	if err := os.WriteFile(filepath.Join(dir, "f.npy"), append(fortran, col...), 0o644); err != nil {
		b.Fatal(err)
	}
	rows := map[string]string{
		"numpy/read":           "lambda: np.load(le)",
		"numpy/big-endian":     "lambda: np.load(be).byteswap(inplace=True)",
		"numpy/fortran":        "lambda: np.ascontiguousarray(np.load(fo))",
		"numpy/write":          "lambda: np.save(out, arr)",
		"msgpack_numpy/encode": "lambda: msgpack.packb({'result': small}, default=m.encode)",
		"msgpack_numpy/decode": "lambda: np.asarray(msgpack.unpackb(msg, object_hook=m.decode)['result'])",
	}
	for name, subject := range rows {
		b.Run(name, func(b *testing.B) {
			script := `
import os, statistics, time
import numpy as np, msgpack, msgpack_numpy as m
d = sys.argv[1]
le, be, fo, out = (os.path.join(d, n) for n in ("le.npy", "be.npy", "f.npy", "out.npy"))
arr = np.load(le)
small = arr.ravel()[: 1 << 20].copy()  # 8 MiB
msg = msgpack.packb({'result': small}, default=m.encode)
raw = open(le, 'rb').read()
def read_file():
    with open(le, 'rb') as f:
        return f.read()
def write_file():
    with open(out + '.raw', 'wb') as f:
        f.write(raw)
base = {'read': read_file, 'big-endian': read_file, 'fortran': read_file, 'write': write_file,
        'encode': lambda: bytes(small.data), 'decode': lambda: bytes(small.data)}[sys.argv[2]]
subject = ` + subject + `
subject(); base()
ratios = []
for _ in range(int(sys.argv[3])):
    t0 = time.perf_counter(); base(); t1 = time.perf_counter(); subject(); t2 = time.perf_counter()
    ratios.append((t2 - t1) / (t1 - t0))
print(statistics.median(ratios))
`
			kind := name[strings.IndexByte(name, '/')+1:]
			out := pypeer.Run(b, script, nil, dir, kind, strconv.Itoa(max(b.N, 5)))
			ratio, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				b.Fatalf("%s: %q", name, out)
			}
			for b.Loop() {
			}
			b.ReportMetric(ratio, "x-baseline")
		})
	}
}
