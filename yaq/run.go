package yaq

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
)

// Run is the main of a daemon program, as yaqd-core's daemons behave:
//
//	PROGRAM --config FILE   serve one daemon per table of the TOML file
//	PROGRAM --protocol      print the protocol's JSON
//	PROGRAM --version       print the program's name and version
//
// Each table of the config file is a daemon named after it: its port
// (required) and host (default: every interface) say where it listens, and
// its other keys, over the protocol's config defaults, are its config
// (get_config answers them). setup registers the daemon's handlers and
// fields. Four optional keys then set the daemon's connection limits, over
// what setup set (see Daemon's fields of the same meaning for the
// defaults):
//
//	max_connections = 1024   # MaxConnections: connections served at once
//	idle_timeout = 3600      # IdleTimeout, in seconds: between requests
//	read_timeout = 60        # ReadTimeout, in seconds: one request's arrival
//	write_timeout = 20       # WriteTimeout, in seconds: a peer not reading
//
// Each is a positive number, or -1 for no limit. Run returns when every
// daemon has shut down, or on SIGINT or SIGTERM, with the exit status: 0, 1
// on an error, 2 on a usage error.
func Run(program, version, protocol string, args []string, stdout, stderr io.Writer, setup func(d *Daemon) error) int {
	fs := flag.NewFlagSet(program, flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "", "the TOML config file: one table per daemon")
	showProtocol := fs.Bool("protocol", false, "print the protocol and exit")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case *showProtocol:
		fmt.Fprintln(stdout, protocol)
		return 0
	case *showVersion:
		fmt.Fprintf(stdout, "%s %s\n", program, version)
		return 0
	case *config == "":
		fmt.Fprintf(stderr, "%s: --config FILE is required\n", program)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\n", program, err)
		return 1
	}
	daemons, listeners, err := configure(*config, protocol, setup)
	if err != nil {
		return fail(err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		<-sigs
		for _, d := range daemons {
			d.Close()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, len(daemons))
	for i, d := range daemons {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.Serve(listeners[i]); err != nil && !errors.Is(err, ErrDaemonClosed) {
				errs <- fmt.Errorf("%s: %w", d.Name, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return fail(err)
	}
	return 0
}

// configure reads the config file and makes a listening daemon per table.
func configure(path, protocol string, setup func(d *Daemon) error) ([]*Daemon, []net.Listener, error) {
	var file map[string]any
	if _, err := toml.DecodeFile(path, &file); err != nil {
		return nil, nil, fmt.Errorf("config %s: %w", path, err)
	}
	names := make([]string, 0, len(file))
	for name, v := range file {
		if _, ok := v.(map[string]any); ok {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("config %s has no [daemon] table", path)
	}
	sort.Strings(names)
	abs, _ := filepath.Abs(path)
	var daemons []*Daemon
	var listeners []net.Listener
	closeAll := func() {
		for _, l := range listeners {
			l.Close()
		}
	}
	for _, name := range names {
		d, err := NewDaemon(name, protocol)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		cfg := map[string]any{}
		for k, v := range d.Protocol().ConfigDefaults {
			cfg[k] = jsonValue(v)
		}
		for k, v := range file[name].(map[string]any) {
			cfg[k] = v
		}
		d.Config, d.ConfigFile = cfg, abs
		port, ok := cfg["port"].(int64)
		if !ok {
			closeAll()
			return nil, nil, fmt.Errorf("config %s: [%s] needs an integer port", path, name)
		}
		host, _ := cfg["host"].(string)
		if err := setup(d); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := configureLimits(d, cfg); err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("config %s: [%s] %w", path, name, err)
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.FormatInt(port, 10)))
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		daemons, listeners = append(daemons, d), append(listeners, l)
	}
	return daemons, listeners, nil
}

// configureLimits sets d's connection limits from the config keys Run
// documents.
func configureLimits(d *Daemon, cfg map[string]any) error {
	if v, ok := cfg["max_connections"]; ok {
		n, isInt := v.(int64)
		if !isInt || n == 0 || n < -1 {
			return fmt.Errorf("max_connections must be a positive integer, or -1 for no cap, not %v", tomlValue(v))
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
			return fmt.Errorf("%s must be a positive number of seconds, or -1 for none, not %v", key.name, tomlValue(v))
		}
	}
	return nil
}

// jsonValue turns a protocol default (numbers as json.Number) into the
// Go value TOML would give: int64 or float64.
func jsonValue(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v
}
