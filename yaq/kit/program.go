package kit

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"github.com/ndpack/ndpack/internal/yaqtoml"
	"github.com/ndpack/ndpack/yaq"
	"github.com/ndpack/ndpack/yaq/avro"
)

// Program is the main of a yaq daemon program, as yaqd-core gives each
// daemon kind: it composes the protocol, reads the config file, makes one
// Daemon per table, answers the traits' messages, keeps the state file and
// serves until every daemon has shut down. Its zero fields mean yaqd-core's
// defaults; a program sets the protocol one of three ways (the first set
// wins): Protocol, Description, or Kind and Traits.
//
//	PROGRAM --config FILE   serve one daemon per table of FILE
//	PROGRAM --protocol      print the protocol (.avpr JSON)
//	PROGRAM --version       print the program's name and version
//	PROGRAM --log-level L   override every daemon's log_level (-v: debug)
//
// Each table of the config file is a daemon named after it, except
// [shared-settings], whose keys every daemon takes before its own. Its
// keys are checked against the protocol's config fields: a value of the
// wrong type, or a missing key without a default, is an error naming the
// daemon and the key; an unknown key is logged as a warning and kept. host
// (default: every interface) says where it listens, and four keys set its
// connection limits (see the Daemon fields of the same meaning):
//
//	max_connections = 1024   # MaxConnections
//	idle_timeout = 3600      # IdleTimeout, in seconds (-1: none)
//	read_timeout = 60        # ReadTimeout, in seconds
//	write_timeout = 20       # WriteTimeout, in seconds
//
// enable = false skips a table. The state fields are read at start from
// StateFile(kind, name) and written there, atomically, within a second of
// a change and when the daemon stops. shutdown(restart=true) starts the
// daemon again from its table of the config file as it is then. SIGHUP
// stops every daemon, saves their states and reads the config file again:
// each table it then holds is a daemon (one added since starts, one
// removed stays stopped, changed values apply), and a file that no longer
// checks ends the program with the error, as at start. That is what
// yaqd-core's shutdown_all sets out to do on SIGHUP (it loads the file
// again and runs its start over every table); the --log-level given
// still overrides each table's log_level, where yaqd-core's second start
// would take the file's. SIGINT and SIGTERM stop them all.
type Program struct {
	// Name is the program's name in messages and --version; "" means
	// "yaqd-" and the protocol's name.
	Name string
	// Version is what --version prints.
	Version string
	// Protocol is a composed protocol's JSON (an .avpr), served as it is.
	Protocol string
	// Description is the TOML that yaq daemons publish (protocol, doc,
	// traits, config, state, messages, properties), composed with the
	// traits it lists at start; DescriptionFile names it in errors.
	Description     []byte
	DescriptionFile string
	// Kind and Traits describe a daemon with no messages or config of its
	// own: the protocol is its traits', called Kind. Traits are named as
	// yaq's protocols list them, and the kit answers each one's messages
	// unless the daemon registers a handler of its own:
	//
	//   - "is-daemon", every daemon's: id, busy, get_config,
	//     get_config_filepath, get_state and shutdown, and the config keys
	//     port, serial, make, model, enable, log_level and log_to_file;
	//   - "has-position", a device with one position: set_position,
	//     get_position, get_destination, get_units and set_relative;
	//   - "has-limits": get_limits and in_limits, set_position clamping,
	//     ignoring or refusing what lies outside (config out_of_limits);
	//   - "has-transformed-position": the frame clients use and the
	//     hardware's native one;
	//   - "is-discrete": named positions (identifiers, set_identifier);
	//   - "is-homeable": home;
	//   - "has-turret": a turret of named positions;
	//   - "is-sensor": get_measured, get_measurement_id, channel names,
	//     shapes and units;
	//   - "has-measure-trigger": measure (once or looping), stop_looping;
	//   - "has-mapping": channel mappings (a spectrometer's wavelengths);
	//   - "has-dependents": a daemon that drives other daemons;
	//   - "uses-serial": direct_serial_write; "uses-uart" adds serial_port
	//     and baud_rate, "uses-i2c" adds i2c_addr.
	//
	// A name that is not one of these is an error (ErrDescription) at start.
	Kind   string
	Traits []string
	// New makes one daemon ready to serve: its config has been checked and
	// its state loaded, and it answers its traits' messages already; New
	// sets what they need (Position, Sensor, ...) and registers handlers
	// for its own messages or to override a trait's. It may start
	// goroutines with Daemon.Go. It must leave the Busy and State hooks
	// of the embedded yaq.Daemon to the kit: a daemon whose New sets
	// either is an error at start. nil: the traits' defaults alone.
	New func(d *Daemon) error
	// Stdout and Stderr receive --protocol and --version, and the logs
	// and errors; nil means os.Stdout and os.Stderr.
	Stdout, Stderr io.Writer

	once     sync.Once
	composed *Composed
	err      error
}

