// Command ndpack converts N-dimensional arrays between NumPy .npy files and
// msgpack extension type 110 (YEP-110), and shows what is inside them.
//
// Usage:
//
//	ndpack demo     build an array, encode it as ext 110, decode it, compare
//	ndpack help     list the commands
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// errUsage marks errors in how the command was called: exit status 2.
var errUsage = errors.New("usage")

type command struct {
	name, summary string
	run           func(args []string, stdout io.Writer) error
}

func commands() []command {
	return []command{
		{"demo", "build an array, encode it as ext 110, decode it and compare", runDemo},
	}
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the exit status: 0 on success,
// 1 when the work failed, 2 when the command line was wrong.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			err := c.run(args[1:], stdout)
			switch {
			case err == nil:
				return 0
			case errors.Is(err, errUsage):
				fmt.Fprintf(stderr, "ndpack %s: %v\n", c.name, err)
				return 2
			default:
				fmt.Fprintf(stderr, "ndpack: %v\n", err)
				return 1
			}
		}
	}
	fmt.Fprintf(stderr, "ndpack: unknown command %q; run 'ndpack help'\n", args[0])
	return 2
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "ndpack moves N-dimensional arrays between NumPy .npy files and msgpack ext 110 (YEP-110).")
	fmt.Fprintln(w, "\nUsage: ndpack COMMAND [ARGS]\n\nCommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
}
