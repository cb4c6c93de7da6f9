package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/internal/yaqtoml"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/openpi"
)

const openpiUsage = `Usage: ndpack openpi [options] URL [OBS [ACTION]]
       ndpack openpi serve --addr HOST:PORT (--echo | --replay ACTIONS.npz) [--metadata FILE.json]

Talk to a robot policy server as openpi's WebsocketClientPolicy does
(websocket, arrays as openpi's msgpack_numpy maps), or serve a stand-in
policy that openpi's clients can call.

With URL alone (ws://HOST:PORT, wss://..., HOST:PORT, or PORT on
127.0.0.1), print the metadata the server sends. With OBS, send it as one observation and print
the action; with ACTION, also write the action there.

OBS is an .npz (each member an array; a name with "/" makes nested dicts:
"observation/image" is obs["observation"]["image"]) or a .msgpack/.mpk
map. ACTION is written as .npz (its arrays, nested keys joined with "/")
or as .msgpack/.mpk (the whole map, arrays as openpi's maps), by its
extension, whole or not at all. An .npz is not written (exit 1) when an
action key would make a member name that starts with "/", holds a ".."
element, or holds a control character (NUL among them) or invalid UTF-8.

Options:
  --json FILE     plain values to add to the observation: a JSON object,
                  such as {"prompt": "pick up the fork"}
  --repeat N      send the observation N times and print the latency of
                  the calls: min, median and p99
  --api-key KEY   send "Authorization: Api-Key KEY"
  --wait          wait for a server that is not listening yet
  --timeout D     give up after D (default 30s; 0 waits forever); with
                  --wait, for the server too
  --max-size N    the largest message to accept, in bytes (default 64 MiB)

serve answers on HOST:PORT (or PORT on 127.0.0.1; port 0 picks one,
printed first) until interrupted. It bounds what clients can take: their
messages share 4 times --max-size of memory (the Go runtime's memory
limit is set to that, the replayed actions and 128 MiB, unless GOMEMLIMIT
is set), a message that finds it in use waits 5 s and is refused with
status 1013 (try again later); at most 1024 connections (or three
quarters of the open-file limit), the one idle longest closed to make
room; idle connections are pinged every 20 s and closed after an hour,
or when a ping goes unanswered; a client that stops reading is cut off
after 20 s:
  --echo          answer each observation with itself (numpy scalars
                  come back as 0-d arrays)
  --replay FILE   answer each observation with FILE's arrays (.npz, names
                  with "/" nested as above)
  --metadata FILE send this JSON object as the server's metadata

Examples:
  ndpack openpi 127.0.0.1:8000
  ndpack openpi --json prompt.json 127.0.0.1:8000 obs.npz action.npz
  ndpack openpi --repeat 100 127.0.0.1:8000 obs.npz
  ndpack openpi serve --addr 127.0.0.1:8000 --replay actions.npz
`

func runOpenpi(e env, args []string) error {
	if len(args) > 0 && args[0] == "serve" {
		return runOpenpiServe(e, args[1:])
	}
	fs := flag.NewFlagSet("openpi", flag.ContinueOnError)
	jsonFile := fs.String("json", "", "")
	repeat := fs.Int("repeat", 1, "")
	apiKey := fs.String("api-key", "", "")
	wait := fs.Bool("wait", false, "")
	timeout := fs.Duration("timeout", 30*time.Second, "")
	maxSize := fs.Int64("max-size", 0, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usageError("name the server as URL or HOST:PORT")
	case len(pos) > 3:
		return usageError("too many arguments: want URL [OBS [ACTION]]")
	case *repeat < 1:
		return usageError("--repeat %d: want 1 or more", *repeat)
	case *timeout < 0:
		return usageError("--timeout %s: want a positive duration, or 0 for none", *timeout)
	case *maxSize < 0:
		return usageError("--max-size %d: want a positive size", *maxSize)
	case len(pos) == 1 && (*jsonFile != "" || *repeat != 1):
		return usageError("--json and --repeat go with an observation: name OBS")
	}
	obs, err := policyObservation(pos, *jsonFile)
	if err != nil {
		return err
	}
	ctx, cancel := callContext(*timeout)
	defer cancel()
	c, err := openpi.Dial(ctx, localPort(pos[0]), &openpi.DialOptions{APIKey: *apiKey, Wait: *wait, MaxSize: *maxSize})
	if err != nil {
		return serverError(e, err)
	}
	defer c.Close()
	if obs == nil {
		printValue(e.stdout, c.Metadata(), "")
		return nil
	}
	var (
		action map[string]any
		times  []time.Duration
		buf    openpi.ResultBuffer
	)
	for range *repeat {
		start := time.Now()
		if action, err = c.InferReusing(ctx, obs, &buf); err != nil {
			return serverError(e, err)
		}
		times = append(times, time.Since(start))
	}
	printValue(e.stdout, action, "")
	if *repeat > 1 {
		fmt.Fprintln(e.stdout, latencies(times))
	}
	if len(pos) > 2 {
		return writeMap(e, pos[2], action, dialect.OpenPI, "action")
	}
	return nil
}

