package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ndpack/ndpack/internal/yaqtoml"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/yaq"
)

const yaqUsage = `Usage: ndpack yaq [options] [HOST:]PORT [METHOD [ARG...]]

Talk to a yaq daemon (Avro RPC, as yaqd-core daemons and yaqc speak it).
With no METHOD, show the daemon: its name, kind, traits and messages with
their parameters and results. With METHOD, call it with the ARGs, each a
JSON value (5, 2.5, true, "text", [1, 2], null), and print the result,
arrays summarised as 'ndpack inspect' shows them. A bare PORT means
127.0.0.1:PORT, as yaqc takes it.

Options:
  --save FILE     write the result's arrays to FILE: .npz (one member per
                  array, named by its key), or .npy for a single array;
                  .png draws the 2-D array of the answer, .svg plots a
                  1-D one (FILE.png:NAME picks one), rewritten atomically
                  on each --watch update
  --watch D       call again every D (1s, 500ms) and show the values as
                  they change, until Ctrl-C (on a terminal the screen is
                  redrawn)
  --timeout D     give up on a call after D (default 10s; 0 waits forever)
  --max-size N    accept answers of up to N bytes (default 64MiB; 512KiB,
                  2GiB, or a plain number of bytes)
  --json          print the result as one line of JSON, arrays as
                  {"dtype", "shape", "values"} with the values nested by
                  the shape (NaN and infinities as "NaN", "+Inf", "-Inf"),
                  for jq and other tools

Examples:
  ndpack yaq 127.0.0.1:39111
  ndpack yaq 39111 measure
  ndpack yaq --json 39111 get_measured | jq .measurement_id
  ndpack yaq --save image.npy 127.0.0.1:39111 get_measured
  ndpack yaq 127.0.0.1:39115 set_position 0.5
  ndpack yaq --watch 1s 127.0.0.1:39115 get_position
`

// yaqCommand is a checked yaq command line.
type yaqCommand struct {
	addr     string
	method   string // "" to describe the daemon
	params   []any
	save     string
	watch    time.Duration
	timeout  time.Duration
	asJSON   bool
	dialOpts yaq.DialOptions
}

func runYaq(e env, args []string) error {
	y, err := parseYaq(args)
	if err != nil {
		return err
	}
	if err := y.run(e); err != nil {
		return peerError{err}
	}
	return nil
}

// parseYaq checks the whole command line before the daemon is called: a
// call may move an instrument, and must not happen for a command that
// then fails.
func parseYaq(args []string) (*yaqCommand, error) {
	fs := flag.NewFlagSet("yaq", flag.ContinueOnError)
	y := &yaqCommand{}
	fs.StringVar(&y.save, "save", "", "")
	fs.DurationVar(&y.watch, "watch", 0, "")
	fs.DurationVar(&y.timeout, "timeout", 10*time.Second, "")
	var maxSize byteSize
	fs.Var(&maxSize, "max-size", "")
	fs.BoolVar(&y.asJSON, "json", false, "")
	// Arguments after the method are JSON values, some of which ("-1")
	// look like flags: only what comes before HOST:PORT is parsed, and
	// after it the command's own flags spelled in full ("--save FILE",
	// "--watch=1s"), which no JSON value is.
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return nil, err
		}
		return nil, usageError("%v", err)
	}
	pos, late := splitLateFlags(fs.Args())
	if len(late) > 0 {
		if err := fs.Parse(late); err != nil {
			return nil, usageError("%v", err)
		}
	}
	if len(pos) == 0 {
		return nil, usageError("name the daemon as HOST:PORT, or PORT on 127.0.0.1")
	}
	y.addr, pos = pos[0], pos[1:]
	if _, err := strconv.ParseUint(y.addr, 10, 16); err == nil {
		y.addr = "127.0.0.1:" + y.addr // as yaqc takes a bare port
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case y.save != "" && len(pos) == 0:
		return nil, usageError("--save writes the result of a call: name a METHOD")
	case y.save != "" && formatOf(y.save) != formatNPY && formatOf(y.save) != formatNPZ && !isImageSave(y.save):
		return nil, usageError("--save needs a .npy or .npz file name (or .png for an image, .svg for a 1-D plot), got %q", y.save)
	case set["watch"] && y.watch <= 0:
		return nil, usageError("--watch %s: the interval must be positive", y.watch)
	case y.watch > 0 && len(pos) == 0:
		return nil, usageError("--watch repeats a call: name a METHOD")
	case y.timeout < 0:
		return nil, usageError("--timeout %s: want a positive duration, or 0 for none", y.timeout)
	}
	y.dialOpts.MaxSize = int64(maxSize)
	if y.save != "" {
		if fi, err := os.Stat(filepath.Dir(y.save)); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("--save %s: its directory does not exist", y.save)
		}
	}
	if len(pos) > 0 {
		y.method = pos[0]
	}
	for i, a := range pos[min(1, len(pos)):] {
		dec := json.NewDecoder(strings.NewReader(a))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, usageError("argument %d (%q) is not a JSON value (a string needs its quotes: '\"text\"')", i+1, a)
		}
		y.params = append(y.params, yaqtoml.FromJSON(v)) // a misfit named in Avro's words: a double, not a json.Number
	}
	return y, nil
}

