package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/yaq"
	"github.com/ndpack/ndpack/yaq/kit"
)

// Each kind below sets only what its device does; the yaq kit answers
// every trait message, keeps the state and checks the config.

// newContinuousHardware moves at the configured velocity, a step every
// 25 ms, as yaqd-fakes' positioners do.
func newContinuousHardware(d *kit.Daemon) error {
	d.Position.Units = optString(d.Config["units"])
	followDestination(d, d.Config["velocity"].(float64))
	return nil
}

// newTransformedPosition is a positioner whose transformed frame is twice
// the native one, counted from a native reference of 1 (set at each
// start, as the Python fake does).
func newTransformedPosition(d *kit.Daemon) error {
	d.Position.RelativeToTransformed = func(x float64) float64 { return 2 * x }
	d.Position.TransformedToRelative = func(x float64) float64 { return x / 2 }
	d.Set("native_reference_position", 1.0)
	followDestination(d, d.Config["velocity"].(float64))
	return nil
}

// newTurret is a positioner with a turret; choosing the turret's i-th
// position divides the upper hardware limit by i+1.
func newTurret(d *kit.Daemon) error {
	d.Position.Units = optString(d.Config["units"])
	for _, t := range d.Config["turrets"].([]any) {
		d.TurretOptions = append(d.TurretOptions, t.(string))
	}
	d.SetTurret = func(name string) error {
		if cur, _ := d.Get("turret").(string); cur != name {
			d.Set("turret", name)
			limits := d.Config["limits"].([]any)
			hw := slices.Clone(d.Get("hw_limits").([]any))
			hw[1] = limits[1].(float64) / float64(1+slices.Index(d.TurretOptions, name))
			d.Set("hw_limits", hw)
		}
		return nil // the motion loop releases busy
	}
	followDestination(d, d.Config["velocity"].(float64))
	return nil
}

// followDestination runs the motion loop of the continuous fakes: toward
// the destination at velocity, busy until arrival.
func followDestination(d *kit.Daemon, velocity float64) {
	const tick = 25 * time.Millisecond
	d.Go(func(ctx context.Context) {
		for {
			pos, dest := d.Float("position"), d.Float("destination")
			if math.IsNaN(pos) {
				pos = dest
			}
			step := math.Copysign(velocity, pos-dest) * tick.Seconds()
			if math.IsNaN(pos) || math.Abs(pos-dest) <= math.Abs(step) {
				if d.Arrived(dest) && !d.WaitBusy(ctx) {
					return
				}
				continue
			}
			d.Set("position", pos-step)
			if !sleep(ctx, tick) {
				return
			}
		}
	})
}

// newDiscreteHardware arrives sleep seconds after it is sent, and names
// the identifier within tolerance of where it is.
func newDiscreteHardware(d *kit.Daemon) error {
	d.Position.Units = optString(d.Config["units"])
	tolerance, delay := d.Config["tolerance"].(float64), d.Config["sleep"].(float64)
	ids := d.Config["identifiers"].(map[string]any)
	d.Go(func(ctx context.Context) {
		for {
			pos, dest := d.Float("position"), d.Float("destination")
			if !(math.Abs(pos-dest) <= 1e-9*max(math.Abs(pos), math.Abs(dest))) {
				if !sleep(ctx, time.Duration(delay*float64(time.Second))) {
					return
				}
				pos = dest
			}
			var name any
			for _, id := range sortedByPosition(ids) {
				if math.Abs(pos-ids[id].(float64)) < tolerance {
					name = id
					break
				}
			}
			d.Set("position_identifier", name)
			if d.Arrived(pos) && !d.WaitBusy(ctx) {
				return
			}
		}
	})
	return nil
}