// policyObservation checks a policy client's OBS and ACTION (pos[1] and
// pos[2], each an .npz or msgpack file) and reads OBS, with --json's
// values; nil when no OBS is named.
func policyObservation(pos []string, jsonFile string) (map[string]any, error) {
	if len(pos) < 2 {
		return nil, nil
	}
	if f := formatOf(pos[1]); f != formatNPZ && f != formatMsgpack {
		return nil, usageError("OBS must be an .npz or a .msgpack/.mpk file, got %q", pos[1])
	}
	if len(pos) > 2 {
		if f := formatOf(pos[2]); f != formatNPZ && f != formatMsgpack {
			return nil, usageError("ACTION must be an .npz or a .msgpack/.mpk file name, got %q", pos[2])
		}
	}
	return readObservation(pos[1], jsonFile)
}

// callContext is the context of a policy client's calls: ending after
// --timeout, or never when it is 0.
func callContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(context.Background(), timeout)
	}
	return context.WithCancel(context.Background())
}

// localPort makes a bare port 127.0.0.1:PORT, as yaq's command and yaqc
// take one; any other address is left as it is.
func localPort(addr string) string {
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return "127.0.0.1:" + addr
	}
	return addr
}

// latencies says how long calls took: their count, min, median and p99.
func latencies(times []time.Duration) string {
	slices.Sort(times)
	p99 := times[min(len(times)-1, (len(times)*99+99)/100-1)]
	return fmt.Sprintf("%d calls: min %s, median %s, p99 %s", len(times), ms(times[0]), ms(times[len(times)/2]), ms(p99))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond)) }

// serverError prints a server's traceback before the one-line error, which
// names its last line; both escaped, as the server's text may hold
// terminal escape sequences.
func serverError(e env, err error) error {
	var se *openpi.ServerError
	if errors.As(err, &se) {
		fmt.Fprint(e.stderr, peertext.Lines(strings.TrimRight(se.Traceback, "\n"))+"\n")
		return fmt.Errorf("openpi: server error: %s", se.LastLine)
	}
	return err
}

// readObservation reads OBS (.npz or msgpack map) and adds --json's values.
func readObservation(name, jsonFile string) (map[string]any, error) {
	var obs map[string]any
	if formatOf(name) == formatNPZ {
		arrays, err := npybridge.ReadOptions{}.ReadNPZFile(name)
		if err != nil {
			return nil, err
		}
		if obs, err = nestArrays(arrays); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	} else {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		// The file is the user's own, already read: it is held to its
		// own size, not the default limit on a message from a peer.
		if err := (ndpack.MessageOptions{MaxSize: int64(len(b))}).UnmarshalMessage(b, &obs); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if obs == nil {
			return nil, fmt.Errorf("%s: not a msgpack map of named values", name)
		}
	}
	if jsonFile == "" {
		return obs, nil
	}
	b, err := os.ReadFile(jsonFile)
	if err != nil {
		return nil, err
	}
	values, err := jsonObject(b)
	if err != nil {
		return nil, fmt.Errorf("--json %s: %w", jsonFile, err)
	}
	for k, v := range values {
		obs[k] = v
	}
	return obs, nil
}

// jsonObject decodes a JSON object with integers as int64 (as Python's
// json reads them) and other numbers as float64.
func jsonObject(b []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	return yaqtoml.FromJSON(m).(map[string]any), nil // whole numbers as int64, others float64
}

// nestArrays makes the members of an npz a map, names with "/" nested.
func nestArrays(arrays []npybridge.NamedArray) (map[string]any, error) {
	obs := map[string]any{}
	for _, a := range arrays {
		parts := strings.Split(a.Name, "/")
		m := obs
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				if _, taken := m[p]; taken {
					return nil, fmt.Errorf("member %q nests under %q, which is an array", a.Name, p)
				}
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		last := parts[len(parts)-1]
		if _, taken := m[last]; taken {
			return nil, fmt.Errorf("member %q: that name holds nested members too", a.Name)
		}
		m[last] = a.Array
	}
	return obs, nil
}

