package main

import (
	"path/filepath"
	"strings"
)

// format is a kind of file ndpack reads or writes.
type format string

const (
	formatNPY     format = "npy"
	formatNPZ     format = "npz"
	formatMsgpack format = "msgpack"
)

// parseFormat reads a --from/--to value.
func parseFormat(s string) (format, error) {
	switch strings.ToLower(strings.TrimPrefix(s, ".")) {
	case "npy":
		return formatNPY, nil
	case "npz":
		return formatNPZ, nil
	case "msgpack", "mpk", "ext110", "msgpack-numpy", "openpi":
		return formatMsgpack, nil
	}
	return "", usageError("unknown format %q (want npy, npz, msgpack, msgpack-numpy or openpi)", s)
}

// formatOf returns the format a file name's extension names, or "".
func formatOf(name string) format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".npy":
		return formatNPY
	case ".npz":
		return formatNPZ
	case ".msgpack", ".mpk":
		return formatMsgpack
	}
	return ""
}

// resolveFormat decides a file's format from an explicit flag or its name.
func resolveFormat(name, flagValue, flagName string) (format, error) {
	if flagValue != "" {
		return parseFormat(flagValue)
	}
	if name == "-" {
		return "", usageError("%s needs --%s to name the format of standard %s", name, flagName, map[string]string{"from": "input", "to": "output"}[flagName])
	}
	if f := formatOf(name); f != "" {
		return f, nil
	}
	return "", usageError("cannot tell the format of %q from its extension (.npy, .npz, .msgpack, .mpk); use --%s", name, flagName)
}
