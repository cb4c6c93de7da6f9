package kit

import (
	"fmt"
	"sort"

	"github.com/BurntSushi/toml"
)

// traitDef is what a trait adds, as compose merges it.
type traitDef struct {
	requires []string
	doc      string
	def      map[string]any
}

// allTraits holds the kit's traits by name; it is filled once, in init,
// and only read after.
var allTraits = map[string]*traitDef{}

func init() {
	for _, text := range []string{isDaemonTOML, hasPositionTOML, hasLimitsTOML, hasTransformedPositionTOML,
		isDiscreteTOML, isHomeableTOML, hasTurretTOML, isSensorTOML, hasMeasureTriggerTOML, hasMappingTOML,
		hasDependentsTOML, usesSerialTOML, usesUARTTOML, usesI2CTOML} {
		var def map[string]any
		if _, err := toml.Decode(text, &def); err != nil {
			panic(fmt.Sprintf("kit: a built-in trait does not parse: %v", err))
		}
		t := &traitDef{def: def}
		t.doc, _ = def["doc"].(string)
		for _, r := range def["requires"].([]any) {
			t.requires = append(t.requires, r.(string))
		}
		allTraits[def["trait"].(string)] = t
	}
}

// traitNames returns the names of every trait the kit knows, sorted.
func traitNames() []string {
	names := make([]string, 0, len(allTraits))
	for n := range allTraits {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// The traits' descriptions, in the TOML yaq-traits uses, so that they
// compose as it composes them. The docs are the kit's own; "__null__"
// stands for a null default, which TOML cannot write.
const isDaemonTOML = `
trait = "is-daemon"
doc = "Every yaq daemon: it identifies itself, says whether it is busy, and reports its config and state."
requires = []

[config.port]
type = "int"
doc = "The TCP port the daemon listens on."

[config.serial]
type = ["null", "string"]
default = "__null__"
doc = "The serial number of the device the daemon drives."

[config.make]
type = ["null", "string"]
default = "__null__"

[config.model]
type = ["null", "string"]
default = "__null__"

[config.enable]
type = "boolean"
default = true
doc = "When false, the program skips this daemon."

[config.log_level]
type = {type = "enum", name = "level", symbols = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]}
default = "info"
doc = "The least severe log messages written."

[config.log_to_file]
type = "boolean"
default = false
doc = "Also write the log to a file of its own."

[messages.busy]
response = "boolean"
doc = "Whether the daemon is busy: moving, measuring, or otherwise not settled."

[messages.id]
response = {type = "map", values = ["null", "string"]}
doc = "The daemon's name, kind, make, model and serial."

[messages.get_config_filepath]
response = "string"
doc = "The absolute path of the config file, on the daemon's host."

[messages.get_config]
response = "string"
doc = "The daemon's config, defaults included, as TOML."

[messages.shutdown]
request = [{name = "restart", type = "boolean", default = false}]
doc = "Stop the daemon, and start it again from its config file if restart is true."

[messages.get_state]
response = "string"
doc = "The daemon's state, as TOML."
`

const hasPositionTOML = `
trait = "has-position"
doc = "A device with one position, which set_position moves toward; busy until it arrives."
requires = []

[state.position]
type = "double"
default = nan

[state.destination]
type = "double"
default = nan

[messages.get_destination]
response = "double"
doc = "Where the device was last sent."

[messages.get_units]
response = ["null", "string"]
doc = "The units of position, or null."

[messages.get_position]
response = "double"
doc = "Where the device is now."

[messages.set_position]
request = [{name = "position", type = "double"}]
doc = "Send the device to position."

[messages.set_relative]
request = [{name = "distance", type = "double"}]
response = "double"
doc = "Send the device distance beyond its destination; answers the new destination."

[properties.position]
getter = "get_position"
units_getter = "get_units"
control_kind = "hinted"
record_kind = "data"
type = "double"

[properties.destination]
getter = "get_destination"
setter = "set_position"
units_getter = "get_units"
control_kind = "hinted"
record_kind = "data"
type = "double"
`

const hasLimitsTOML = `
trait = "has-limits"
doc = "A positioner that stays within limits: its hardware's, narrowed by its config's."
requires = ["has-position"]

[config.limits]
type = "array"
items = "double"
default = [-inf, +inf]
doc = "Limits narrower than the hardware's, if any."

[config.out_of_limits]
type = "enum"
name = "out_of_limits"
symbols = ["closest", "ignore", "error"]
default = "closest"
doc = "What set_position does outside the limits: go to the closest limit, do nothing, or answer an error."

[state.hw_limits]
type = "array"
items = "double"
default = [-inf, +inf]

[messages.get_limits]
response = {type = "array", items = "double"}
doc = "The lower and upper limit."

[messages.in_limits]
request = [{name = "position", type = "double"}]
response = "boolean"
doc = "Whether position lies within the limits."

[properties.position]
limits_getter = "get_limits"

[properties.destination]
limits_getter = "get_limits"
`

const hasTransformedPositionTOML = `
trait = "has-transformed-position"
doc = "A positioner with two frames: the transformed one clients use, and the native one of the hardware, offset by a native reference."
requires = ["has-limits"]

[config.native_limits]
type = "array"
items = "double"
default = [-inf, +inf]

[state.native_reference_position]
type = "double"
default = 0.0
doc = "The native position that is transformed zero."

[messages.to_transformed]
request = [{name = "native_coordinate", type = "double"}]
response = "double"

[messages.to_native]
request = [{name = "transformed_coordinate", type = "double"}]
response = "double"

[messages.set_native_reference]
request = [{name = "native_coordinate", type = "double"}]

[messages.get_native_reference]
response = "double"

[messages.set_native_position]
request = [{name = "native_coordinate", type = "double"}]

[messages.get_native_position]
response = "double"

[messages.get_native_limits]
response = {type = "array", items = "double"}

[messages.get_native_units]
response = ["null", "string"]

[messages.get_native_destination]
response = "double"

[properties.native_reference_position]
getter = "get_native_reference"
setter = "set_native_reference"
units_getter = "get_native_units"
control_kind = "normal"
record_kind = "metadata"
type = "double"

[properties.native_position]
getter = "get_native_position"
units_getter = "get_native_units"
control_kind = "normal"
record_kind = "metadata"
type = "double"

[properties.native_destination]
getter = "get_native_destination"
setter = "set_native_position"
limits_getter = "get_native_limits"
units_getter = "get_native_units"
control_kind = "normal"
record_kind = "metadata"
type = "double"
`

const isDiscreteTOML = `
trait = "is-discrete"
doc = "A positioner with named positions (identifiers), which set_identifier goes to."
requires = ["has-position"]

[config.identifiers]
type = {type = "map", values = "double"}
default = {}

[state.position_identifier]
type = ["null", "string"]
default = "__null__"

[messages.get_position_identifiers]
response = {type = "map", values = "double"}

[messages.get_position_identifier_options]
response = {type = "array", items = "string"}

[messages.set_identifier]
request = [{name = "identifier", type = "string"}]
response = "double"

[messages.get_identifier]
response = ["null", "string"]

[properties.position_identifier]
getter = "get_identifier"
setter = "set_identifier"
options_getter = "get_position_identifier_options"
control_kind = "hinted"
record_kind = "data"
type = "string"
`

const isHomeableTOML = `
trait = "is-homeable"
doc = "A positioner that can find its home; busy while it does, then back to its destination."
requires = ["has-position"]

[messages.home]
doc = "Find home, then return to the destination."
`

const hasTurretTOML = `
trait = "has-turret"
doc = "A device with a turret of named positions, apart from its own position."
requires = []

[state.turret]
type = ["null", "string"]
default = "__null__"

[messages.get_turret]
response = ["null", "string"]

[messages.get_turret_options]
response = {type = "array", items = ["null", "string"]}

[messages.set_turret]
request = [{name = "turret", type = "string"}]

[properties.turret]
getter = "get_turret"
setter = "set_turret"
options_getter = "get_turret_options"
control_kind = "hinted"
record_kind = "metadata"
type = "string"
`

const isSensorTOML = `
trait = "is-sensor"
doc = "A device that measures one or more channels; each measurement has an id one more than the last."
requires = []

[messages.get_measured]
response = {type = "map", values = ["int", "double", "ndarray"]}

[messages.get_measurement_id]
response = {type = "int"}

[messages.get_channel_names]
response = {type = "array", items = "string"}

[messages.get_channel_shapes]
response = {type = "map", values = {type = "array", items = "int"}}

[messages.get_channel_units]
response = {type = "map", values = ["null", "string"]}
`

const hasMeasureTriggerTOML = `
trait = "has-measure-trigger"
doc = "A sensor whose measurements clients start."
requires = ["is-sensor"]

[config.loop_at_startup]
type = "boolean"
default = false

[messages.measure]
request = [{name = "loop", type = "boolean", default = false}]
response = "int"
doc = "Start a measurement (or keep measuring, if loop); answers the id it will have."

[messages.stop_looping]
doc = "Stop after the measurement in hand."
`

const hasMappingTOML = `
trait = "has-mapping"
doc = "A sensor whose channels come with mappings: arrays that place each element of a channel."
requires = ["is-sensor"]

[messages.get_channel_mappings]
response = {type = "map", values = {type = "array", items = "string"}}

[messages.get_mapping_id]
response = "int"

[messages.get_mapping_units]
response = {type = "map", values = ["null", "string"]}

[messages.get_mappings]
response = {type = "map", values = ["null", "ndarray", "double"]}
`

const hasDependentsTOML = `
trait = "has-dependents"
doc = "A daemon that drives other daemons."
requires = []

[messages.get_dependent_hardware]
response = {type = "map", values = "string"}
doc = "The daemons this one drives, as host:port by name."
`

const usesSerialTOML = `
trait = "uses-serial"
doc = "A device on a serial link."
requires = []

[messages.direct_serial_write]
request = [{name = "message", type = "bytes"}]
doc = "Write bytes to the device as they are; for debugging."
`

const usesUARTTOML = `
trait = "uses-uart"
doc = "A device on a UART at a given baud rate."
requires = ["uses-serial"]

[config.serial_port]
type = "string"

[config.baud_rate]
type = "int"
`

const usesI2CTOML = `
trait = "uses-i2c"
doc = "A device on an I2C bus."
requires = ["uses-serial"]

[config.i2c_addr]
type = "int"
`
