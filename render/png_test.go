package render_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/render"
)

// pngCase is an array numpy makes (Python code leaving it in a) and the
// options it is drawn with.
type pngCase struct {
	name, expr string
	o          render.Options
}

var pngCases = []pngCase{
	{"f4", "a = rng.standard_normal((37, 53)).astype('<f4')", render.Options{}},
	{"f8_big_endian", "a = rng.standard_normal((20, 31)).astype('>f8')", render.Options{}},
	{"f8_nonfinite", "a = rng.standard_normal((20, 31)); a[3, 4] = np.nan; a[5, 6] = np.inf; a[0, 0] = -np.inf; a[19, 30] = np.nan", render.Options{}},
	{"f2", "a = (rng.standard_normal((16, 24)) * 100).astype('<f2')", render.Options{}},
	{"f2_big_endian_nan", "a = rng.standard_normal((9, 7)).astype('>f2'); a[1, 1] = np.nan", render.Options{}},
	{"b1", "a = rng.integers(0, 2, (11, 13)).astype('?')", render.Options{}},
	{"i1", "a = rng.integers(-128, 128, (8, 40)).astype('i1')", render.Options{}},
	{"u1", "a = rng.integers(0, 256, (40, 8)).astype('u1')", render.Options{}},
	{"i2", "a = rng.integers(-30000, 30000, (64, 64)).astype('<i2')", render.Options{}},
	{"i4_big_endian", "a = rng.integers(-2**31, 2**31, (17, 19)).astype('>i4')", render.Options{}},
	{"u2", "a = rng.integers(0, 4096, (48, 64)).astype('<u2')", render.Options{}},
	{"u8", "a = rng.integers(0, 2**63, (5, 6), dtype=np.uint64) * 2", render.Options{}},
	{"i8_big_endian", "a = rng.integers(-2**62, 2**62, (6, 5)).astype('>i8')", render.Options{}},
	{"c8", "a = (rng.standard_normal((12, 10)) + 1j * rng.standard_normal((12, 10))).astype('<c8')", render.Options{}},
	{"c16_big_endian", "a = (rng.standard_normal((10, 12)) + 1j * rng.standard_normal((10, 12))).astype('>c16')", render.Options{}},
	{"constant", "a = np.full((7, 9), 3.5, '<f8')", render.Options{}},
	{"all_nan", "a = np.full((4, 5), np.nan, '<f4')", render.Options{}},
	{"one_pixel", "a = np.array([[42]], '<u2')", render.Options{}},
	{"wide", "a = np.arange(3000, dtype='<f4').reshape(1, 3000)", render.Options{}},
	{"tall", "a = np.arange(3000, dtype='<i4').reshape(3000, 1)", render.Options{}},
	{"range_clip", "a = rng.standard_normal((30, 30)) * 3", render.Options{Range: [2]float64{-1, 2}}},
	{"range_ints", "a = rng.integers(0, 1000, (30, 30)).astype('<u2')", render.Options{Range: [2]float64{100, 900}}},
	{"log", "a = 10 ** rng.uniform(-3, 5, (25, 35)); a[0, :5] = [0, -1, np.nan, np.inf, 1e-300]", render.Options{Log: true}},
	{"log_range", "a = 10 ** rng.uniform(-3, 5, (25, 35))", render.Options{Log: true, Range: [2]float64{0.01, 1000}}},
	{"log_ints", "a = rng.integers(0, 5000, (20, 20)).astype('<u2')", render.Options{Log: true}},
	{"viridis", "a = rng.standard_normal((40, 50))", render.Options{Colormap: "viridis"}},
	{"magma_nan", "a = rng.standard_normal((40, 50)).astype('<f4'); a[::7, ::5] = np.nan", render.Options{Colormap: "magma"}},
	{"inferno_ramp", "a = np.linspace(0, 1, 1024).reshape(4, 256)", render.Options{Colormap: "inferno"}},
	{"viridis_ramp_u1", "a = np.arange(256, dtype='u1').reshape(16, 16)", render.Options{Colormap: "viridis"}},
	{"gray_compress_best", "a = rng.standard_normal((30, 40))", render.Options{Compression: "best"}},
	{"gray_no_compress", "a = rng.standard_normal((30, 40))", render.Options{Compression: "none"}},
	{"rgb", "a = rng.integers(0, 256, (21, 34, 3)).astype('u1')", render.Options{}},
	{"rgba", "a = rng.integers(0, 256, (34, 21, 4)).astype('u1')", render.Options{}},
}