// withTimeout is the context of one exchange with the daemon.
func (y *yaqCommand) withTimeout() (context.Context, context.CancelFunc) {
	if y.timeout == 0 {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), y.timeout)
}

// run describes the daemon, or calls the method (every --watch interval).
func (y *yaqCommand) run(e env) error {
	ctx, cancel := y.withTimeout()
	c, err := yaq.Dial(ctx, y.addr, &y.dialOpts)
	cancel()
	if err != nil {
		return fmt.Errorf("%s: %w", y.addr, awaited(err, "its handshake", y.timeout))
	}
	defer c.Close()
	if y.method == "" {
		return describeDaemon(e.stdout, c, y.withTimeout)
	}
	for first := true; ; first = false {
		if !first {
			time.Sleep(y.watch)
		}
		if err := y.callOnce(e, c); err != nil {
			return err
		}
		if y.watch == 0 {
			return nil
		}
		if !e.stdoutTerminal && !y.asJSON {
			fmt.Fprintln(e.stdout)
		}
	}
}

// callOnce calls the method, prints the result and saves it (--save).
func (y *yaqCommand) callOnce(e env, c *yaq.Client) error {
	ctx, cancel := y.withTimeout()
	var result any
	err := c.Call(ctx, y.method, y.params, &result)
	cancel()
	if errors.Is(err, ndarray.ErrTooLarge) {
		return fmt.Errorf("%s: %w (raise the limit with --max-size)", y.addr, err)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", y.addr, awaited(err, "the answer to "+y.method, y.timeout))
	}
	var out bytes.Buffer
	if y.watch > 0 {
		if e.stdoutTerminal {
			out.WriteString("\x1b[H\x1b[2J")
		}
		fmt.Fprintf(&out, "%s %s every %s, %s\n", y.addr, y.method, y.watch, time.Now().Format("15:04:05.000"))
	}
	if y.asJSON {
		var line bytes.Buffer
		if err := writeJSONLine(&line, result); err != nil {
			return fmt.Errorf("%s: %s: %w", y.addr, y.method, err)
		}
		out.Write(peertext.JSON(line.Bytes()))
	} else if text, ok := result.(string); ok && strings.Contains(text, "\n") {
		// A text answer (get_config's TOML, a doc) is printed as the
		// daemon wrote it, to be read or saved as it is, but for the
		// control characters in it.
		text = peertext.Lines(text)
		out.WriteString(text)
		if !strings.HasSuffix(text, "\n") {
			out.WriteByte('\n')
		}
	} else {
		printValue(&out, result, "")
	}
	e.stdout.Write(out.Bytes())
	if y.save != "" {
		return saveArrays(y.save, y.method, result)
	}
	return nil
}

// awaited says what a call that ran out of time waited for, from whom
// and for how long, instead of Go's "context deadline exceeded".
func awaited(err error, what string, timeout time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("waited %s (--timeout) for %s, which did not come", timeout, what)
	}
	return err
}

// describeDaemon prints who the daemon is and what it answers.
func describeDaemon(w io.Writer, c *yaq.Client, withTimeout func() (context.Context, context.CancelFunc)) error {
	p := c.Protocol()
	ctx, cancel := withTimeout()
	defer cancel()
	var id map[string]any
	if p.Messages["id"] != nil {
		if err := c.Call(ctx, "id", nil, &id); err != nil {
			return err
		}
	}
	// Everything below is the daemon's word: its protocol and its id.
	fmt.Fprintf(w, "%s: a %s daemon\n", peertext.Line(fmt.Sprint(id["name"])), peertext.Line(p.Name))
	for _, k := range []string{"make", "model", "serial"} {
		if id[k] != nil {
			fmt.Fprintf(w, "  %-6s %s\n", k, peertext.Line(fmt.Sprint(id[k])))
		}
	}
	fmt.Fprintf(w, "traits: %s\n\nmessages:\n", peertext.Line(strings.Join(p.Traits, ", ")))
	names := make([]string, 0, len(p.Messages))
	for name := range p.Messages {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m := p.Messages[name]
		var params []string
		for _, f := range m.Request {
			s := f.Name + ": " + f.Type.String()
			if f.HasDefault {
				d, _ := json.Marshal(f.Default)
				s += " = " + string(d)
			}
			params = append(params, s)
		}
		fmt.Fprintf(w, "  %s(%s) -> %s\n", peertext.Line(name), peertext.Line(strings.Join(params, ", ")), peertext.Line(m.Response.String()))
		if m.Doc != "" {
			fmt.Fprintf(w, "      %s\n", peertext.Line(oneLine(m.Doc)))
		}
	}
	return nil
}

