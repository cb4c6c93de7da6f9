package yaq

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Handlers read their parameters typed, with the answers' conversions, and
// a parameter that is missing or does not fit is ErrParams.
func TestParamAs(t *testing.T) {
	params := []any{int32(7), 2.5, map[string]any{"name": "x", "speed": int64(3)}, []any{int64(1), int64(2)}, nil}
	n, err := ParamAs[int8](params, 0)
	require.NoError(t, err)
	assert.Equal(t, int8(7), n)
	f, err := ParamAs[float64](params, 0)
	require.NoError(t, err)
	assert.Equal(t, 7.0, f)
	type axis struct {
		Name  string
		Speed float32
	}
	a, err := ParamAs[axis](params, 2)
	require.NoError(t, err)
	assert.Equal(t, axis{"x", 3}, a)
	s, err := ParamAs[[]int](params, 3)
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, s)
	p, err := ParamAs[*string](params, 4)
	require.NoError(t, err)
	assert.Nil(t, p)

	for _, err := range []error{
		func() error { _, err := ParamAs[uint8](params, 1); return err }(),
		func() error { _, err := ParamAs[string](params, 0); return err }(),
		func() error { _, err := ParamAs[float64](params, 5); return err }(),
		func() error { _, err := ParamAs[float64](params, -1); return err }(),
	} {
		require.Error(t, err)
		assert.True(t, errors.Is(err, ErrParams), "%v", err)
	}
	_, err = ParamAs[uint8](params, 1)
	assert.Regexp(t, `^yaq: parameter 1 does not fit a uint8: .+`, err.Error())
}
