package kit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ndpack/ndpack/internal/yaqtoml"
	"github.com/ndpack/ndpack/yaq"
)

// Positioner is what a has-position daemon tells the kit about its
// motion; the kit answers the position messages (and those of has-limits,
// is-discrete and has-transformed-position) from the state fields position
// and destination.
type Positioner struct {
	// Units answers get_units; nil for none.
	Units *string
	// NativeUnits answers get_native_units (has-transformed-position).
	NativeUnits *string
	// Move starts the motion to position (native, within the limits),
	// after the kit has stored it as the destination and made the daemon
	// busy; the daemon updates the state field "position" as it moves and
	// calls SetBusy(false) on arrival. nil: the daemon's own goroutine
	// follows the destination.
	Move func(position float64) error
	// RelativeToTransformed and TransformedToRelative convert between a
	// native position less the native reference and a transformed one
	// (has-transformed-position); nil means they are equal.
	RelativeToTransformed, TransformedToRelative func(float64) float64
}

// Sensor is what an is-sensor daemon tells the kit about its channels;
// set its fields in Program.New.
type Sensor struct {
	// ChannelNames answers get_channel_names.
	ChannelNames []string
	// ChannelUnits answers get_channel_units (a nil *string for none).
	ChannelUnits map[string]*string
	// ChannelShapes answers get_channel_shapes; channels left out are
	// scalars.
	ChannelShapes map[string][]int
	// ChannelMappings and MappingUnits answer get_channel_mappings and
	// get_mapping_units (has-mapping).
	ChannelMappings map[string][]string
	MappingUnits    map[string]*string
	// Measure takes one measurement (has-measure-trigger): a value per
	// channel. The kit runs it on its own goroutine, adds measurement_id
	// (and mapping_id), and keeps the daemon busy until it returns (or,
	// looping, until stop_looping).
	Measure func(ctx context.Context) (map[string]any, error)
}

// Daemon is a daemon a Program made: the server (the embedded yaq.Daemon,
// whose fields and Handle it shares) and the kit's runtime, which answers
// the traits' messages as yaqd-core does from the daemon's state fields,
// busy flag, measurements and mappings, and from what Program.New sets in
// the fields below. A Program hands each daemon it makes to New; a Daemon
// made any other way has no server, and its methods act on its own state
// alone (Kind answers "", Go runs tasks with an ended context), never
// panicking. The server's Busy and State hooks are the kit's: a daemon
// whose New sets either is refused at start (SetBusy and Set say what they
// answer).
type Daemon struct {
	*yaq.Daemon

	// What the traits' default answers need from the daemon; each is read
	// only by the traits that use it, and left unset, those answer as
	// yaqd-core's base classes do.

	// Position drives has-position (and has-limits, is-discrete,
	// has-transformed-position).
	Position Positioner
	// Sensor describes an is-sensor daemon's channels, and measures for
	// has-measure-trigger.
	Sensor Sensor
	// TurretOptions answers get_turret_options (has-turret); SetTurret,
	// called with one of them after the daemon is made busy, moves the
	// turret and stores the state field "turret" (nil: stored at once).
	TurretOptions []string
	SetTurret     func(name string) error
	// Home homes the device (is-homeable).
	Home func(ctx context.Context) error
	// DependentHardware answers get_dependent_hardware (has-dependents).
	DependentHardware func() map[string]string
	// SerialWrite answers direct_serial_write (uses-serial).
	SerialWrite func(message []byte) error

	composed *Composed
	traits   map[string]bool
	handled  map[string]bool // the messages given a handler, by the kit or New

	mu            sync.Mutex
	state         map[string]any
	busy          bool
	busyCh        chan struct{} // closed when busy turns true
	looping       bool
	measured      map[string]any
	measurementID int64
	mappings      map[string]any
	mappingID     int64
	restart       bool
	loaded        []byte        // the state file as read at start
	stateSaved    chan struct{} // closed once the state is saved for the last time
	level         int
	logSink       func(string)

	tasks sync.WaitGroup
}

