package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/remote"
)

// format is a kind of file ndpack reads or writes, as the library names
// and tells it (ndpack.DetectFormat).
type format = ndpack.Format

const (
	formatNPY     = ndpack.FormatNPY
	formatNPZ     = ndpack.FormatNPZ
	formatMsgpack = ndpack.FormatMsgpack
	// The command line's own: DetectFormat tells a stream by its first
	// bytes, and a Zarr store is a directory (or a prefix), a reference
	// file one that starts with "{" (a msgpack map's first byte too), which
	// the command line tells by what the input is (openStoreInput).
	formatZarr format = "zarr" // a Zarr v2 store: a directory, or an s3:// prefix written
	formatRefs format = "refs" // a kerchunk reference file (JSON), read
)

// parseFormat reads a --from/--to value.
func parseFormat(s string) (format, error) {
	switch strings.ToLower(strings.TrimPrefix(s, ".")) {
	case "npy":
		return formatNPY, nil
	case "npz":
		return formatNPZ, nil
	case "msgpack", "mpk", "ext110":
		return formatMsgpack, nil
	case "zarr":
		return formatZarr, nil
	case "refs", "json":
		return formatRefs, nil
	}
	if _, err := dialect.Parse(strings.ToLower(s)); err == nil {
		return formatMsgpack, nil // a dialect's maps, in msgpack
	}
	return "", usageError("unknown format %q (want npy, npz, msgpack, msgpack-numpy, openpi, zarr or refs)", s)
}

// formatOf returns the format a file name's extension names, or "".
func formatOf(name string) format {
	if remote.IsURL(name) {
		return urlFormat(name)
	}
	switch strings.ToLower(filepath.Ext(name)) {
	case ".npy":
		return formatNPY
	case ".npz":
		return formatNPZ
	case ".msgpack", ".mpk":
		return formatMsgpack
	case ".zarr":
		return formatZarr
	case ".json":
		return formatRefs
	}
	return ""
}

// urlPath is the path of the URL name, or "" if it is no URL.
func urlPath(name string) string {
	u, err := url.Parse(name)
	if err != nil {
		return ""
	}
	return u.Path
}

// resolveFormat decides a file's format from an explicit flag or its name.
// A --to that contradicts the output's extension is refused: msgpack
// written into out.npy makes a file every reader misreads. (--from may
// override an input's wrong extension: reading it harms nothing.) An input whose name says
// nothing and that cannot be read twice (a pipe, <(...)) gets "": its first
// bytes will tell.
func resolveFormat(name, flagValue, flagName string) (format, error) {
	if flagValue != "" {
		f, err := parseFormat(flagValue)
		if err != nil {
			return "", err
		}
		if ext := formatOf(name); flagName == "to" && ext != "" && ext != f {
			return "", usageError("--%s %s contradicts the extension of %q (%s); rename the file or drop --%s", flagName, flagValue, displayName(name), ext, flagName)
		}
		return f, nil
	}
	if flagName == "from" && name == "-" {
		return "", nil // standard input's first bytes will tell
	}
	if isStdout(name) && flagName == "to" {
		return "", usageError("%s needs --to to name the format of standard output", displayName(name))
	}
	if f := formatOf(name); f != "" {
		return f, nil
	}
	if flagName == "from" {
		if _, err := os.Stat(name); err == nil {
			return "", nil // a file (or pipe) whose first bytes will tell, as inspect reads it
		}
	}
	if i := strings.LastIndexByte(name, ':'); i > 0 && formatOf(name[:i]) == formatNPY {
		return "", usageError("%q: NAME in IN:NAME picks an array of an .npz or a msgpack map; an .npy holds one array (its rows: --rows START:STOP)", displayName(name))
	}
	return "", usageError("cannot tell the format of %q from its extension (.npy, .npz, .msgpack, .mpk); use --%s", displayName(name), flagName)
}