// printValue prints a call's result: maps key by key, arrays summarised.
func printValue(w io.Writer, v any, indent string) {
	switch x := v.(type) {
	case *ndarray.Array:
		fmt.Fprintf(w, "%s\n", arraySummary(x))
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if indent != "" || len(keys) == 0 {
			fmt.Fprintln(w)
		}
		for _, k := range keys {
			fmt.Fprintf(w, "%s%s: ", indent+"  ", peertext.Quote(k))
			printValue(w, x[k], indent+"  ")
		}
	default:
		b, err := json.Marshal(v)
		if err != nil {
			b = []byte(fmt.Sprint(v))
		}
		fmt.Fprintf(w, "%s\n", peertext.Line(string(b)))
	}
}

// arraySummary is one line about an array: dtype, shape, statistics and
// the first values, as inspect shows them.
func arraySummary(a *ndarray.Array) string {
	acc := newAccumulator(a.DType)
	acc.add(a.Data)
	first := newFirstCapture(a.DType, a.Shape, false, 4)
	first.add(a.Data, 0)
	var parts []string
	if s := acc.result(); s != nil {
		switch {
		case s.True != nil:
			parts = append(parts, fmt.Sprintf("True %d, False %d", *s.True, *s.False))
		case s.Min != nil:
			parts = append(parts, fmt.Sprintf("min %s, max %s", s.Min.text(), s.Max.text()))
		}
		if s.Mean != nil {
			parts = append(parts, "mean "+s.Mean.text())
		}
	}
	var firsts []string
	for _, v := range first.values(a.DType) {
		firsts = append(firsts, v.text())
	}
	more := ""
	if a.Len() > len(firsts) {
		more = " ..."
	}
	parts = append(parts, "["+strings.Join(firsts, " ")+more+"]")
	return a.String() + ": " + strings.Join(parts, "; ")
}

// saveArrays writes the arrays of a result to name: .npy for one, .npz for
// any number, named by their keys, the numbers and booleans beside them
// (measurement_id) as 0-d members, as np.savez keeps Python scalars.
func saveArrays(name, method string, result any) error {
	if isImageSave(name) {
		return saveImage(name, method, result) // render.go
	}
	var arrays []npybridge.NamedArray
	switch x := result.(type) {
	case *ndarray.Array:
		arrays = append(arrays, npybridge.NamedArray{Name: method, Array: x})
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if a := asArray(x[k]); a != nil {
				if err := checkMemberName(k, "the daemon's key"); err != nil && formatOf(name) == formatNPZ {
					return err
				}
				arrays = append(arrays, npybridge.NamedArray{Name: k, Array: a})
			}
		}
	}
	if len(arrays) == 0 {
		return fmt.Errorf("%s answered no array to save", method)
	}
	if formatOf(name) == formatNPY {
		arrays = slices.DeleteFunc(arrays, func(a npybridge.NamedArray) bool { return a.Array.NDim() == 0 })
		if len(arrays) == 0 {
			return fmt.Errorf("%s answered only numbers, no array: save them as .npz (each a 0-d member)", method)
		}
	}
	switch formatOf(name) {
	case formatNPY:
		if len(arrays) != 1 {
			return fmt.Errorf("%s answered %d arrays (%s): save them as .npz", method, len(arrays), namedList(arrays))
		}
		return npybridge.WriteFile(name, arrays[0].Array)
	case formatNPZ:
		return npybridge.WriteNPZFile(name, arrays, false)
	}
	return usageError("--save needs a .npy or .npz file name, got %q", name)
}

func namedList(arrays []npybridge.NamedArray) string {
	var s []string
	for _, a := range arrays {
		s = append(s, a.Name)
	}
	return strings.Join(s, ", ")
}

// splitLateFlags takes the command's flags that follow HOST:PORT out of
// args: "--save", "--watch", "--timeout" and "--max-size", with their
// value as the next argument or after "=".
func splitLateFlags(args []string) (rest, flags []string) {
	for i := 0; i < len(args); i++ {
		name, _, hasValue := strings.Cut(args[i], "=")
		switch name {
		case "--save", "--watch", "--timeout", "--max-size":
			flags = append(flags, args[i])
			if !hasValue && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
			continue
		}
		rest = append(rest, args[i])
	}
	return rest, flags
}

// asArray is v as an array: itself, or a number or boolean of an answer as
// a 0-d array of its Avro type (long as <i8, double as <f8, ...); nil for
// anything else.
func asArray(v any) *ndarray.Array {
	switch x := v.(type) {
	case *ndarray.Array:
		return x
	case bool:
		return ndarray.Scalar(x)
	case int32:
		return ndarray.Scalar(x)
	case int64:
		return ndarray.Scalar(x)
	case int:
		return ndarray.Scalar(int64(x))
	case float32:
		return ndarray.Scalar(x)
	case float64:
		return ndarray.Scalar(x)
	}
	return nil
}

// peerError is an error whose text may hold what a peer said (a yaq
// error's message, a protocol's names), printed escaped as peerLine does,
// while errors.Is and errors.As still see its cause.
type peerError struct{ err error }

func (e peerError) Error() string { return peertext.Line(e.err.Error()) }
func (e peerError) Unwrap() error { return e.err }