func newKit(server *yaq.Daemon, c *Composed) *Daemon {
	d := &Daemon{Daemon: server, composed: c, traits: map[string]bool{}, state: map[string]any{},
		busyCh: make(chan struct{}), measured: map[string]any{"measurement_id": int64(0)},
		mappings: map[string]any{}, level: logLevels["info"]}
	for _, t := range c.Traits {
		d.traits[t] = true
	}
	if d.traits["has-mapping"] {
		// yaqd-core's sensors start with empty mappings, numbered 1.
		d.mappingID = 1
		d.mappings = map[string]any{"mapping_id": int64(1)}
	}
	return d
}

// installHooks gives the server the kit's answers to busy and get_state,
// once Program.New has run. A hook New set itself would silently replace
// the kit's (busy would no longer follow SetBusy, nor get_state the state
// fields), so it is refused with an error that says what to do instead.
func (d *Daemon) installHooks() error {
	switch {
	case d.Busy != nil:
		return errors.New("Program.New set Daemon.Busy, which the kit sets: busy answers what SetBusy sets (register a handler for busy with Handle to answer it otherwise)")
	case d.State != nil:
		return errors.New("Program.New set Daemon.State, which the kit sets: get_state answers the state fields, set with Set (register a handler for get_state with Handle to answer it otherwise)")
	}
	d.Busy, d.State = d.isBusy, d.stateSnapshot
	return nil
}

func (d *Daemon) isBusy() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.busy
}

func (d *Daemon) stateSnapshot() map[string]any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return maps.Clone(d.state)
}

// Get returns the state field key (as the state file and get_state hold
// it: float64, int64, string, bool, nil, []any or map[string]any). The
// value is shared: replace it with Set rather than changing it.
func (d *Daemon) Get(key string) any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state[key]
}

// Float returns the state field key as a float64: NaN if it is not a
// number.
func (d *Daemon) Float(key string) float64 {
	if f, ok := asFloat(d.Get(key)); ok {
		return f
	}
	return math.NaN()
}

// Set sets the state field key; the state file is rewritten within a
// second. A value TOML cannot hold (a string that is not UTF-8, nil in a
// list, nesting over 64 levels) is not written changed: while the state
// holds it, the file keeps the last state written, the error is logged
// once, and get_state answers it.
func (d *Daemon) Set(key string, value any) {
	d.mu.Lock()
	d.setStateLocked(key, value)
	d.mu.Unlock()
}

// SetBusy sets what busy answers.
func (d *Daemon) SetBusy(busy bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setBusyLocked(busy)
}

func (d *Daemon) setBusyLocked(busy bool) {
	if d.busyCh == nil { // a Daemon no Program made
		d.busyCh = make(chan struct{})
	}
	if busy && !d.busy {
		close(d.busyCh)
	} else if !busy && d.busy {
		d.busyCh = make(chan struct{})
	}
	d.busy = busy
}

// setStateLocked sets a state field, making the map of a Daemon no Program
// made.
func (d *Daemon) setStateLocked(key string, value any) {
	if d.state == nil {
		d.state = map[string]any{}
	}
	d.state[key] = value
}

// WaitBusy blocks until the daemon is busy (at once if it is), or ctx
// ends, or the daemon closes; it reports whether the daemon is busy. A
// motion loop waits on it between moves.
func (d *Daemon) WaitBusy(ctx context.Context) bool {
	d.mu.Lock()
	if d.busy {
		d.mu.Unlock()
		return true
	}
	if d.busyCh == nil {
		d.busyCh = make(chan struct{})
	}
	ch := d.busyCh
	d.mu.Unlock()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	case <-d.Context().Done():
	}
	return false
}

// Go runs task on its own goroutine with a context that ends when the
// daemon closes; the daemon's state is saved for the last time after every
// such task has returned.
func (d *Daemon) Go(task func(ctx context.Context)) {
	d.tasks.Add(1)
	go func() {
		defer d.tasks.Done()
		task(d.Context())
	}()
}

// Kind is the daemon's kind, its protocol's name.
func (d *Daemon) Kind() string {
	if d.composed == nil {
		return ""
	}
	return d.composed.Name
}

// SetMeasured records a measurement taken by the daemon itself (an
// is-sensor daemon without has-measure-trigger): it gets the next
// measurement_id, which SetMeasured returns.
func (d *Daemon) SetMeasured(values map[string]any) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.setMeasuredLocked(values)
}