// Compose returns the program's protocol, composed once.
// It fails as ComposeTOML or ComposeTraits does (ErrDescription), with an
// error wrapping avro.ErrSchema for a Protocol that does not parse, and with
// a plain error when the Program sets none of Protocol, Description and
// Kind; later calls return the first call's error.
func (p *Program) Compose() (*Composed, error) {
	p.once.Do(func() {
		switch {
		case p.Protocol != "":
			p.composed, p.err = composedFromJSON(p.Protocol)
		case len(p.Description) > 0:
			file := p.DescriptionFile
			if file == "" {
				file = "description"
			}
			p.composed, p.err = ComposeTOML(file, p.Description)
		case p.Kind != "":
			traits := p.Traits
			if !containsTrait(traits, "is-daemon") {
				traits = append([]string{"is-daemon"}, traits...)
			}
			p.composed, p.err = ComposeTraits(p.Kind, traits...)
		default:
			p.err = errors.New("yaq: the Program sets none of Protocol, Description and Kind")
		}
	})
	return p.composed, p.err
}

func containsTrait(ts []string, t string) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// composedFromJSON takes a protocol as it is, for its config and state
// fields' types.
func composedFromJSON(text string) (*Composed, error) {
	ap, err := avro.ParseProtocol(text)
	if err != nil {
		return nil, err
	}
	p, err := yaq.ParseProtocol(text)
	if err != nil {
		return nil, err
	}
	tree, _ := yaqtoml.FromJSON(ap.Properties).(map[string]any)
	c := &Composed{Name: p.Name, Traits: p.Traits, JSON: text, Indented: text, tree: tree,
		config: map[string]*avro.Schema{}, state: map[string]*avro.Schema{}}
	var named *avro.Names
	if types, ok := tree["types"].([]any); ok {
		if named, err = parseTypes("protocol", types); err != nil {
			return nil, err
		}
	}
	for _, section := range []string{"config", "state"} {
		fields, _ := tree[section].(map[string]any)
		for k, f := range fields {
			fm, _ := f.(map[string]any)
			s, err := fieldSchema(named, fm)
			if err != nil {
				return nil, fmt.Errorf("%w: protocol: %s.%s.type: %s", ErrDescription, section, k, schemaText(err))
			}
			if section == "config" {
				c.config[k] = s
			} else {
				c.state[k] = s
			}
		}
	}
	return c, nil
}

// Main runs the program on os.Args and exits with its status.
func (p *Program) Main() { os.Exit(p.Run(os.Args[1:])) }

func (p *Program) out() io.Writer {
	if p.Stdout != nil {
		return p.Stdout
	}
	return os.Stdout
}

func (p *Program) errOut() io.Writer {
	if p.Stderr != nil {
		return p.Stderr
	}
	return os.Stderr
}

func (p *Program) name() string {
	if p.Name != "" {
		return p.Name
	}
	if c, err := p.Compose(); err == nil {
		return "yaqd-" + c.Name
	}
	return "yaqd"
}

