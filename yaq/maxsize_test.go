package yaq

import (
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// MaxSize is the limit's one name; the name it first had still works when
// MaxSize is unset.
func TestDaemonMaxSizeNames(t *testing.T) {
	for _, c := range []struct {
		d    Daemon
		want int
	}{
		{Daemon{}, ndarray.DefaultMaxSize},
		{Daemon{MaxSize: 100}, 100},
		{Daemon{MaxFrameSize: 200}, 200},
		{Daemon{MaxSize: 100, MaxFrameSize: 200}, 100},
	} {
		if got := c.d.maxFrame(); got != c.want {
			t.Errorf("MaxSize %d, MaxFrameSize %d: limit %d, want %d", c.d.MaxSize, c.d.MaxFrameSize, got, c.want)
		}
	}
}