func (d *Daemon) setMeasuredLocked(values map[string]any) int64 {
	m := make(map[string]any, len(values)+2)
	for key, v := range values {
		m[key] = v
	}
	d.measurementID++
	m["measurement_id"] = d.measurementID
	if d.traits["has-mapping"] {
		m["mapping_id"] = d.mappingID
	}
	d.measured = m
	return d.measurementID
}

// SetMappings replaces the mappings (has-mapping), which get the next
// mapping_id.
func (d *Daemon) SetMappings(mappings map[string]any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := make(map[string]any, len(mappings)+1)
	for key, v := range mappings {
		m[key] = v
	}
	d.mappingID++
	m["mapping_id"] = d.mappingID
	d.mappings = m
}

// SetMapping sets one mapping (has-mapping) and keeps the mapping_id, as
// assigning self._mappings[name] in a yaqd-core daemon does: there only
// replacing the whole dict (SetMappings) numbers the mappings anew, and
// clients that fetch mappings again only when mapping_id changes behave
// with the Go daemon as with the Python one.
func (d *Daemon) SetMapping(name string, value any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	// A new map: get_mappings answers may be encoding the old one.
	m := make(map[string]any, len(d.mappings)+1)
	for key, v := range d.mappings {
		m[key] = v
	}
	m[name] = value
	d.mappings = m
}

// Looping reports whether measure was asked to loop and stop_looping has
// not been called since.
func (d *Daemon) Looping() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.looping
}

// Close closes the daemon as yaq.Daemon.Close does, then waits until its
// state has been saved for the last time (after the tasks started with Go
// have returned), so that nothing writes the state file after Close. Like
// yaq.Daemon.Close, which waits for the connections' handlers, it is not
// for a handler or a task of the daemon's own: they stop it with a
// shutdown, or by returning.
// Its error is yaq.Daemon.Close's, always nil.
func (d *Daemon) Close() error {
	err := d.Daemon.Close()
	d.mu.Lock()
	saved := d.stateSaved
	d.mu.Unlock()
	if saved != nil {
		<-saved
	}
	return err
}

// Handle registers h for method, a message of the daemon's protocol,
// replacing the trait's default answer or a handler registered before, as
// yaq.Daemon.Handle does. Every message of the protocol must have an
// answer when the daemon starts: a trait's default, one of is-daemon's
// that the server gives, or a handler registered in Program.New; a
// message left without one stops the program at start with an error that
// names it. It fails with yaq.ErrNoMethod for a method the protocol does
// not declare.
func (d *Daemon) Handle(method string, h yaq.Handler) error {
	if err := d.Daemon.Handle(method, h); err != nil {
		return err
	}
	d.mu.Lock()
	if d.handled == nil {
		d.handled = map[string]bool{}
	}
	d.handled[method] = true
	d.mu.Unlock()
	return nil
}

// serverAnswers are the messages yaq.Daemon answers itself, from its
// fields, when no handler is registered for them.
var serverAnswers = map[string]bool{"id": true, "busy": true, "get_config": true,
	"get_config_filepath": true, "get_state": true, "shutdown": true}

