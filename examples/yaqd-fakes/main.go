// Command yaqd-fakes runs any of the nine simulated daemons of yaq's
// yaqd-fakes package, built on the yaq package's daemon kit: each kind is
// its TOML description (kinds/*.toml) and the few lines that simulate its
// device; the kit composes the protocol and answers the traits' messages.
//
//	yaqd-fakes KIND --config FILE
//	yaqd-fakes KIND --protocol
//	yaqd-fakes KIND --version
//	yaqd-fakes --list
//
// KIND is one of fake-camera, fake-continuous-hardware,
// fake-discrete-hardware, fake-furnace, fake-has-transformed-position,
// fake-has-turret, fake-sensor, fake-spectrometer and
// fake-triggered-sensor. Run under the name yaqd-KIND (a link to the
// program), it is that kind, as the Python package's entry points are:
//
//	ln -s yaqd-fakes yaqd-fake-camera
//	yaqd-fake-camera --config cam.toml
//
// The config file has a table per daemon, as for yaqd-core's daemons:
//
//	[cam]
//	port = 39111
//	host = "127.0.0.1"
//	aoi_width = 512
package main

import (
	"embed"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/ndpack/ndpack/yaq/kit"
)

const version = "0.2.0"

//go:embed kinds/*.toml
var descriptions embed.FS

// kinds maps each kind to what its daemons do beyond their traits.
var kinds = map[string]func(d *kit.Daemon) error{
	"fake-camera":                   newCamera,
	"fake-continuous-hardware":      newContinuousHardware,
	"fake-discrete-hardware":        newDiscreteHardware,
	"fake-furnace":                  newFurnace,
	"fake-has-transformed-position": newTransformedPosition,
	"fake-has-turret":               newTurret,
	"fake-sensor":                   newSensor,
	"fake-spectrometer":             newSpectrometer,
	"fake-triggered-sensor":         newTriggeredSensor,
}

// program returns the Program of a kind.
func program(kind string, stdout, stderr io.Writer) (*kit.Program, error) {
	setup, ok := kinds[kind]
	if !ok {
		return nil, fmt.Errorf("no kind %q (the kinds are %s)", kind, strings.Join(kindNames(), ", "))
	}
	file := "kinds/" + kind + ".toml"
	text, err := descriptions.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return &kit.Program{Name: "yaqd-" + kind, Version: version, Description: text, DescriptionFile: file,
		New: setup, Stdout: stdout, Stderr: stderr}, nil
}

func kindNames() []string {
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func main() {
	os.Exit(run(filepath.Base(os.Args[0]), os.Args[1:], os.Stdout, os.Stderr))
}

// run is main with its name, arguments and outputs given.
func run(self string, args []string, stdout, stderr io.Writer) int {
	kind, isKind := strings.CutPrefix(self, "yaqd-")
	if !isKind || kinds[kind] == nil {
		if len(args) == 0 || strings.HasPrefix(args[0], "-") {
			if len(args) > 0 && (args[0] == "--list" || args[0] == "-list") {
				fmt.Fprintln(stdout, strings.Join(kindNames(), "\n"))
				return 0
			}
			if len(args) > 0 && (args[0] == "--version" || args[0] == "-version") {
				fmt.Fprintf(stdout, "yaqd-fakes %s\n", version)
				return 0
			}
			fmt.Fprintf(stderr, "usage: yaqd-fakes KIND --config FILE (or --protocol, --version); the kinds are:\n  %s\n",
				strings.Join(kindNames(), "\n  "))
			return 2
		}
		kind, args = args[0], args[1:]
	}
	p, err := program(kind, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "yaqd-fakes: %v\n", err)
		return 2
	}
	return p.Run(args)
}