// makeArrays has numpy write each case's array as DIR/NAME.npy.
func makeArrays(t *testing.T, dir string, cases []pngCase) {
	t.Helper()
	var script strings.Builder
	script.WriteString("import sys, numpy as np\nrng = np.random.default_rng(27)\n")
	for _, c := range cases {
		fmt.Fprintf(&script, "%s\nnp.save(sys.argv[1] + '/%s.npy', a)\n", c.expr, c.name)
	}
	pypeer.Run(t, script.String(), nil, dir)
}

// checkScript checks each PNG against the documented mapping computed by
// numpy, read back by Pillow: sizes and orientation, mode, every pixel
// within one level, alpha 0 exactly where a value has no level, RGB input
// passed through exactly. Colormapped pixels are checked against
// matplotlib's tables when matplotlib is installed, else against the
// endpoints the issue names.
const checkScript = `
import sys, json, numpy as np
from PIL import Image
try:
    import matplotlib
    luts = {n: np.floor(matplotlib.colormaps[n](np.arange(256))[:, :3] * 255 + 0.5).astype(int) for n in ('viridis', 'magma', 'inferno')}
except ImportError:
    luts = None
d = sys.argv[1]
cases = json.loads(open(d + '/cases.json').read())
bad = []
def fail(name, msg):
    bad.append('%s: %s' % (name, msg))
for name, o in cases.items():
    a = np.load('%s/%s.npy' % (d, name))
    im = Image.open('%s/%s.png' % (d, name))
    im.load()
    px = np.asarray(im)
    if im.size != (a.shape[1], a.shape[0]):
        fail(name, 'size %s for shape %s' % (im.size, a.shape)); continue
    if a.ndim == 3:
        want = 'RGB' if a.shape[2] == 3 else 'RGBA'
        if im.mode != want or not np.array_equal(px, a):
            fail(name, 'mode %s, pixels differ from the array' % im.mode)
        continue
    v = np.abs(a).astype(np.float64) if a.dtype.kind == 'c' else a.astype(np.float64)
    ok = np.isfinite(v)
    if o['log']:
        ok &= v > 0
        v = np.log10(np.where(ok, v, 1))
    if o['range']:
        lo, hi = o['range']
        if o['log']:
            lo, hi = np.log10(lo), np.log10(hi)
    elif ok.any():
        lo, hi = v[ok].min(), v[ok].max()
    else:
        lo = hi = 0
    t = np.zeros_like(v) if hi <= lo else np.clip((np.where(ok, v, lo) - lo) / (hi - lo), 0, 1)
    cmap = o['cmap']
    if cmap == 'gray':
        want = 'L' if ok.all() else 'LA'
        if im.mode != want:
            fail(name, 'mode %s, want %s' % (im.mode, want)); continue
        level = px if want == 'L' else px[..., 0]
        exp = np.round(t * 255)
        diff = np.abs(level.astype(int) - exp)[ok]
        if diff.size and diff.max() > 1:
            i = np.argwhere(ok & (np.abs(level.astype(int) - exp) > 1))[0]
            fail(name, 'pixel %s is %d, numpy says %d (value %r)' % (tuple(i), level[tuple(i)], exp[tuple(i)], a[tuple(i)]))
        if want == 'LA' and not np.array_equal(px[..., 1], np.where(ok, 255, 0)):
            fail(name, 'alpha is not 0 exactly where values are not finite')
        if hi > lo and ok.any():
            if level[ok & (v == v[ok].min())].min() != 0 and not o['range']:
                fail(name, 'the minimum is not black')
            if level[ok & (v == v[ok].max())].max() != 255 and not o['range']:
                fail(name, 'the maximum is not white')
        if hi <= lo and ok.any() and len(set(level[ok].ravel())) != 1:
            fail(name, 'a constant array has pixels of %d levels' % len(set(level[ok].ravel())))
        continue
    want = 'RGB' if ok.all() else 'RGBA'
    if im.mode != want:
        fail(name, 'mode %s, want %s' % (im.mode, want)); continue
    rgb = px[..., :3].astype(int)
    if want == 'RGBA' and not np.array_equal(px[..., 3], np.where(ok, 255, 0)):
        fail(name, 'alpha is not 0 exactly where values are not finite')
    ends = {'viridis': ((68, 1, 84), (253, 231, 37)), 'magma': ((0, 0, 4), (252, 253, 191)), 'inferno': ((0, 0, 4), (252, 255, 164))}[cmap]
    if ok.any() and hi > lo:
        if tuple(rgb[ok & (t == 0)][0]) != ends[0] or tuple(rgb[ok & (t == 1)][0]) != ends[1]:
            fail(name, 'the end points are %s and %s, want %s' % (rgb[ok & (t == 0)][0], rgb[ok & (t == 1)][0], ends))
    if luts is not None:
        lut = luts[cmap]
        idx = np.minimum((t * 256).astype(int), 255)
        near = np.zeros(t.shape, bool)
        for k in (-1, 0, 1):
            near |= (np.abs(rgb - lut[np.clip(idx + k, 0, 255)]) <= 1).all(axis=-1)
        if not near[ok].all():
            i = tuple(np.argwhere(ok & ~near)[0])
            fail(name, 'pixel %s is %s, matplotlib says %s' % (i, rgb[i], lut[idx[i]]))
print('\n'.join(bad) if bad else 'ok')
`