// Run runs the program with args (without the program's own name) and
// returns the exit status: 0 once every daemon has shut down, or on
// SIGINT or SIGTERM; 1 on an error; 2 on a usage error.
func (p *Program) Run(args []string) int {
	// Signals are ours from the first instant: nothing below waits on a
	// file, but a SIGINT before the daemons start still ends the program.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	stderr := p.errOut()
	name := p.name()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var config, logLevel string
	fs.StringVar(&config, "config", "", "the TOML config file: one table per daemon")
	fs.StringVar(&config, "c", "", "short for --config")
	fs.StringVar(&logLevel, "log-level", "", "override every daemon's log_level")
	fs.StringVar(&logLevel, "l", "", "short for --log-level")
	verbose := fs.Bool("verbose", false, "short for --log-level debug")
	fs.BoolVar(verbose, "v", false, "short for --log-level debug")
	showProtocol := fs.Bool("protocol", false, "print the protocol and exit")
	showVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *verbose {
		logLevel = "debug"
	}
	if _, ok := logLevels[logLevel]; logLevel != "" && !ok {
		fmt.Fprintf(stderr, "%s: --log-level %q is not one of debug, info, notice, warning, error, critical, alert, emergency\n", name, logLevel)
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	c, err := p.Compose()
	if err != nil {
		return fail(err)
	}
	switch {
	case *showProtocol:
		fmt.Fprintln(p.out(), c.Indented)
		return 0
	case *showVersion:
		fmt.Fprintf(p.out(), "%s %s\n", name, p.Version)
		return 0
	case config == "":
		config = filepath.Join(xdgHome("XDG_CONFIG_HOME", ".config"), "yaqd", c.Name, "config.toml")
	}
	abs, err := filepath.Abs(config)
	if err != nil {
		return fail(err)
	}
	for {
		select {
		case s := <-sigs:
			if s != syscall.SIGHUP {
				return 0 // before any daemon started
			}
		default:
		}
		g, err := p.start(abs, logLevel)
		if err != nil {
			return fail(err)
		}
		hup := false
		for waiting := true; waiting; {
			select {
			case s := <-sigs:
				if hup = s == syscall.SIGHUP; hup {
					// A config that no longer checks leaves the daemons
					// running, as a server reloading a bad config does.
					if err := p.precheck(abs); err != nil {
						fmt.Fprintf(stderr, "%s: SIGHUP: %v; the daemons keep running\n", name, err)
						continue
					}
				}
				g.closeAll()
				<-g.done
			case <-g.done:
			}
			waiting = false
		}
		if err := g.firstErr(); err != nil {
			return fail(err)
		}
		if !hup {
			return 0
		}
		// The next start reads the file again: tables added or removed
		// since are daemons started or left stopped.
	}
}

// precheck reads the config file and checks every enabled table as start
// would, without starting anything, so that SIGHUP stops the daemons only
// for a config that will start them again.
func (p *Program) precheck(path string) error {
	c, err := p.Compose()
	if err != nil {
		return err
	}
	tables, err := readConfig(path)
	if err != nil {
		return err
	}
	for _, name := range sortedKeys(tables) {
		d := &Daemon{composed: c, level: logLevels["emergency"] + 1} // the start logs its warnings
		if _, err := d.checkConfig(path, name, tables[name]); err != nil {
			return err
		}
	}
	return nil
}

// generation is the daemons one reading of the config file started.
type generation struct {
	mu      sync.Mutex
	daemons map[string]*Daemon
	errs    []error
	done    chan struct{}
}

func (g *generation) closeAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, d := range g.daemons {
		d.Close()
	}
}

func (g *generation) firstErr() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.errs) > 0 {
		return g.errs[0]
	}
	return nil
}

// readConfig reads the config file's tables, [shared-settings] merged
// under each.
func readConfig(path string) (map[string]map[string]any, error) {
	file, _, err := readTOMLFile(path)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	shared, _ := file["shared-settings"].(map[string]any)
	tables := map[string]map[string]any{}
	for name, v := range file {
		t, ok := v.(map[string]any)
		if !ok || name == "shared-settings" {
			continue
		}
		if err := checkName(name); err != nil {
			return nil, fmt.Errorf("config %s: [%s] %v", path, cutShort(name, 80), err)
		}
		merged := map[string]any{}
		for k, x := range shared {
			merged[k] = x
		}
		for k, x := range t {
			merged[k] = x
		}
		tables[name] = merged
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("config %s has no [daemon] table", path)
	}
	return tables, nil
}

// start reads the config file and starts every enabled daemon in it.
func (p *Program) start(path, logLevel string) (*generation, error) {
	tables, err := readConfig(path)
	if err != nil {
		return nil, err
	}
	g := &generation{daemons: map[string]*Daemon{}, done: make(chan struct{})}
	names := sortedKeys(tables)
	type ready struct {
		d *Daemon
		l net.Listener
	}
	var started []ready
	for _, name := range names {
		d, l, err := p.makeDaemon(path, name, tables[name], logLevel)
		if err != nil {
			for _, r := range started {
				r.l.Close()
			}
			return nil, err
		}
		if d == nil {
			continue // enable = false
		}
		started = append(started, ready{d: d, l: l})
	}
	if len(started) == 0 {
		return nil, fmt.Errorf("config %s: every daemon is disabled", path)
	}
	var wg sync.WaitGroup
	for _, r := range started {
		g.daemons[r.d.Name] = r.d
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.serve(g, path, r.d, r.l, logLevel)
		}()
	}
	go func() { wg.Wait(); close(g.done) }()
	return g, nil
}

