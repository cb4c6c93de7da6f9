package kit

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ndpack/ndpack/yaq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Call stores answers in structs (by tag or by name), pointers (nil for
// null) and typed slices and maps; a daemon's error answer matches
// ErrRemote, a broken connection does not; a call the protocol cannot take
// fails before anything is sent.
func TestClientDecodesAndClassifies(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	p := &Program{Kind: "stage", Traits: []string{"has-limits", "is-discrete"}}
	addr, _, _, done := runProgram(t, p, "limits = [0, 10]\nout_of_limits = \"error\"\nserial = \"SN-1\"\nidentifiers = {home = 1.5}\n")
	ctx := context.Background()
	c, err := yaq.Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()

	var id struct {
		Name   string
		Kind   string `yaq:"kind"`
		Make   *string
		Serial *string `json:"serial"`
		Other  int
	}
	require.NoError(t, c.Call(ctx, "id", nil, &id))
	assert.Equal(t, "d", id.Name)
	assert.Equal(t, "stage", id.Kind)
	assert.Nil(t, id.Make)
	require.NotNil(t, id.Serial)
	assert.Equal(t, "SN-1", *id.Serial)

	var units *string
	require.NoError(t, c.Call(ctx, "get_units", nil, &units))
	assert.Nil(t, units)
	var ids map[string]float64
	require.NoError(t, c.Call(ctx, "get_position_identifiers", nil, &ids))
	assert.Equal(t, map[string]float64{"home": 1.5}, ids)
	var lim [2]float64
	assert.ErrorIs(t, c.Call(ctx, "get_limits", nil, &lim), yaq.ErrResult, "an array is not a slice")
	var limits []float32
	require.NoError(t, c.Call(ctx, "get_limits", nil, &limits))
	assert.Equal(t, []float32{0, 10}, limits)

	err = c.Call(ctx, "set_position", []any{11.0}, nil)
	assert.ErrorIs(t, err, yaq.ErrRemote)
	var re *yaq.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, "set_position", re.Method)

	for _, bad := range []struct {
		method string
		params []any
		is     error
		text   string
	}{
		{"set_positon", []any{1.0}, yaq.ErrNoMethod, `"set_positon"`},
		{"set_position", []any{1.0, 2.0}, yaq.ErrParams, "set_position"},
		{"set_position", []any{"x"}, nil, `parameter "position"`},
	} {
		err := c.Call(ctx, bad.method, bad.params, nil)
		require.Error(t, err)
		assert.NotErrorIs(t, err, yaq.ErrRemote, "refused before sending")
		if bad.is != nil {
			assert.ErrorIs(t, err, bad.is)
		}
		assert.Contains(t, err.Error(), bad.text)
	}
	var busy bool
	require.NoError(t, c.Call(ctx, "busy", nil, &busy), "the client is still usable")

	require.NoError(t, c.Call(ctx, "shutdown", nil, nil))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("not shut down")
	}
	err = c.Call(ctx, "busy", nil, &busy)
	require.Error(t, err)
	assert.False(t, errors.Is(err, yaq.ErrRemote), "a connection that broke is not an answer: %v", err)
}
