package render

import (
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

func TestColormapRGB(t *testing.T) {
	for _, c := range []struct {
		cmap     colormap
		lo, hi   [3]uint8
		mid      float64
		midColor [3]uint8
	}{
		{gray, [3]uint8{0, 0, 0}, [3]uint8{255, 255, 255}, 0.5, [3]uint8{128, 128, 128}},
		{viridis, [3]uint8{68, 1, 84}, [3]uint8{253, 231, 37}, 0.5, [3]uint8{33, 145, 140}},
		{magma, [3]uint8{0, 0, 4}, [3]uint8{252, 253, 191}, -1, [3]uint8{}},
		{inferno, [3]uint8{0, 0, 4}, [3]uint8{252, 255, 164}, -1, [3]uint8{}},
	} {
		for x, want := range map[float64][3]uint8{0: c.lo, -3: c.lo, 1: c.hi, 7: c.hi, math.NaN(): c.lo, c.mid: c.midColor} {
			if x == -1 {
				continue
			}
			r, g, b := c.cmap.rgb(x)
			if [3]uint8{r, g, b} != want {
				t.Errorf("%s.rgb(%g) = %v, want %v", c.cmap, x, [3]uint8{r, g, b}, want)
			}
		}
	}
}

// The tables are matplotlib's, rounded: checked entry by entry when
// matplotlib is installed (it is not in CI: 59 Debian packages for a
// check of constants, which gencolormaps.go wrote from it).
func TestColormapTablesAreMatplotlibs(t *testing.T) {
	pypeer.Require(t)
	if err := exec.Command(pypeer.Python, "-c", "import matplotlib").Run(); err != nil {
		t.Skip("matplotlib is not installed (apt-get install python3-matplotlib)")
	}
	out := pypeer.Run(t, `
import matplotlib, numpy as np
for n in ('viridis', 'magma', 'inferno'):
    print(n, ' '.join(str(int(v)) for v in np.floor(matplotlib.colormaps[n](np.arange(256))[:, :3] * 255 + 0.5).ravel()))
`, nil)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, values, _ := strings.Cut(line, " ")
		i, ok := lookup(colormapNames[:], name)
		if !ok {
			t.Fatal(name)
		}
		cmap := colormap(i)
		var got []string
		for i := range 256 {
			r, g, b := cmap.rgb((float64(i) + 0.5) / 256)
			got = append(got, fmt.Sprint(r, g, b))
		}
		if strings.Join(got, " ") != values {
			t.Errorf("%s differs from matplotlib's table", name)
		}
	}
}