func TestPNGMatchesNumpyAndPillow(t *testing.T) {
	pypeer.RequireModule(t, "PIL", "python3-pil")
	dir := t.TempDir()
	makeArrays(t, dir, pngCases)
	opts := map[string]map[string]any{}
	for _, c := range pngCases {
		a, err := npybridge.ReadFile(filepath.Join(dir, c.name+".npy"))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := render.EncodePNG(&b, a, c.o); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, c.name+".png"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		// Go's own decoder reads it too, as Image draws it.
		dec, err := png.Decode(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%s: image/png: %v", c.name, err)
		}
		img, err := render.Image(a, c.o)
		if err != nil {
			t.Fatal(err)
		}
		if !sameImage(dec, img) {
			t.Errorf("%s: Image draws other pixels than EncodePNG", c.name)
		}
		var rng any
		if c.o.Range != [2]float64{} {
			rng = c.o.Range
		}
		cmap := c.o.Colormap
		if cmap == "" {
			cmap = "gray"
		}
		opts[c.name] = map[string]any{"log": c.o.Log, "range": rng, "cmap": cmap}
	}
	js, _ := json.Marshal(opts)
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), js, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := strings.TrimSpace(string(pypeer.Run(t, checkScript, nil, dir))); out != "ok" {
		t.Errorf("Pillow and numpy disagree:\n%s", out)
	}
}

func sameImage(a, b image.Image) bool {
	if a.Bounds() != b.Bounds() {
		return false
	}
	for y := a.Bounds().Min.Y; y < a.Bounds().Max.Y; y++ {
		for x := a.Bounds().Min.X; x < a.Bounds().Max.X; x++ {
			if color.NRGBAModel.Convert(a.At(x, y)) != color.NRGBAModel.Convert(b.At(x, y)) {
				return false
			}
		}
	}
	return true
}

// A Fortran-order file (as numpy saves np.asfortranarray) is read into C
// order by npybridge; the picture is the C-order twin's, byte for byte.
func TestFortranAndBigEndianTwinsDrawAlike(t *testing.T) {
	pypeer.Require(t)
	dir := t.TempDir()
	pypeer.Run(t, `
import sys, numpy as np
a = np.random.default_rng(1).standard_normal((13, 17)).astype('<f4')
np.save(sys.argv[1] + '/c.npy', a)
np.save(sys.argv[1] + '/f.npy', np.asfortranarray(a.astype('>f4')))
`, nil, dir)
	var pngs [2][]byte
	for i, name := range []string{"c.npy", "f.npy"} {
		a, err := npybridge.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := render.EncodePNG(&b, a, render.Options{Colormap: "viridis"}); err != nil {
			t.Fatal(err)
		}
		pngs[i] = b.Bytes()
	}
	if !bytes.Equal(pngs[0], pngs[1]) {
		t.Error("the Fortran-order big-endian twin draws another PNG")
	}
}