// checkHandled refuses a protocol message nothing answers: better at start
// than a NotImplementedError at a client's first call.
func (d *Daemon) checkHandled() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var missing []string
	for name := range d.Protocol().Messages {
		if !d.handled[name] && !serverAnswers[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	return fmt.Errorf("the protocol %s declares %s, which no trait answers and Program.New registers no handler for",
		d.Kind(), strings.Join(missing, ", "))
}

// handle registers a trait's default answer for method, if the protocol
// has that message.
func (d *Daemon) handle(method string, h func(p []any) (any, error)) {
	if d.Protocol().Messages[method] == nil {
		return
	}
	_ = d.Handle(method, func(_ context.Context, p []any) (any, error) { return h(p) })
}

// installDefaults gives every message of the daemon's traits the
// behaviour yaqd-core gives it.
func (d *Daemon) installDefaults() {
	d.handle("get_state", func([]any) (any, error) {
		text, err := yaqtoml.Marshal(d.stateSnapshot())
		if err != nil {
			return nil, fmt.Errorf("the state cannot be written as TOML: %w", err)
		}
		return string(text), nil
	})
	d.handle("shutdown", func(p []any) (any, error) {
		restart, _ := p[0].(bool)
		d.mu.Lock()
		d.restart = restart
		d.mu.Unlock()
		return nil, nil
	})
	if d.traits["has-position"] {
		d.installPosition()
	}
	if d.traits["is-discrete"] {
		d.handle("get_position_identifiers", func([]any) (any, error) { return d.identifiers(), nil })
		d.handle("get_position_identifier_options", func([]any) (any, error) {
			return sortedKeys(d.identifiers()), nil
		})
		d.handle("set_identifier", func(p []any) (any, error) {
			id := p[0].(string)
			pos, ok := d.identifiers()[id]
			if !ok {
				return nil, fmt.Errorf("KeyError('%s')", id)
			}
			return pos, d.setPosition(pos)
		})
		d.handle("get_identifier", func([]any) (any, error) { return d.Get("position_identifier"), nil })
	}
	if d.traits["is-homeable"] {
		d.handle("home", func([]any) (any, error) {
			if d.Home == nil {
				return nil, fmt.Errorf("NotImplementedError('home')")
			}
			return nil, d.Home(d.Context())
		})
	}
	d.installTurret()
	d.installSensor()
	if d.traits["has-dependents"] {
		d.handle("get_dependent_hardware", func([]any) (any, error) {
			if d.DependentHardware == nil {
				return map[string]string{}, nil
			}
			return d.DependentHardware(), nil
		})
	}
	if d.traits["uses-serial"] {
		d.handle("direct_serial_write", func(p []any) (any, error) {
			if d.SerialWrite == nil {
				return nil, fmt.Errorf("NotImplementedError('direct_serial_write')")
			}
			return nil, d.SerialWrite(p[0].([]byte))
		})
	}
}

// installTurret answers has-turret's messages from TurretOptions and
// SetTurret.
func (d *Daemon) installTurret() {
	if d.traits["has-turret"] {
		d.handle("get_turret", func([]any) (any, error) { return d.Get("turret"), nil })
		d.handle("get_turret_options", func([]any) (any, error) { return d.TurretOptions, nil })
		d.handle("set_turret", func(p []any) (any, error) {
			name := p[0].(string)
			if !slices.Contains(d.TurretOptions, name) {
				return nil, fmt.Errorf("ValueError('%s is not one of the turret options %s')", name, strings.Join(d.TurretOptions, ", "))
			}
			d.SetBusy(true)
			if d.SetTurret != nil {
				return nil, d.SetTurret(name)
			}
			d.Set("turret", name)
			d.SetBusy(false)
			return nil, nil
		})
	}
}

// installSensor answers is-sensor's, has-measure-trigger's and
// has-mapping's messages from Sensor and the measurements taken.
func (d *Daemon) installSensor() {
	if d.traits["is-sensor"] {
		s := &d.Sensor
		d.handle("get_channel_names", func([]any) (any, error) { return nonNil(s.ChannelNames), nil })
		d.handle("get_channel_units", func([]any) (any, error) { return unitsMap(s.ChannelUnits), nil })
		d.handle("get_channel_shapes", func([]any) (any, error) {
			out := map[string]any{}
			for _, n := range s.ChannelNames {
				out[n] = []int{}
			}
			for n, shape := range s.ChannelShapes {
				out[n] = nonNil(shape)
			}
			return out, nil
		})
		d.handle("get_measured", func([]any) (any, error) { return d.locked(func() any { return d.measured }), nil })
		d.handle("get_measurement_id", func([]any) (any, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			id, _ := d.measured["measurement_id"].(int64) // the kit's own count
			return id, nil
		})
	}
	if d.traits["has-measure-trigger"] {
		d.handle("measure", func(p []any) (any, error) {
			loop, _ := p[0].(bool)
			return d.measure(loop), nil
		})
		d.handle("stop_looping", func([]any) (any, error) {
			d.mu.Lock()
			d.looping = false
			d.mu.Unlock()
			return nil, nil
		})
	}
	if d.traits["has-mapping"] {
		s := &d.Sensor
		d.handle("get_channel_mappings", func([]any) (any, error) {
			out := map[string]any{}
			for n, m := range s.ChannelMappings {
				out[n] = nonNil(m)
			}
			return out, nil
		})
		d.handle("get_mapping_id", func([]any) (any, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			return d.mappingID, nil
		})
		d.handle("get_mapping_units", func([]any) (any, error) { return unitsMap(s.MappingUnits), nil })
		d.handle("get_mappings", func([]any) (any, error) { return d.locked(func() any { return d.mappings }), nil })
	}
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func unitsMap(m map[string]*string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = orNil(v)
	}
	return out
}

// identifiers is the is-discrete config's identifiers.
func (d *Daemon) identifiers() map[string]float64 {
	out := map[string]float64{}
	ids, _ := d.Config["identifiers"].(map[string]any)
	for name, v := range ids {
		if f, ok := asFloat(v); ok {
			out[name] = f
		}
	}
	return out
}

// measure starts a measurement unless one runs, as has-measure-trigger
// does, and answers the id the next measurement will have.
func (d *Daemon) measure(loop bool) int64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.looping = loop
	if !d.busy {
		d.setBusyLocked(true)
		d.Go(d.runMeasurements)
	}
	return d.measurementID + 1
}

