package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/atomicfile"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/vmihailenco/msgpack/v5"
)

const convertUsage = `Usage: ndpack convert [options] IN OUT

Convert arrays between formats, chosen by the file extensions:
  .npy               one NumPy array
  .npz               a NumPy archive of named arrays
  .msgpack, .mpk     one msgpack document: an ext 110 object (YEP-110), or,
                     to and from .npz, a map of names to ext 110 objects

"-" is standard input or output; --from or --to then names the format.
.npy <-> .msgpack conversion streams: memory stays small whatever the size.
The output is written to a temporary file beside OUT and renamed when
complete, so a failed conversion leaves no OUT and never damages an existing
one.

Options:
  --allow-nonstandard  let S, U, V, M8 and m8 arrays into ext 110 (YEP-110
                       lists only b, i, u, f, c; its reference code reads them)
  --from FMT           format of IN: npy, npz or msgpack
  --to FMT             format of OUT: npy, npz or msgpack
  --compress           deflate the members of an .npz output

Examples:
  ndpack convert image.npy image.msgpack
  ndpack convert image.msgpack image.npy
  ndpack convert run.npz run.mpk
  ndpack convert --compress run.mpk run.npz
  cat image.npy | ndpack convert --from npy --to msgpack - - | nc host 5555
`

type convertOptions struct {
	from, to         format
	allowNonstandard bool
	compress         bool
}

func runConvert(e env, args []string) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	allow := fs.Bool("allow-nonstandard", false, "")
	from := fs.String("from", "", "")
	to := fs.String("to", "", "")
	compress := fs.Bool("compress", false, "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError("want IN and OUT, got %d arguments", len(pos))
	}
	in, out := pos[0], pos[1]
	o := convertOptions{allowNonstandard: *allow, compress: *compress}
	if o.from, err = resolveFormat(in, *from, "from"); err != nil {
		return err
	}
	if o.to, err = resolveFormat(out, *to, "to"); err != nil {
		return err
	}
	conv, err := o.converter()
	if err != nil {
		return err
	}

	var src io.Reader = e.stdin
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return err // *PathError names the file
		}
		defer f.Close()
		src = f
	}
	fail := func(err error) error {
		if errors.Is(err, ext110.ErrNonstandard) {
			err = fmt.Errorf("%w (ndpack convert --allow-nonstandard sends it anyway)", err)
		}
		if _, isPath := err.(*os.PathError); isPath || in == "-" {
			return err
		}
		return fmt.Errorf("%s: %w", in, err)
	}
	if out == "-" {
		w := bufio.NewWriterSize(e.stdout, 1<<20)
		if err := conv(w, src); err != nil {
			return fail(err)
		}
		return w.Flush()
	}
	err = atomicfile.Write(out, 0o666, func(f *os.File) error { return conv(f, src) })
	if err != nil {
		return fail(err)
	}
	return nil
}

type converter func(w io.Writer, r io.Reader) error

func (o convertOptions) converter() (converter, error) {
	opts := npybridge.ConvertOptions{Ext110: ext110.Options{AllowNonstandard: o.allowNonstandard}}
	switch {
	case o.from == formatNPY && o.to == formatMsgpack:
		return opts.NPYToExt110, nil
	case o.from == formatMsgpack && o.to == formatNPY:
		return opts.Ext110ToNPY, nil
	case o.from == formatNPY && o.to == formatNPY:
		return rewriteNPY, nil
	case o.from == formatNPZ && o.to == formatMsgpack:
		return func(w io.Writer, r io.Reader) error { return npzToMsgpack(w, r, opts.Ext110) }, nil
	case o.from == formatMsgpack && o.to == formatNPZ:
		return func(w io.Writer, r io.Reader) error { return msgpackToNPZ(w, r, o.compress) }, nil
	case o.from == formatNPZ && o.to == formatNPZ:
		return func(w io.Writer, r io.Reader) error {
			arrays, err := readNPZ(r)
			if err != nil {
				return err
			}
			return npybridge.WriteNPZ(w, arrays, o.compress)
		}, nil
	}
	return nil, usageError("cannot convert %s to %s: supported are npy <-> msgpack, npz <-> msgpack, npy -> npy and npz -> npz", o.from, o.to)
}

// rewriteNPY writes an .npy file as np.save would (C order, numpy's header).
func rewriteNPY(w io.Writer, r io.Reader) error {
	a, err := npybridge.Read(r)
	if err != nil {
		return err
	}
	return npybridge.Write(w, a)
}