func TestColormapEndPoints(t *testing.T) {
	for _, c := range []struct {
		cmap   string
		lo, hi [3]uint8
	}{
		{"gray", [3]uint8{0, 0, 0}, [3]uint8{255, 255, 255}},
		{"viridis", [3]uint8{68, 1, 84}, [3]uint8{253, 231, 37}},
		{"Magma", [3]uint8{0, 0, 4}, [3]uint8{252, 253, 191}},
		{"inferno", [3]uint8{0, 0, 4}, [3]uint8{252, 255, 164}},
	} {
		// The ends of an array are drawn with the ends of the map.
		a, _ := ndarray.FromSlice([]float64{-5, 10}, 1, 2)
		img, err := render.Image(a, render.Options{Colormap: c.cmap})
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := color.NRGBAModel.Convert(img.At(0, 0)).(color.NRGBA), color.NRGBAModel.Convert(img.At(1, 0)).(color.NRGBA)
		if [3]uint8{lo.R, lo.G, lo.B} != c.lo || [3]uint8{hi.R, hi.G, hi.B} != c.hi || lo.A != 255 || hi.A != 255 {
			t.Errorf("%s: the array's ends are %v and %v", c.cmap, lo, hi)
		}
	}
}

func TestRefusals(t *testing.T) {
	f8 := func(shape ...int) *ndarray.Array {
		a, _ := ndarray.Zeros(ndarray.DTypeOf[float64](), shape...)
		return a
	}
	rec, err := ndarray.NewRecord([]ndarray.Field{{Name: "x", DType: ndarray.DTypeOf[float64]()}}, 8)
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := ndarray.Zeros(rec, 2, 2)
	strs, _ := ndarray.Zeros(ndarray.MustParseDType("|S4"), 2, 2)
	ld, _ := ndarray.Zeros(ndarray.MustParseDType("<f16"), 2, 2)
	dates, _ := ndarray.Zeros(ndarray.MustParseDType("<M8[s]"), 2, 2)
	rgbF, _ := ndarray.Zeros(ndarray.DTypeOf[float32](), 2, 2, 3)
	rgb, _ := ndarray.Zeros(ndarray.DTypeOf[uint8](), 2, 2, 3)
	for _, c := range []struct {
		name string
		a    *ndarray.Array
		o    render.Options
		want error
	}{
		{"0-d", f8(), render.Options{}, render.ErrUnsupported},
		{"1-d", f8(5), render.Options{}, render.ErrUnsupported},
		{"4-d", f8(2, 2, 2, 2), render.Options{}, render.ErrUnsupported},
		{"3-d floats", rgbF, render.Options{}, render.ErrUnsupported},
		{"empty", f8(0, 5), render.Options{}, render.ErrUnsupported},
		{"record", recs, render.Options{}, render.ErrUnsupported},
		{"strings", strs, render.Options{}, render.ErrUnsupported},
		{"float128", ld, render.Options{}, render.ErrUnsupported},
		{"datetime", dates, render.Options{}, render.ErrUnsupported},
		{"range reversed", f8(2, 2), render.Options{Range: [2]float64{2, 1}}, render.ErrOptions},
		{"range empty", f8(2, 2), render.Options{Range: [2]float64{1, 1}}, render.ErrOptions},
		{"range NaN", f8(2, 2), render.Options{Range: [2]float64{math.NaN(), 1}}, render.ErrOptions},
		{"log range at 0", f8(2, 2), render.Options{Range: [2]float64{0, 1}, Log: true}, render.ErrOptions},
		{"colormap", f8(2, 2), render.Options{Colormap: "jet"}, render.ErrOptions},
		{"rgb with colormap", rgb, render.Options{Colormap: "viridis"}, render.ErrOptions},
	} {
		err := render.EncodePNG(&bytes.Buffer{}, c.a, c.o)
		if !errors.Is(err, c.want) || !strings.HasPrefix(fmt.Sprint(err), "render: ") {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if err := render.CheckImage(c.a.DType, c.a.Shape, c.o); !errors.Is(err, c.want) {
			t.Errorf("%s: CheckImage: %v, want %v", c.name, err, c.want)
		}
	}
	for _, o := range []render.Options{{Colormap: "jet"}, {Compression: "bogus"}} {
		if err := o.Validate(); !errors.Is(err, render.ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}
