package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/gr00tpolicy"
	"github.com/ndpack/ndpack/internal/peertext"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

const gr00tUsage = `Usage: ndpack gr00t [options] HOST:PORT [OBS [ACTION]]
       ndpack gr00t serve --addr HOST:PORT (--echo | --replay ACTIONS.npz) [--modality FILE.json] [--token T]

Talk to a GR00T policy server as NVIDIA Isaac GR00T's PolicyClient does
(ZeroMQ REQ over TCP, each array the bytes of an .npy file inside a
msgpack map), or serve a stand-in policy that GR00T's clients can call.

With HOST:PORT alone (tcp://HOST:PORT, or PORT on 127.0.0.1), ping the
server and print its modality config. With OBS, send it to get_action
and print the action and the info; with ACTION, also write the action
there.

OBS is an .npz (each member an array; a name with "/" makes nested maps:
"video/cam0" is obs["video"]["cam0"]) or a .msgpack/.mpk map. ACTION is
written as .npz (its arrays, nested keys joined with "/") or as
.msgpack/.mpk (the whole map, arrays as GR00T writes them), by its
extension, whole or not at all.

Options:
  --json FILE     plain values to add to the observation: a JSON object,
                  such as {"language": {"annotation.human.task_description":
                  "pick up the fork"}}
  --info FILE     write the info to FILE (.json, .npz or .msgpack/.mpk)
                  instead of printing it
  --repeat N      send the observation N times and print the latency of
                  the calls: min, median and p99
  --token T       send T as the requests' api_token
  --wait          wait for a server that is not listening yet
  --timeout D     give up after D (default 30s; 0 waits forever); with
                  --wait, for the server too
  --max-size SIZE the largest answer to accept (default 64M)

serve answers on HOST:PORT (or PORT on 127.0.0.1; port 0 picks one,
printed first) until interrupted, or until a client sends kill. It
answers requests one at a time, as GR00T's PolicyServer does, and bounds
what clients can take: each request --max-size, their requests and
answers together 4 times that (the Go runtime's memory limit is set to
that, the replayed actions and 128 MiB, unless GOMEMLIMIT is set), at most
1024 connections (or three quarters of the open-file limit), the one idle
longest closed to make room; a client that stops reading is cut off after
20 s. Failures are answered {"error": TEXT}, as GR00T's server answers:
  --echo          answer each observation with itself, and an empty info
  --replay FILE   answer each observation with FILE's arrays (.npz, names
                  with "/" nested as above), and an empty info
  --modality FILE answer get_modality_config with FILE: a JSON object of
                  modality names to ModalityConfig fields, such as
                  {"video": {"delta_indices": [0], "modality_keys":
                  ["video.cam0"]}}
  --token T       answer requests without api_token T with GR00T's
                  "Unauthorized: Invalid API token"

Examples:
  ndpack gr00t 127.0.0.1:5555
  ndpack gr00t --json task.json 127.0.0.1:5555 obs.npz action.npz
  ndpack gr00t --repeat 100 127.0.0.1:5555 obs.npz
  ndpack gr00t serve --addr 127.0.0.1:5555 --replay actions.npz --modality modality.json
`

func runGr00t(e env, args []string) error {
	if len(args) > 0 && args[0] == "serve" {
		return runGr00tServe(e, args[1:])
	}
	fs := flag.NewFlagSet("gr00t", flag.ContinueOnError)
	jsonFile := fs.String("json", "", "")
	infoFile := fs.String("info", "", "")
	repeat := fs.Int("repeat", 1, "")
	token := fs.String("token", "", "")
	wait := fs.Bool("wait", false, "")
	timeout := fs.Duration("timeout", 30*time.Second, "")
	var maxSize byteSize
	fs.Var(&maxSize, "max-size", "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usageError("name the server as HOST:PORT")
	case len(pos) > 3:
		return usageError("too many arguments: want HOST:PORT [OBS [ACTION]]")
	case *repeat < 1:
		return usageError("--repeat %d: want 1 or more", *repeat)
	case *timeout < 0:
		return usageError("--timeout %s: want a positive duration, or 0 for none", *timeout)
	case len(pos) == 1 && (*jsonFile != "" || *repeat != 1 || *infoFile != ""):
		return usageError("--json, --info and --repeat go with an observation: name OBS")
	case *infoFile != "" && !strings.HasSuffix(strings.ToLower(*infoFile), ".json") && formatOf(*infoFile) != formatNPZ && formatOf(*infoFile) != formatMsgpack:
		return usageError("--info must name a .json, .npz or .msgpack/.mpk file, got %q", *infoFile)
	}
	obs, err := policyObservation(pos, *jsonFile)
	if err != nil {
		return err
	}
	ctx, cancel := callContext(*timeout)
	defer cancel()
	c, err := gr00tpolicy.Dial(ctx, pos[0], &gr00tpolicy.DialOptions{Token: *token, Wait: *wait, MaxSize: int64(maxSize)})
	if err != nil {
		return err
	}
	defer c.Close()
	if obs == nil {
		return gr00tStatus(ctx, e, c)
	}
	var (
		action, info map[string]any
		times        []time.Duration
	)
	for range *repeat {
		start := time.Now()
		if action, info, err = c.GetAction(ctx, obs, nil); err != nil {
			return err
		}
		times = append(times, time.Since(start))
	}
	fmt.Fprint(e.stdout, "action:")
	printValue(e.stdout, action, " ")
	if *infoFile == "" {
		fmt.Fprint(e.stdout, "info:")
		printValue(e.stdout, info, " ")
	}
	if *repeat > 1 {
		fmt.Fprintln(e.stdout, latencies(times))
	}
	if len(pos) > 2 {
		if err := writeMap(e, pos[2], action, dialect.GR00T, "action"); err != nil {
			return err
		}
	}
	if *infoFile != "" {
		return writeMap(e, *infoFile, info, dialect.GR00T, "info")
	}
	return nil
}