func (d *Daemon) runMeasurements(ctx context.Context) {
	for {
		var values map[string]any
		var err error
		if f := d.Sensor.Measure; f != nil {
			values, err = f(ctx)
		} else {
			err = fmt.Errorf("the daemon has no Sensor.Measure")
		}
		d.mu.Lock()
		if err != nil || ctx.Err() != nil {
			d.setBusyLocked(false)
			d.mu.Unlock()
			if err != nil && ctx.Err() == nil {
				d.Logf("error", "measure: %v", err)
			}
			return
		}
		d.setMeasuredLocked(values)
		if !d.looping {
			d.setBusyLocked(false)
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
	}
}

// installPosition answers has-position's messages, with has-limits' and
// has-transformed-position's when the daemon has them.
func (d *Daemon) installPosition() {
	pos := &d.Position
	d.handle("get_position", func([]any) (any, error) { return d.toTransformed(d.Float("position")), nil })
	d.handle("get_destination", func([]any) (any, error) { return d.toTransformed(d.Float("destination")), nil })
	d.handle("get_units", func([]any) (any, error) { return orNil(pos.Units), nil })
	d.handle("set_position", func(p []any) (any, error) { return nil, d.setPosition(p[0].(float64)) })
	d.handle("set_relative", func(p []any) (any, error) {
		next := d.toTransformed(d.Float("destination")) + p[0].(float64)
		return next, d.setPosition(next)
	})
	if d.traits["has-limits"] {
		d.handle("get_limits", func([]any) (any, error) {
			lim, err := d.limits()
			if err != nil {
				return nil, err
			}
			if d.traits["has-transformed-position"] {
				lim = []float64{d.toTransformed(lim[0]), d.toTransformed(lim[1])}
				sort.Float64s(lim)
			}
			return lim, nil
		})
		d.handle("in_limits", func(p []any) (any, error) {
			lim, err := d.limits()
			if err != nil {
				return nil, err
			}
			x := d.toNative(p[0].(float64))
			return lim[0] <= x && x <= lim[1], nil
		})
	}
	if d.traits["has-transformed-position"] {
		d.handle("to_native", func(p []any) (any, error) { return d.toNative(p[0].(float64)), nil })
		d.handle("to_transformed", func(p []any) (any, error) { return d.toTransformed(p[0].(float64)), nil })
		d.handle("set_native_reference", func(p []any) (any, error) {
			d.Set("native_reference_position", p[0].(float64))
			return nil, nil
		})
		d.handle("get_native_reference", func([]any) (any, error) { return d.Float("native_reference_position"), nil })
		d.handle("set_native_position", func(p []any) (any, error) { return nil, d.setNative(p[0].(float64)) })
		d.handle("get_native_position", func([]any) (any, error) { return d.Float("position"), nil })
		d.handle("get_native_destination", func([]any) (any, error) { return d.Float("destination"), nil })
		d.handle("get_native_limits", func([]any) (any, error) { return d.limits() })
		d.handle("get_native_units", func([]any) (any, error) { return orNil(pos.NativeUnits), nil })
	}
}

// toNative and toTransformed convert positions (identity unless the
// daemon has has-transformed-position).
func (d *Daemon) toNative(x float64) float64 {
	if !d.traits["has-transformed-position"] {
		return x
	}
	if f := d.Position.TransformedToRelative; f != nil {
		x = f(x)
	}
	return x + d.Float("native_reference_position")
}

func (d *Daemon) toTransformed(x float64) float64 {
	if !d.traits["has-transformed-position"] {
		return x
	}
	x -= d.Float("native_reference_position")
	if f := d.Position.RelativeToTransformed; f != nil {
		x = f(x)
	}
	return x
}

// limits joins the hardware's limits and the config's (for
// has-transformed-position, the config's in native terms, and its
// native_limits): the greatest lower and least upper.
func (d *Daemon) limits() ([]float64, error) {
	sets := [][]float64{floats(d.Get("hw_limits")), floats(d.Config["limits"])}
	if d.traits["has-transformed-position"] {
		c := sets[1]
		if len(c) == 2 {
			c = []float64{d.toNative(c[0]), d.toNative(c[1])}
			sort.Float64s(c)
		}
		sets = [][]float64{sets[0], c, floats(d.Config["native_limits"])}
	}
	out := []float64{math.Inf(-1), math.Inf(1)}
	for _, s := range sets {
		if len(s) != 2 || !(s[0] < s[1]) {
			return nil, fmt.Errorf("AssertionError('the limits %s are not a lower and a greater upper limit')", pyList(s))
		}
		out[0], out[1] = max(out[0], s[0]), min(out[1], s[1])
	}
	if !(out[0] < out[1]) {
		return nil, fmt.Errorf("AssertionError('the limits do not overlap: %s')", pyList(out))
	}
	return out, nil
}

func floats(v any) []float64 {
	items, _ := v.([]any)
	if items == nil {
		if f, ok := v.([]float64); ok {
			return f
		}
	}
	out := make([]float64, 0, len(items))
	for _, e := range items {
		f, _ := asFloat(e)
		out = append(out, f)
	}
	return out
}

func pyList(f []float64) string {
	parts := make([]string, len(f))
	for i, x := range f {
		parts[i] = pyFloat(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// setPosition handles set_position: a transformed position made native.
func (d *Daemon) setPosition(p float64) error { return d.setNative(d.toNative(p)) }

// setNative applies has-limits' out_of_limits to a native position, then
// makes the daemon busy, stores the destination and starts the move.
func (d *Daemon) setNative(p float64) error {
	if d.traits["has-limits"] {
		lim, err := d.limits()
		if err != nil {
			return err
		}
		if !(lim[0] <= p && p <= lim[1]) {
			switch d.Config["out_of_limits"] {
			case "ignore":
				return nil
			case "error":
				return fmt.Errorf("ValueError('%s not in ranges %s')", pyFloat(p), pyList(lim))
			default:
				p = min(max(p, lim[0]), lim[1])
			}
		}
	}
	d.mu.Lock()
	d.setBusyLocked(true)
	d.state["destination"] = p
	d.mu.Unlock()
	if d.Position.Move != nil {
		return d.Position.Move(p)
	}
	return nil
}

// Arrived records that the device is at position and, if that is its
// destination (no set_position has come meanwhile), that it is no longer
// busy; it reports whether it is not. A motion loop calls it on arrival, so
// that a destination set while it checked is not lost.
func (d *Daemon) Arrived(position float64) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.setStateLocked("position", position)
	dest, _ := asFloat(d.state["destination"])
	if dest == position || (math.IsNaN(dest) && math.IsNaN(position)) {
		d.setBusyLocked(false)
		return true
	}
	return false
}

// asFloat returns a number of any Go type as a float64, as state and
// config values come (int64 or float64 from TOML, a parameter's int32 or
// float64, whatever number a handler stored, a json.Number from a
// description's default).
func asFloat(v any) (float64, bool) {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		return f, err == nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanFloat():
		return rv.Float(), true
	case rv.CanInt():
		return float64(rv.Int()), true
	case rv.CanUint():
		return float64(rv.Uint()), true
	}
	return 0, false
}

// orNil is s's string, or nil for no string, as the traits' answers hold
// units.
func orNil(s *string) any {
	if s != nil {
		return *s
	}
	return nil
}

// locked returns get() read under the daemon's lock: the measurement and
// mappings are replaced whole, never changed in place, so the map it
// returns can be encoded after the lock is released.
func (d *Daemon) locked(get func() any) any {
	d.mu.Lock()
	defer d.mu.Unlock()
	return get()
}