func sortedByPosition(ids map[string]any) []string {
	names := make([]string, 0, len(ids))
	for k := range ids {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		x, y := ids[a].(float64), ids[b].(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return names
}

// newFurnace ramps to its set point in steps of a second, taking
// ramp_time minutes for the whole way; with no ramp time it jumps.
func newFurnace(d *kit.Daemon) error {
	var stepMu = make(chan float64, 1)
	stepMu <- 0
	setStep := func(f func(float64) float64) float64 { s := f(<-stepMu); stepMu <- s; return s }
	d.Position.Move = func(float64) error {
		diff := d.Float("position") - d.Float("destination")
		if rt := d.Float("ramp_time"); rt != 0 {
			diff /= rt * 60
		}
		setStep(func(float64) float64 { return diff })
		return nil
	}
	handlers := map[string]yaq.Handler{
		"get_ramp_time": func(context.Context, []any) (any, error) { return d.Float("ramp_time"), nil },
		"set_ramp_time": func(_ context.Context, p []any) (any, error) { d.Set("ramp_time", p[0]); return nil, nil },
		"get_ramp_time_limits": func(context.Context, []any) (any, error) {
			return []float64{0, 100}, nil
		},
		"get_ramp_time_units": func(context.Context, []any) (any, error) { return "min", nil },
	}
	for name, h := range handlers {
		if err := d.Handle(name, h); err != nil {
			return err
		}
	}
	lower := floatsOf(d.Config["limits"])[0]
	d.Go(func(ctx context.Context) {
		for {
			pos, dest := d.Float("position"), d.Float("destination")
			if math.IsNaN(pos) {
				if math.IsNaN(dest) {
					dest = max(lower, floatsOf(d.Get("hw_limits"))[0])
					d.Set("destination", dest)
				}
				pos = dest
				d.Set("position", pos)
			}
			step := setStep(func(s float64) float64 { return s })
			if math.IsNaN(step) { // sent before the first position was known
				step = pos - dest
			}
			if math.Abs(pos-dest) <= math.Abs(step) {
				if d.Arrived(dest) && !d.WaitBusy(ctx) {
					return
				}
				continue
			}
			d.Set("position", pos-step)
			if !sleep(ctx, time.Second) {
				return
			}
		}
	})
	return nil
}

// newSensor measures by itself every update_period.
func newSensor(d *kit.Daemon) error {
	walks, err := channels(d)
	if err != nil {
		return err
	}
	period := time.Duration(d.Config["update_period"].(float64) * float64(time.Second))
	d.Go(func(ctx context.Context) {
		for {
			d.SetMeasured(walks.next())
			if !sleep(ctx, period) {
				return
			}
		}
	})
	return nil
}

// newTriggeredSensor measures when told to: at once, or every 0.1 s when
// looping.
func newTriggeredSensor(d *kit.Daemon) error {
	walks, err := channels(d)
	if err != nil {
		return err
	}
	d.Sensor.Measure = func(ctx context.Context) (map[string]any, error) {
		out := walks.next()
		if d.Looping() {
			sleep(ctx, 100*time.Millisecond)
		}
		return out, nil
	}
	return nil
}

// walkSet is a random walk per channel.
type walkSet struct {
	names []string
	walks []*randomWalk
}

func (w *walkSet) next() map[string]any {
	out := make(map[string]any, len(w.names))
	for i, n := range w.names {
		out[n] = w.walks[i].next()
	}
	return out
}

// channels reads the sensors' channels table: a random walk per channel.
func channels(d *kit.Daemon) (*walkSet, error) {
	table := d.Config["channels"].(map[string]any)
	w := &walkSet{}
	d.Sensor.ChannelUnits = map[string]*string{}
	for _, name := range sortedKeys(table) {
		ch := table[name].(map[string]any)
		if ch["kind"] != "random-walk" {
			return nil, fmt.Errorf("config channels.%s.kind: %v is not a channel kind (the kind is \"random-walk\")", name, ch["kind"])
		}
		lo, okLo := number(ch["min"])
		hi, okHi := number(ch["max"])
		if !okLo || !okHi || !(lo < hi) {
			return nil, fmt.Errorf("config channels.%s: min and max must be numbers, min the smaller", name)
		}
		w.names = append(w.names, name)
		w.walks = append(w.walks, newRandomWalk(lo, hi))
		d.Sensor.ChannelUnits[name] = nil
	}
	d.Sensor.ChannelNames = w.names
	return w, nil
}

// randomWalk wanders between lo and hi, pulled gently toward the middle,
// with Gaussian steps of a 25th of the range.
type randomWalk struct {
	lo, hi, val float64
	rng         *rand.Rand
}

func newRandomWalk(lo, hi float64) *randomWalk {
	return &randomWalk{lo: lo, hi: hi, val: (lo + hi) / 2, rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))}
}

func (r *randomWalk) next() float64 {
	v := r.val
	center, width := (r.lo+r.hi)/2, (r.hi-r.lo)*10
	r.val += r.rng.NormFloat64()*(r.hi-r.lo)/25 + (center-r.val)/width
	r.val = min(max(r.val, r.lo), r.hi)
	return v
}

