package refs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// TestDaskAndXarray: numpy writes a stack of 64 .npy frames and a 256 MiB
// .npy; references make the frames one array (--stack) and cut the large
// file into 8 chunks of rows (--chunk-rows). dask.array.from_zarr over
// fsspec's reference file system gives numpy's sum and mean of each,
// computed on several chunks at once; xarray.open_dataset(...,
// engine="zarr") opens both as variables of one Dataset with the
// dimensions .zattrs names.
func TestDaskAndXarray(t *testing.T) {
	requirePeers(t)
	for module, pkg := range map[string]string{"dask.array": "python3-dask", "xarray": "python3-xarray"} {
		pypeer.RequireModule(t, module, pkg)
	}
	if testing.Short() {
		t.Skip("writes and reads 290 MiB")
	}
	dir := t.TempDir()
	pypeer.Run(t, `
import sys, os, numpy as np
d = sys.argv[1]
rng = np.random.default_rng(46)
for i in range(64):
    np.save(os.path.join(d, 'frame%02d.npy' % i), rng.integers(0, 4096, (128, 64)).astype('<u2'))
np.save(os.path.join(d, 'big.npy'), rng.standard_normal((8192, 8192), dtype='<f4'))
`, nil, dir)
	var frames []string
	for i := 0; i < 64; i++ {
		frames = append(frames, filepath.Join(dir, fmt.Sprintf("frame%02d.npy", i)))
	}
	b := Options{ChunkRows: 1024}.NewBuilder()
	if err := b.AddStackFiles(context.Background(), "frames", frames); err != nil {
		t.Fatal(err)
	}
	if err := b.AddFiles(context.Background(), []string{filepath.Join(dir, "big.npy")}); err != nil {
		t.Fatal(err)
	}
	if n := b.Set().Len(); n != 1+2+64+2+8 {
		t.Errorf("%d references, want the root's .zgroup, 64 frames and 8 chunks of rows with their metadata", n)
	}
	refs := filepath.Join(dir, "refs.json")
	f, err := os.Create(refs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Set().WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := pypeer.Run(t, `
import sys, os, threading, numpy as np, fsspec, zarr, dask, dask.array as da, xarray as xr
from dask.callbacks import Callback
d, refs = sys.argv[1], sys.argv[2]

class Overlap(Callback):
    def __init__(self):
        self.lock, self.running, self.most = threading.Lock(), 0, 0
    def _pretask(self, key, dsk, state):
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
    def _posttask(self, key, result, dsk, state, id):
        with self.lock:
            self.running -= 1

mapper = fsspec.get_mapper('reference://', fo=refs)
stack = np.stack([np.load(os.path.join(d, 'frame%02d.npy' % i)) for i in range(64)])
big = np.load(os.path.join(d, 'big.npy'))
for name, want in (('frames', stack), ('big', big)):
    a = da.from_zarr(mapper, component=name)
    with Overlap() as o:
        s, m = dask.compute(a.sum(dtype='f8'), a.mean(dtype='f8'), scheduler='threads', num_workers=4)
    print(name, a.numblocks, s == want.sum(dtype='f8'), m == want.mean(dtype='f8'), o.most >= 2)
ds = xr.open_dataset(mapper, engine='zarr', consolidated=False)
print('xarray', ds['frames'].dims, ds['big'].dims, ds['frames'].dtype, bool((ds['frames'][10].values == stack[10]).all()))
`, nil, dir, refs)
	want := "frames (64, 1, 1) True True True\nbig (8, 1) True True True\nxarray ('frames_dim_0', 'frames_dim_1', 'frames_dim_2') ('big_dim_0', 'big_dim_1') uint16 True\n"
	if string(out) != want {
		t.Errorf("dask and xarray said\n%s\nwant\n%s", out, want)
	}
}
