package main

import (
	"fmt"

	"github.com/ndpack/ndpack/internal/filekind"
)

// readsKind is the format that reads each kind of file ndpack reads.
var readsKind = map[filekind.Kind]format{filekind.NPY: formatNPY, filekind.Zip: formatNPZ, filekind.Msgpack: formatMsgpack}

// kindHint says, with err, the failure to read name in format f, what the
// input looks like from its first bytes head: of another format ndpack
// reads, the --from that reads it ("x.npy looks like an NPZ file: use
// --from npz"); of a kind it does not read (text, an image, gzip), that
// first ("a text file, not NPY, NPZ or msgpack: ...").
func kindHint(err error, name string, head []byte, f format) error {
	k := filekind.Of(head)
	if reads, ok := readsKind[k]; ok {
		if reads == f {
			return err
		}
		return fmt.Errorf("%w; %s looks like %s file: use --from %s", err, name, article(reads), reads)
	}
	advice := ""
	switch k {
	case filekind.Unknown:
		return err
	case filekind.Gzip:
		advice = " (decompress it first: gzip -dc FILE | ndpack COMMAND -)"
	}
	return fmt.Errorf("%s, not NPY, NPZ or msgpack%s: %w", k, advice, err)
}

func article(f format) string {
	return map[format]string{formatNPY: "an NPY", formatNPZ: "an NPZ", formatMsgpack: "a msgpack"}[f]
}