// flattenArrays lists the arrays of an action, nested keys joined with
// "/", in sorted order.
func flattenArrays(prefix string, m map[string]any, out []npybridge.NamedArray) []npybridge.NamedArray {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := m[k].(type) {
		case *ndarray.Array:
			out = append(out, npybridge.NamedArray{Name: prefix + k, Array: v})
		case map[string]any:
			out = flattenArrays(prefix+k+"/", v, out)
		}
	}
	return out
}

// writeMap writes a map a server answered (an action, an info) to name,
// whole: as .npz (its arrays, nested keys joined with "/"), as msgpack
// (the whole map, arrays in the dialect enc), or, for a name ending in
// .json, as one line of JSON (arrays as {"dtype", "shape", "values"}).
// what names the map in errors.
func writeMap(e env, name string, m map[string]any, enc dialect.Dialect, what string) error {
	var data []byte
	switch {
	case strings.HasSuffix(strings.ToLower(name), ".json"):
		var b bytes.Buffer
		if err := writeJSONLine(&b, m); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		data = b.Bytes()
	case formatOf(name) == formatNPZ:
		arrays := flattenArrays("", m, nil)
		if len(arrays) == 0 {
			return fmt.Errorf("%s: the %s holds no array to write", name, what)
		}
		for _, a := range arrays {
			if err := checkMemberName(a.Name, "the server's "+what+" key"); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
		var b bytes.Buffer
		if err := npybridge.WriteNPZ(&b, arrays, false); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		data = b.Bytes()
	default:
		var err error
		if data, err = (ndpack.MessageOptions{Encoding: enc}).MarshalMessage(m); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	out, err := openOutput(e, name)
	if err != nil {
		return err
	}
	if _, err := out.w.Write(data); err != nil {
		out.abort()
		return err
	}
	return out.commit()
}

func runOpenpiServe(e env, args []string) error {
	fs := flag.NewFlagSet("openpi serve", flag.ContinueOnError)
	addr := fs.String("addr", "", "")
	echo := fs.Bool("echo", false, "")
	replay := fs.String("replay", "", "")
	metaFile := fs.String("metadata", "", "")
	maxSize := fs.Int64("max-size", 0, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError("serve takes no arguments besides its options, got %q", pos[0])
	case *addr == "":
		return usageError("serve needs --addr HOST:PORT")
	case *echo == (*replay != ""):
		return usageError("serve needs one of --echo and --replay FILE")
	case *replay != "" && formatOf(*replay) != formatNPZ:
		return usageError("--replay needs an .npz file, got %q", *replay)
	case *maxSize < 0:
		return usageError("--max-size %d: want a positive size", *maxSize)
	}
	s := &openpi.Server{MaxSize: *maxSize, ErrorLog: log.New(e.stderr, "ndpack openpi serve: ", log.LstdFlags)}
	held := int64(128 << 20) // beyond the messages' budget: the runtime, the replayed actions
	if *metaFile != "" {
		b, err := os.ReadFile(*metaFile)
		if err != nil {
			return err
		}
		if s.Metadata, err = jsonObject(b); err != nil {
			return fmt.Errorf("--metadata %s: %w", *metaFile, err)
		}
	}
	if *echo {
		s.Policy = openpi.Echo
	} else {
		arrays, err := npybridge.ReadOptions{}.ReadNPZFile(*replay)
		if err != nil {
			return err
		}
		action, err := nestArrays(arrays)
		if err != nil {
			return fmt.Errorf("%s: %w", *replay, err)
		}
		s.Policy = openpi.PolicyFunc(func(context.Context, map[string]any) (map[string]any, error) { return action, nil })
		for _, a := range arrays {
			held += int64(len(a.Array.Data))
		}
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		// Without a limit the collector lets the heap grow to twice what is
		// live: with it, the process stays near the budget it keeps.
		size := *maxSize
		if size == 0 {
			size = ndarray.DefaultMaxSize
		}
		debug.SetMemoryLimit(4*size + held)
	}
	l, err := net.Listen("tcp", localPort(*addr))
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "serving on ws://%s\n", l.Addr())
	if f, ok := e.stdout.(interface{ Sync() error }); ok {
		f.Sync()
	}
	return s.Serve(context.Background(), l)
}
