package kit

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/yaq"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// serveStage serves a has-position daemon named d through Program.Serve,
// with New setting the state fields in set, and returns it, its address
// and its log.
func serveStage(t *testing.T, set map[string]any) (*Daemon, string, *hostile.Log) {
	t.Helper()
	logs := &hostile.Log{}
	p := &Program{Kind: "stage", Traits: []string{"has-position"}, Stderr: logs, New: func(d *Daemon) error {
		for k, v := range set {
			d.Set(k, v)
		}
		return nil
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	d, err := p.Serve(l, "d", map[string]any{})
	require.NoError(t, err)
	return d, l.Addr().String(), logs
}

// closeWithin closes d, failing the test if that takes longer than limit
// (the last save of the state happens in Close).
func closeWithin(t *testing.T, d *Daemon, limit time.Duration) {
	t.Helper()
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(limit):
		t.Fatalf("Close took over %s", limit)
	}
}

// What the state holds, the state file holds and gives back equal the next
// time: a string with a bell or an escape sequence in it, an empty key,
// tables in tables, a table in a list. (strconv.Quote wrote "\a", which is
// not TOML: the file was set aside at the next start.)
func TestStateFileRoundTrips(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	values := map[string]any{
		"bell":   "ring\a",
		"osc":    "\x1b]52;c;aGk=\x07",
		"":       int64(1),
		"nested": map[string]any{"a": map[string]any{"b": 1.5, "": "empty key"}},
		"list":   []any{int64(1), "two", map[string]any{"x": true}},
	}
	d, _, logs := serveStage(t, values)
	closeWithin(t, d, 5*time.Second)
	text, err := os.ReadFile(StateFile("stage", "d"))
	require.NoError(t, err)
	assert.Contains(t, string(text), "bell = \"ring\\u0007\"\n")
	assert.NotContains(t, string(text), "\x1b")

	again, _, logs2 := serveStage(t, nil)
	defer closeWithin(t, again, 5*time.Second)
	for k, v := range values {
		assert.Equal(t, v, again.Get(k), "%q", k)
	}
	assert.NotContains(t, logs.String()+logs2.String(), "state file", "nothing set aside")
}

// A state TOML cannot hold (a string that is not UTF-8) is not written
// changed: get_state answers an error naming the field, the file keeps the
// last state written, and the log says why once.
func TestStateTOMLCannotHold(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	d, _, _ := serveStage(t, map[string]any{"position": 2.0})
	closeWithin(t, d, 5*time.Second)
	saved, err := os.ReadFile(StateFile("stage", "d"))
	require.NoError(t, err)
	require.Contains(t, string(saved), "position = 2.0\n")

	d, addr, logs := serveStage(t, map[string]any{"bad": "a\xffb"})
	ctx := context.Background()
	c, err := yaq.Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	var text string
	err = c.Call(ctx, "get_state", nil, &text)
	var re *yaq.RemoteError
	require.ErrorAs(t, err, &re, "answered %q", text)
	assert.Contains(t, re.Message, `bad: the string "a\xffb" is not UTF-8, which TOML cannot hold`)
	time.Sleep(1500 * time.Millisecond) // a save or two fail meanwhile
	closeWithin(t, d, 5*time.Second)
	now, err := os.ReadFile(StateFile("stage", "d"))
	require.NoError(t, err)
	assert.Equal(t, string(saved), string(now), "the file keeps the last state written")
	assert.Equal(t, 2, strings.Count(logs.String(), `saving the state to `), "once as it comes, once at the end: %s", logs.String())
	assert.Contains(t, logs.String(), `the state cannot be written as TOML: bad: the string "a\xffb" is not UTF-8`)
}

// A state nested 300,000 deep is refused at once, by get_state and by the
// save (the writer before took time quadratic in the depth: 203 s at
// 499,000 levels, a daemon burning its CPU all the while).
func TestDeepStateIsRefusedAtOnce(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	deep := any(1.0)
	for range 300_000 {
		deep = []any{deep}
	}
	d, addr, logs := serveStage(t, map[string]any{"deep": deep})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := yaq.Dial(ctx, addr, nil)
	require.NoError(t, err)
	defer c.Close()
	start := time.Now()
	var text string
	err = c.Call(ctx, "get_state", nil, &text)
	assert.Less(t, time.Since(start), 2*time.Second)
	var re *yaq.RemoteError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, re.Message, "deep[0][0]")
	assert.Contains(t, re.Message, "nests deeper than 64 levels")
	closeWithin(t, d, 5*time.Second)
	assert.Contains(t, logs.String(), "saving the state to ")
}
