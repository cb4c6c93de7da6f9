// Command ndpack converts N-dimensional arrays between NumPy .npy and .npz
// files and msgpack (extension type 110 of YEP-110, and the msgpack-numpy and
// OpenPI maps), shows what is inside them, and talks to yaq daemons.
//
// Usage:
//
//	ndpack convert [--allow-nonstandard] [--from FMT] [--to FMT] [--compress] IN OUT
//	ndpack inspect [--json] FILE...
//	ndpack refs [--chunk-rows N] [--stack NAME] INPUT... > refs.json
//	ndpack show [--full] [--precision N] [--rows A:B] [--csv|--json] FILE...
//	ndpack render [options] IN OUT.png|OUT.svg
//	ndpack create [--force] --dtype DTYPE --shape D1,D2,... OUT.npy
//	ndpack diff [--rtol R] [--atol A] [--equal-nan] A B
//	ndpack yaq [options] [HOST:]PORT [METHOD [ARG...]]
//	ndpack openpi [options] URL [OBS [ACTION]]
//	ndpack openpi serve --addr HOST:PORT (--echo | --replay ACTIONS.npz)
//	ndpack gr00t [options] HOST:PORT [OBS [ACTION]]
//	ndpack gr00t serve --addr HOST:PORT (--echo | --replay ACTIONS.npz)
//	ndpack demo [--keep]
//	ndpack help [COMMAND]
//
// Formats follow the file extensions: .npy, .npz, and .msgpack or .mpk (one
// msgpack document: an ext 110 object, or for an npz a map of names to ext
// 110 objects). "-" is standard input or output, with --from or --to naming
// the format. Run "ndpack help COMMAND" for examples.
//
// Exit status: 0 on success, 1 when the work failed (one line on standard
// error says which file and what was wrong), 2 when the command line was
// wrong. A failed convert leaves no output file and never touches an
// existing one.
package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ndarray"
)

// errUsage marks errors in how the command was called: exit status 2.
var errUsage = errors.New("usage")

func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// env is what a command may touch, so that tests can run it in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	terminal       bool          // stderr is a terminal: show progress
	stdoutTerminal bool          // stdout is a terminal: redraw watched values
	progressAfter  time.Duration // 0 means progressAfter
	cleanup        *cleanups     // undone on SIGINT and SIGTERM; nil in tests
}

type command struct {
	name, summary, usage string
	run                  func(e env, args []string) error
}

func commands() []command {
	return []command{
		{"convert", "convert arrays between .npy, .npz and msgpack (ext 110, msgpack-numpy and OpenPI maps)", convertUsage, runConvert},
		{"inspect", "show the dtype, shape and statistics of arrays in files", inspectUsage, runInspect},
		{"refs", "write references that let Zarr, xarray and Dask read .npy and .npz files in place", refsUsage, runRefs},
		{"show", "print the values of arrays as numpy prints them (or as CSV, JSON)", showUsage, runShow},
		{"render", "draw an array: 2-D as a PNG image, 1-D as an SVG line plot", renderUsage, runRender},
		{"create", "create a zero-filled .npy for processes to fill in place", createUsage, runCreate},
		{"diff", "compare the arrays of two files: exit 0 if equal, 1 with a report if not", diffUsage, runDiff},
		{"yaq", "show a yaq daemon, call its methods, save the arrays they answer", yaqUsage, runYaq},
		{"openpi", "call a robot policy server (openpi websocket), or serve a stand-in", openpiUsage, runOpenpi},
		{"gr00t", "call a GR00T policy server (ZeroMQ, .npy inside msgpack), or serve a stand-in", gr00tUsage, runGr00t},
		{"demo", "write a sample array both ways, convert each into the other, compare", demoUsage, runDemo},
	}
}

func main() {
	c := &cleanups{}
	onInterrupt(c)
	os.Exit(run(env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, terminal: isTerminal(os.Stderr), stdoutTerminal: isTerminal(os.Stdout), cleanup: c}, os.Args[1:]))
}