// Serve makes the daemon that table describes, as the table called name
// of a config file would, and serves it on l: a harness for testing a
// daemon program without a config file or a free port. The table holds
// config values as TOML decodes them (int64 or int, float64, string, bool,
// []any, map[string]any); its port, which l replaces, may be left out. It
// is checked, the state file (StateFile of the kind and name) is read and
// kept, and New is run, as Run does; Serve returns once the daemon serves,
// or with the error Run would print. Close the daemon to stop it (a
// shutdown message stops it too, even with restart=true).
func (p *Program) Serve(l net.Listener, name string, table map[string]any) (*Daemon, error) {
	if err := checkName(name); err != nil {
		return nil, fmt.Errorf("[%s] %w", name, err)
	}
	t := maps.Clone(table)
	if _, ok := t["port"]; !ok {
		t["port"] = int64(0)
	}
	d, _, err := p.makeDaemonOn("(Program.Serve)", name, t, "", l)
	if err != nil {
		return nil, err
	}
	if d == nil {
		return nil, fmt.Errorf("[%s] is disabled (enable = false)", name)
	}
	// The state is kept from now, so that a Close right after Serve
	// returns still waits for its last save.
	d.startKeepingState()
	go p.serveKept(d, l)
	return d, nil
}

// startKeepingState starts saving d's state file, until d closes and the
// state has been saved for the last time, which Close waits for.
func (d *Daemon) startKeepingState() {
	saved := make(chan struct{})
	d.mu.Lock()
	d.stateSaved = saved
	d.mu.Unlock()
	go func() { d.keepState(StateFile(d.Kind(), d.Name), d.loaded, d.Context().Done()); close(saved) }()
}

// serveOnce serves d on l until it closes, keeping its state file, and
// reports whether it was shut down to restart.
func (p *Program) serveOnce(d *Daemon, l net.Listener) (restart bool, err error) {
	d.startKeepingState()
	return p.serveKept(d, l)
}

// serveKept is serveOnce once the state is kept.
func (p *Program) serveKept(d *Daemon, l net.Listener) (restart bool, err error) {
	if v, _ := d.Config["loop_at_startup"].(bool); v && d.traits["has-measure-trigger"] {
		d.measure(true)
	}
	err = d.Serve(l)
	d.Close()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return false, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.restart, nil
}

// serve serves d until it closes, saving its state as it goes, and starts
// it again as long as it is shut down with restart=true.
func (p *Program) serve(g *generation, path string, d *Daemon, l net.Listener, logLevel string) {
	for {
		restart, err := p.serveOnce(d, l)
		if err != nil {
			g.mu.Lock()
			g.errs = append(g.errs, fmt.Errorf("%s: %w", d.Name, err))
			g.mu.Unlock()
			return
		}
		if !restart {
			return
		}
		tables, err := readConfig(path)
		if err == nil && tables[d.Name] == nil {
			err = fmt.Errorf("config %s no longer has the table [%s]", path, d.Name)
		}
		var next *Daemon
		if err == nil {
			next, l, err = p.makeDaemon(path, d.Name, tables[d.Name], logLevel)
		}
		if err != nil || next == nil {
			if err != nil {
				d.Logf("error", "restart: %v", err)
			}
			return
		}
		g.mu.Lock()
		g.daemons[d.Name], d = next, next
		g.mu.Unlock()
	}
}

// makeDaemon checks one table's config, makes its daemon, loads its state,
// runs New and listens; a disabled table gives a nil daemon.
func (p *Program) makeDaemon(path, name string, table map[string]any, logLevel string) (*Daemon, net.Listener, error) {
	return p.makeDaemonOn(path, name, table, logLevel, nil)
}

