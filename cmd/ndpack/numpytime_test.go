package main

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
)

// datetimeString is np.datetime_as_string in the unit's base, as numpy's
// array printing calls it, and timedeltaString numpy's str of a
// timedelta64 scalar, for every unit and values from near the epoch to
// the ends of int64, where numpy's arithmetic wraps.
func TestTimeTextAsNumpy(t *testing.T) {
	out := pypeer.Run(t, `
import numpy as np, json
rng = np.random.default_rng(4)
units = ['Y', 'M', 'W', 'D', 'h', 'm', 's', 'ms', 'us', 'ns', 'ps', 'fs', 'as', '10s', '3M', '7D', '250ms', '2W']
edges = [0, 1, -1, 59, 60, -60, 1000, -1001, 2**31, -2**31, 2**62, -2**62, 2**63 - 1, -2**63 + 1]
res = []
for u in units:
    vals = edges + [int(v) for v in rng.integers(-10**6, 10**6, 60)] + [int(v) for v in rng.integers(-2**40, 2**40, 60)] + [int(v) for v in rng.integers(-2**63 + 1, 2**63 - 1, 60)]
    base = np.datetime_data(np.dtype('M8[%s]' % u))[0]
    for v in vals:
        try:
            s = str(np.datetime_as_string(np.array([v], dtype='M8[%s]' % u), unit=base)[0])
        except Exception:
            s = None
        res.append([u, str(v), s, str(np.array(v, dtype='m8[%s]' % u))])
res.append(['', '5', None, str(np.array(5, dtype='m8'))])
print(json.dumps(res))
`, nil)
	var cases [][4]*string
	require.NoError(t, json.Unmarshal(out, &cases))
	require.Greater(t, len(cases), 3000)
	dates, agreed := 0, 0
	for _, c := range cases {
		unit, text := *c[0], *c[1]
		v, err := strconv.ParseInt(text, 10, 64)
		require.NoError(t, err)
		if c[2] != nil {
			dates++
			got, ok := datetimeString(v, unit)
			if assert.True(t, ok, "%s %d", unit, v) && assert.Equal(t, *c[2], got, "datetime64 %d [%s]", v, unit) {
				agreed++
			}
		}
		assert.Equal(t, *c[3], timedeltaString(v, unit), "timedelta64 %d [%s]", v, unit)
	}
	t.Logf("%d of %d datetimes as numpy writes them", agreed, dates)
}