// run executes the command line and returns the exit status.
func run(e env, args []string) int {
	if len(args) == 0 {
		printHelp(e.stderr)
		return 2
	}
	name := args[0]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		if len(args) > 1 {
			if c, ok := lookup(args[1]); ok {
				fmt.Fprint(e.stdout, c.usage)
				return 0
			}
			fmt.Fprintf(e.stderr, "ndpack: unknown command %s%s; run 'ndpack help'\n", oneLine(quoteArg(args[1])), didYouMean(args[1], commandNames()[2:], ""))
			return 2
		}
		printHelp(e.stdout)
		return 0
	}
	if name == "--version" || name == "-version" || name == "version" {
		if len(args) > 1 {
			fmt.Fprintf(e.stderr, "ndpack version: takes no arguments\n")
			return 2
		}
		fmt.Fprint(e.stdout, versionText())
		return 0
	}
	c, ok := lookup(name)
	if !ok {
		fmt.Fprintf(e.stderr, "ndpack: unknown command %s%s; run 'ndpack help'\n", oneLine(quoteArg(name)), didYouMean(strings.TrimLeft(name, "-"), commandNames(), ""))
		return 2
	}
	err := c.run(e, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errReported):
		return 1
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(e.stdout, c.usage)
		return 0
	case errors.Is(err, errTrouble):
		fmt.Fprintf(e.stderr, "ndpack: %s\n", oneLine(describe("", err)))
		return 2
	case errors.Is(err, errUsage):
		fmt.Fprintf(e.stderr, "ndpack %s: %s\nRun 'ndpack help %s' for usage.\n", name, oneLine(boundArgs(strings.TrimPrefix(err.Error(), "usage: "), args[1:])), name)
		return 2
	default:
		fmt.Fprintf(e.stderr, "ndpack: %s\n", oneLine(describe("", err)))
		return 1
	}
}

func lookup(name string) (command, bool) {
	for _, c := range commands() {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// oneLine makes a message the single line the contract promises, fit to
// be shown whatever produced it: runs of white space become one space,
// URLs lose their user, password, query and fragment (redactURLs), and
// control characters are escaped (escapeText). Every line ndpack writes
// on standard error passes through it.
func oneLine(s string) string {
	return peertext.Line(redactURLs(strings.Join(strings.Fields(s), " ")))
}

func printHelp(w io.Writer) {
	fmt.Fprint(w, `ndpack moves N-dimensional arrays losslessly between NumPy .npy/.npz
files, msgpack (ext 110 of YEP-110, and the msgpack-numpy and OpenPI maps
Python services send) and yaq daemons.

Usage: ndpack COMMAND [ARGS]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Files may be URLs: http://, https:// and s3://BUCKET/KEY objects are read
by Range requests, a large one in parts of 8 MiB, 8 at once, and s3://
outputs are uploaded the same way; --part-size SIZE and --concurrency N
change that on every command that takes URLs.

Run 'ndpack help COMMAND' for a command's options and examples, and
'ndpack --version' for the version and the formats it writes.
`)
}

// parseFlags parses flags that may stand before, between or after the
// positional arguments, which it returns.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, unknownFlag(fs, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// describe says what went wrong with the file name in one message that names
// it once: an error that already names it (an *os.PathError) is unwrapped,
// and library errors that would tell a Go programmer which option to set
// name the command-line flag instead. URLs in it show no user, password,
// query or fragment.
func describe(name string, err error) string {
	if pe, ok := err.(*os.PathError); ok {
		name, err = pe.Path, pe.Err // it names the file it is about
	}
	msg := withFlags(err)
	if errors.Is(err, dialect.ErrPickle) && !strings.Contains(msg, "--objects") {
		msg += " (--objects reads it, running nothing in the pickle)"
	}
	if name != "" && name != "-" {
		msg = displayName(name) + ": " + msg
	}
	return redactURLs(msg) // no credentials in messages, wherever a URL came from
}

// flagOf is the command's flag for each library option its errors name.
var flagOf = map[string]string{
	"ReadOptions.MaxObjectsSize":    "--max-objects-size",
	"ReadOptions.MaxHeaderSize":     "--max-header-size",
	"ReadOptions.AllowObjects":      "--objects",
	"Options.AllowNonstandard":      "--allow-nonstandard",
	"ArrayOptions.AllowNonstandard": "--allow-nonstandard",
	"ConvertOptions.MaxSize":        "--max-size",
}

// withFlags is err's message, with the library option that decided it (an
// *ndarray.Error's Option) named by the command's flag for it: the typed
// error's own rendering is swapped for its rendering with the flag, so
// that no other text of the message is touched.
func withFlags(err error) string {
	msg := err.Error()
	var ne *ndarray.Error
	if errors.As(err, &ne) && flagOf[ne.Option] != "" {
		flagged := *ne
		flagged.Option = flagOf[ne.Option]
		msg = strings.Replace(msg, ne.Error(), flagged.Error(), 1)
	}
	return msg
}

// versionText says which ndpack this is (the module version, or the
// commit a build from a checkout was made at), the Go that built it, and
// the versions of the formats it writes.
func versionText() string {
	version, commit, modified, goVersion := "(unknown)", "", false, runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		version, goVersion = bi.Main.Version, bi.GoVersion
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if commit != "" && (version == "(devel)" || version == "") {
		version = "commit " + commit[:min(12, len(commit))]
		if modified {
			version += " with local changes"
		}
	}
	return fmt.Sprintf(`ndpack %s, built with %s
writes: NPY format 1.0 (2.0 or 3.0 when the header needs it), as numpy 1.24's np.save
        npz archives as np.savez and np.savez_compressed (zip64 past 4 GiB)
        msgpack ext type 110, YEP-110 array interface version 3, as msgpack-python 1.0 packs it
`, version, goVersion)
}