// makeDaemonOn is makeDaemon serving on l, or, when l is nil, listening
// where the table's host and port say.
func (p *Program) makeDaemonOn(path, name string, table map[string]any, logLevel string, l net.Listener) (*Daemon, net.Listener, error) {
	c, err := p.Compose()
	if err != nil {
		return nil, nil, err
	}
	if err := checkName(c.Name); err != nil {
		return nil, nil, fmt.Errorf("the protocol's name %q %v", c.Name, err)
	}
	server, err := yaq.NewDaemon(name, c.JSON)
	if err != nil {
		return nil, nil, err
	}
	server.ErrorLog = newStderrLogger(p.errOut())
	d := newKit(server, c)
	cfg, err := d.checkConfig(path, name, table)
	if err != nil {
		return nil, nil, err
	}
	if enable, ok := cfg["enable"].(bool); ok && !enable {
		d.Logf("info", "disabled (enable = false): not started")
		return nil, nil, nil
	}
	if logLevel != "" {
		cfg["log_level"] = logLevel
	}
	if lv, ok := cfg["log_level"].(string); ok {
		if n, ok := logLevels[lv]; ok {
			d.level = n
		}
	}
	var logFile *os.File
	if v, _ := cfg["log_to_file"].(bool); v {
		if logFile, err = openLogFile(c.Name, name); err != nil {
			return nil, nil, fmt.Errorf("%s: log_to_file: %w", name, err)
		}
		var mu sync.Mutex
		d.logSink = func(line string) { mu.Lock(); fmt.Fprintln(logFile, line); mu.Unlock() }
	}
	d.Config, d.ConfigFile = cfg, path
	for key, dst := range map[string]**string{"make": &d.Make, "model": &d.Model, "serial": &d.Serial} {
		if s, ok := cfg[key].(string); ok {
			*dst = &s
		}
	}
	d.installDefaults()
	d.loaded = d.loadState(StateFile(c.Name, name))
	closeLog := func() {
		if logFile != nil {
			logFile.Close()
		}
	}
	if p.New != nil {
		if err := p.New(d); err != nil {
			closeLog()
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := d.installHooks(); err != nil {
		closeLog()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := d.checkHandled(); err != nil {
		closeLog()
		return nil, nil, fmt.Errorf("%s: %w", name, err)
	}
	if err := configureLimits(d, cfg); err != nil {
		closeLog()
		return nil, nil, fmt.Errorf("config %s: [%s] %w", path, name, err)
	}
	if l == nil {
		port, _ := cfg["port"].(int64)
		host, _ := cfg["host"].(string)
		if l, err = net.Listen("tcp", net.JoinHostPort(host, strconv.FormatInt(port, 10))); err != nil {
			closeLog()
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if logFile != nil {
		go func() { <-d.Context().Done(); closeLog() }()
	}
	d.Logf("info", "serving %s on %s; config %s; state %s", c.Name, l.Addr(), path, StateFile(c.Name, name))
	return d, l, nil
}

// programKeys are config keys a Program reads that no trait declares.
var programKeys = map[string]bool{"host": true, "max_connections": true, "idle_timeout": true,
	"read_timeout": true, "write_timeout": true}

// checkConfig gives a table the protocol's defaults under its values and
// checks every value against its field's type.
func (d *Daemon) checkConfig(path, name string, table map[string]any) (map[string]any, error) {
	c := d.composed
	fields, _ := c.tree["config"].(map[string]any)
	cfg := map[string]any{}
	for _, key := range sortedKeys(c.config) {
		f, _ := fields[key].(map[string]any)
		v, has := table[key]
		if !has {
			def, hasDef := f["default"]
			if !hasDef {
				return nil, fmt.Errorf("config %s: [%s] %s is required: %s", path, name, key, fieldDoc(f))
			}
			v = deepCopy(def)
		}
		x, err := checkValue(c.config[key], v, key)
		if err != nil {
			return nil, fmt.Errorf("config %s: [%s] %v", path, name, err)
		}
		cfg[key] = x
	}
	for _, key := range sortedKeys(table) {
		if _, known := c.config[key]; known {
			continue
		}
		if !programKeys[key] {
			d.Logf("warning", "config %s: [%s] %s is not a config key of %s; kept", path, name, key, c.Name)
		}
		cfg[key] = table[key]
	}
	if _, ok := cfg["port"].(int64); !ok {
		return nil, fmt.Errorf("config %s: [%s] needs an integer port", path, name)
	}
	if h, has := cfg["host"]; has {
		if _, ok := h.(string); !ok {
			return nil, fmt.Errorf("config %s: [%s] host: %s is not a string", path, name, describeTOML(h))
		}
	}
	return cfg, nil
}

func fieldDoc(f map[string]any) string {
	if doc, _ := f["doc"].(string); doc != "" {
		return doc
	}
	return "it has no default"
}