// readInput reads all of r: a regular file into a buffer of exactly its
// size, anything else growing as bytes arrive (io.ReadAll allocates up to
// several times the input on the way).
func readInput(r io.Reader) ([]byte, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			b := make([]byte, fi.Size())
			if _, err := io.ReadFull(f, b); err != nil {
				return nil, err
			}
			return b, nil
		}
	}
	return io.ReadAll(r)
}

// readNPZ reads an archive from a file, or from a stream held in memory
// (zip needs random access).
func readNPZ(r io.Reader) ([]npybridge.NamedArray, error) {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			return npybridge.ReadNPZ(f, fi.Size())
		}
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return npybridge.ReadNPZ(bytes.NewReader(b), int64(len(b)))
}

// npzToMsgpack writes the archive as one msgpack map of names to ext 110
// objects, in archive order.
func npzToMsgpack(w io.Writer, r io.Reader, opts ext110.Options) error {
	arrays, err := readNPZ(r)
	if err != nil {
		return err
	}
	enc := msgpack.NewEncoder(w)
	if err := enc.EncodeMapLen(len(arrays)); err != nil {
		return err
	}
	for _, na := range arrays {
		obj, err := opts.Marshal(na.Array)
		if err != nil {
			return fmt.Errorf("array %q: %w", na.Name, err)
		}
		if err := enc.EncodeString(na.Name); err != nil {
			return err
		}
		if err := enc.Encode(msgpack.RawMessage(obj)); err != nil {
			return err
		}
	}
	return nil
}

// errNotArrays is a msgpack document that holds something other than ext
// 110 arrays.
var errNotArrays = errors.New("not an ext 110 array or a map of names to ext 110 arrays")

// msgpackToNPZ reads one msgpack document, a map of names to ext 110
// objects (or a single object, named arr_0 as np.savez names it), and
// writes it as an .npz archive.
func msgpackToNPZ(w io.Writer, r io.Reader, compress bool) error {
	b, err := readInput(r)
	if err != nil {
		return err
	}
	arrays, err := decodeMsgpackArrays(b)
	if err != nil {
		return err
	}
	if len(arrays) == 1 && arrays[0].Name == "" {
		arrays[0].Name = "arr_0"
	}
	return npybridge.WriteNPZ(w, arrays, compress)
}

// decodeMsgpackArrays reads a msgpack document that fills b: one ext 110
// object (returned with no name) or a map of names to them, in map order.
//
// The document is walked first, so that the msgpack library, which sizes
// arrays and maps from their claimed counts, only ever sees counts that the
// bytes really hold.
func decodeMsgpackArrays(b []byte) ([]npybridge.NamedArray, error) {
	n, err := mpwalk.Len(b, mpwalk.Limits{MaxDepth: ext110.DefaultMaxDepth, MaxExpansion: ext110.DefaultMaxExpansion})
	if err != nil {
		return nil, fmt.Errorf("msgpack: %w", err)
	}
	if n != len(b) {
		return nil, fmt.Errorf("msgpack: %d bytes after the document", len(b)-n)
	}
	if len(b) > 0 && (b[0] == 0xc7 || b[0] == 0xc8 || b[0] == 0xc9 || (b[0] >= 0xd4 && b[0] <= 0xd8)) {
		a, err := ext110.Unmarshal(b)
		if err != nil {
			return nil, err
		}
		return []npybridge.NamedArray{{Array: a}}, nil
	}
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	count, err := dec.DecodeMapLen()
	if err != nil {
		return nil, fmt.Errorf("msgpack: %w (%w)", err, errNotArrays)
	}
	var out []npybridge.NamedArray
	for i := 0; i < count; i++ {
		name, err := dec.DecodeString()
		if err != nil {
			return nil, fmt.Errorf("map key %d: %w (%w)", i, err, errNotArrays)
		}
		v, err := dec.DecodeInterface()
		if err != nil {
			return nil, fmt.Errorf("map value %q: %w", name, err)
		}
		a, ok := v.(*ndarray.Array)
		if !ok {
			return nil, fmt.Errorf("map value %q is a msgpack %T: %w", name, v, errNotArrays)
		}
		out = append(out, npybridge.NamedArray{Name: name, Array: a})
	}
	return out, nil
}