// gr00tStatus pings the server and prints its modality config.
func gr00tStatus(ctx context.Context, e env, c *gr00tpolicy.Client) error {
	start := time.Now()
	if err := c.Ping(ctx); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "ping: ok (%s)\n", ms(time.Since(start)))
	mc, err := c.ModalityConfig(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(mc))
	for name := range mc {
		names = append(names, name)
	}
	sort.Strings(names)
	if len(names) == 0 {
		fmt.Fprintln(e.stdout, "modality config: none")
	}
	for _, name := range names {
		b, err := json.Marshal(mc[name])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s: %s\n", peertext.Quote(name), peertext.JSON(b))
	}
	return nil
}

func runGr00tServe(e env, args []string) error {
	fs := flag.NewFlagSet("gr00t serve", flag.ContinueOnError)
	addr := fs.String("addr", "", "")
	echo := fs.Bool("echo", false, "")
	replay := fs.String("replay", "", "")
	modalityFile := fs.String("modality", "", "")
	token := fs.String("token", "", "")
	var maxSize byteSize
	fs.Var(&maxSize, "max-size", "")
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
	}
	s := &gr00tpolicy.Server{MaxSize: int64(maxSize), Token: *token, ErrorLog: log.New(e.stderr, "ndpack gr00t serve: ", log.LstdFlags)}
	held := int64(128 << 20) // beyond the messages' budget: the runtime, the replayed actions
	if *modalityFile != "" {
		if s.Modality, err = readModality(*modalityFile); err != nil {
			return err
		}
	}
	if *echo {
		s.Policy = gr00tpolicy.Echo
	} else {
		arrays, err := npybridge.ReadOptions{}.ReadNPZFile(*replay)
		if err != nil {
			return err
		}
		action, err := nestArrays(arrays)
		if err != nil {
			return fmt.Errorf("%s: %w", *replay, err)
		}
		s.Policy = replayPolicy{action}
		for _, a := range arrays {
			held += int64(len(a.Array.Data))
		}
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		size := int64(maxSize)
		if size == 0 {
			size = ndarray.DefaultMaxSize
		}
		debug.SetMemoryLimit(4*size + held)
	}
	l, err := net.Listen("tcp", localPort(strings.TrimPrefix(*addr, "tcp://")))
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "serving on tcp://%s\n", l.Addr())
	if f, ok := e.stdout.(interface{ Sync() error }); ok {
		f.Sync()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = s.Serve(ctx, l)
	if errors.Is(err, gr00tpolicy.ErrKilled) {
		fmt.Fprintln(e.stdout, "stopped by a kill request")
		return nil
	}
	return err
}

// replayPolicy answers every observation with the same action.
type replayPolicy struct{ action map[string]any }

func (p replayPolicy) GetAction(context.Context, map[string]any, map[string]any) (map[string]any, map[string]any, error) {
	return p.action, map[string]any{}, nil
}

func (replayPolicy) Reset(context.Context, map[string]any) (map[string]any, error) {
	return map[string]any{}, nil
}

// readModality reads --modality's file: modality names to ModalityConfig
// fields, each checked as GR00T's ModalityConfig checks them.
func readModality(name string) (map[string]gr00tpolicy.ModalityConfig, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	var m map[string]gr00tpolicy.ModalityConfig
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("--modality %s: %v", name, err)
	}
	for k, mc := range m {
		if err := mc.Check(); err != nil {
			return nil, fmt.Errorf("--modality %s: %s: %w", name, peertext.Quote(k), err)
		}
	}
	return m, nil
}
