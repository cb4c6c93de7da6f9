package kit

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// floodProtocol is a protocol of two messages that need no trait.
const floodProtocol = `{"protocol": "flood", "messages": {
	"image": {"request": [], "response": "bytes"},
	"ping": {"request": [], "response": "int"}}}`

// Run reads the connection limits from the daemon's config table, over what
// setup set, and refuses values that are not limits.
func TestRunConfigLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(table string) string {
		path := filepath.Join(dir, fmt.Sprintf("c%d.toml", time.Now().UnixNano()))
		require.NoError(t, os.WriteFile(path, []byte("[flood]\nport = 0\nhost = \"127.0.0.1\"\n"+table), 0o644))
		return path
	}
	// A message of the protocol that nothing answers stops the program at
	// start, naming it, instead of failing a client's first call.
	_, _, err := configure(write(""), floodProtocol, nil)
	require.EqualError(t, err, "flood: the protocol flood declares image, ping, which no trait answers and Program.New registers no handler for")
	setup := func(d *Daemon) error {
		d.WriteTimeout = 7 * time.Second
		for _, m := range []string{"image", "ping"} {
			if err := d.Handle(m, func(context.Context, []any) (any, error) { return nil, nil }); err != nil {
				return err
			}
		}
		return nil
	}
	daemons, listeners, err := configure(write("max_connections = 10\nidle_timeout = 600\nread_timeout = 2.5\nwrite_timeout = -1\n"), floodProtocol, setup)
	require.NoError(t, err)
	for _, l := range listeners {
		l.Close()
	}
	d := daemons[0]
	assert.Equal(t, []any{10, 10 * time.Minute, 2500 * time.Millisecond, time.Duration(-1)}, []any{d.MaxConnections, d.IdleTimeout, d.ReadTimeout, d.WriteTimeout})

	daemons, listeners, err = configure(write(""), floodProtocol, setup)
	require.NoError(t, err)
	for _, l := range listeners {
		l.Close()
	}
	d = daemons[0]
	assert.Equal(t, []any{0, time.Duration(0), time.Duration(0), 7 * time.Second}, []any{d.MaxConnections, d.IdleTimeout, d.ReadTimeout, d.WriteTimeout}, "defaults, and what setup set")

	for table, msg := range map[string]string{
		"max_connections = 0\n":      "[flood] max_connections must be a positive integer, or -1 for no cap, not 0",
		"max_connections = 2.5\n":    "[flood] max_connections must be a positive integer, or -1 for no cap, not 2.5",
		"idle_timeout = \"1h\"\n":    "[flood] idle_timeout must be a positive number of seconds, or -1 for none, not \"1h\"",
		"read_timeout = 0\n":         "[flood] read_timeout must be a positive number of seconds, or -1 for none, not 0",
		"write_timeout = -2\n":       "[flood] write_timeout must be a positive number of seconds, or -1 for none, not -2",
		"write_timeout = 1e300\n":    "[flood] write_timeout must be a positive number of seconds, or -1 for none, not 1e+300",
		"max_connections = -1000\n":  "[flood] max_connections must be a positive integer, or -1 for no cap, not -1000",
		"idle_timeout = [1, 2, 3]\n": "[flood] idle_timeout must be a positive number of seconds, or -1 for none, not [1, 2, 3]",
	} {
		path := write(table)
		_, _, err := configure(path, floodProtocol, setup)
		require.Error(t, err, table)
		assert.Equal(t, "config "+path+": "+msg, err.Error())
	}
}

// configure makes the daemons of a config file as Program.Run does,
// listening but not serving.
func configure(path, protocol string, setup func(d *Daemon) error) ([]*Daemon, []net.Listener, error) {
	p := &Program{Protocol: protocol, New: setup, Stderr: io.Discard}
	tables, err := readConfig(path)
	if err != nil {
		return nil, nil, err
	}
	var daemons []*Daemon
	var listeners []net.Listener
	for _, name := range sortedKeys(tables) {
		d, l, err := p.makeDaemon(path, name, tables[name], "")
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return nil, nil, err
		}
		daemons, listeners = append(daemons, d), append(listeners, l)
	}
	return daemons, listeners, nil
}
