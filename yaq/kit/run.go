package kit

import (
	"fmt"
	"io"
	"log"
	"math"
	"time"

	"github.com/ndpack/ndpack/internal/yaqtoml"
)

// configureLimits sets d's connection limits from the config keys Run
// documents.
func configureLimits(d *Daemon, cfg map[string]any) error {
	if v, ok := cfg["max_connections"]; ok {
		n, isInt := v.(int64)
		if !isInt || n == 0 || n < -1 {
			return fmt.Errorf("max_connections must be a positive integer, or -1 for no cap, not %v", yaqtoml.Value(v))
		}
		d.MaxConnections = int(min(n, math.MaxInt32))
	}
	for _, key := range []struct {
		name string
		dst  *time.Duration
	}{{"idle_timeout", &d.IdleTimeout}, {"read_timeout", &d.ReadTimeout}, {"write_timeout", &d.WriteTimeout}} {
		v, ok := cfg[key.name]
		if !ok {
			continue
		}
		var s float64
		switch x := v.(type) {
		case int64:
			s = float64(x)
		case float64:
			s = x
		default:
			s = math.NaN()
		}
		switch {
		case s == -1:
			*key.dst = -1
		case s > 0 && s <= math.MaxInt64/float64(time.Second):
			*key.dst = max(time.Duration(s*float64(time.Second)), 1)
		default:
			return fmt.Errorf("%s must be a positive number of seconds, or -1 for none, not %v", key.name, yaqtoml.Value(v))
		}
	}
	return nil
}

// newStderrLogger logs to w with the time, as the log package's standard
// logger does to os.Stderr.
func newStderrLogger(w io.Writer) *log.Logger { return log.New(w, "", log.LstdFlags) }