// newCamera images a spot wandering over the area of interest, a
// measurement every 0.1 s, with the pixel indices as mappings.
func newCamera(d *kit.Daemon) error {
	c := d.Config
	left, width := int(c["aoi_left"].(int64)), int(c["aoi_width"].(int64))
	top, height := int(c["aoi_top"].(int64)), int(c["aoi_height"].(int64))
	if width < 1 || height < 1 || width*height > 1<<26 || left < math.MinInt16 || top < math.MinInt16 ||
		left+width > math.MaxInt16 || top+height > math.MaxInt16 {
		return fmt.Errorf("config: the area of interest (aoi_left, aoi_top, aoi_width, aoi_height) must lie in the <i2 range, at most 2^26 pixels")
	}
	d.Sensor.ChannelNames = []string{"image"}
	d.Sensor.ChannelUnits = map[string]*string{"image": nil}
	d.Sensor.ChannelShapes = map[string][]int{"image": {height, width}}
	d.Sensor.ChannelMappings = map[string][]string{"image": {"x_index", "y_index"}}
	d.SetMappings(map[string]any{"x_index": indexArray(left, 1, width), "y_index": indexArray(top, height, 1)})
	x := newRandomWalk(float64(left), float64(left+width))
	y := newRandomWalk(float64(top), float64(top+height))
	fwhm := newRandomWalk(0, float64(min(width, height)))
	amp := newRandomWalk(0, 4096)
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	d.Sensor.Measure = func(ctx context.Context) (map[string]any, error) {
		if !sleep(ctx, 100*time.Millisecond) {
			return nil, ctx.Err()
		}
		cx, cy, w, a := x.next(), y.next(), fwhm.next(), amp.next()
		img := make([]int16, width*height)
		for i := range img {
			dx, dy := float64(left+i%width)-cx, float64(top+i/width)-cy
			s := sinc(math.Hypot(dx, dy) / w)
			if math.IsNaN(s) || math.IsInf(s, 0) { // a spot of no width
				s = 0
			}
			img[i] = int16(s*s*a) + int16(math.Abs(rng.NormFloat64()*100))
		}
		return map[string]any{"image": littleEndian(img, height, width)}, nil
	}
	return nil
}

// indexArray is start, start+1, ... as an <i2 array of rows by cols.
func indexArray(start, rows, cols int) *ndarray.Array {
	v := make([]int16, rows*cols)
	for i := range v {
		v[i] = int16(start + i)
	}
	return littleEndian(v, rows, cols)
}

// sinc is numpy's normalised sinc, sin(πx)/(πx).
func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// newSpectrometer measures a line at the central wavelength over 551
// pixels spanning 50 nm, a measurement every 0.1 s.
func newSpectrometer(d *kit.Daemon) error {
	const pixels = 551
	nm := "nm"
	d.Sensor.ChannelNames = []string{"counts"}
	d.Sensor.ChannelUnits = map[string]*string{"counts": nil}
	d.Sensor.ChannelShapes = map[string][]int{"counts": {pixels}}
	d.Sensor.ChannelMappings = map[string][]string{"counts": {"wavelengths"}}
	d.Sensor.MappingUnits = map[string]*string{"wavelengths": &nm}
	for name, h := range map[string]yaq.Handler{
		"get_central_wavelength": func(context.Context, []any) (any, error) { return d.Float("central_wavelength"), nil },
		"set_central_wavelength": func(_ context.Context, p []any) (any, error) {
			d.Set("central_wavelength", p[0])
			return nil, nil
		},
	} {
		if err := d.Handle(name, h); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	var wl []float64
	d.Sensor.Measure = func(ctx context.Context) (map[string]any, error) {
		if !sleep(ctx, 100*time.Millisecond) {
			return nil, ctx.Err()
		}
		center := d.Float("central_wavelength")
		if wl == nil || math.Abs(wl[pixels/2]-center) > 1e-8+1e-5*math.Abs(center) {
			wl = make([]float64, pixels)
			for i := range wl {
				wl[i] = center + 25 - 50*float64(i)/(pixels-1)
			}
			// In place, as the Python fake assigns to its mappings' key:
			// mapping_id stays 1.
			d.SetMapping("wavelengths", littleEndian(wl, pixels))
		}
		const g = 3.0
		counts := make([]float64, pixels)
		for i, x := range wl {
			counts[i] = math.Round(100*g*g/((x-center)*(x-center)+g*g)) + float64(poisson(rng, 10))
		}
		return map[string]any{"counts": littleEndian(counts, pixels)}, nil
	}
	return nil
}

// poisson draws from a Poisson distribution of mean lambda (Knuth's
// method, fine for small means).
func poisson(rng *rand.Rand, lambda float64) int {
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// littleEndian makes an array of v's elements, little-endian as yaq
// daemons send them.
func littleEndian[T int16 | float64](v []T, shape ...int) *ndarray.Array {
	a, err := ndarray.View(v, shape...) // the callers' slices are new each call
	if err != nil {
		panic(err) // the shapes above always fit
	}
	a, err = a.ToOrder('<')
	if err != nil {
		panic(err)
	}
	return a
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func optString(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func floatsOf(v any) []float64 {
	var out []float64
	for _, e := range v.([]any) {
		f, _ := number(e)
		out = append(out, f)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
