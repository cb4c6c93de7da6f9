package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/ndpack/ndpack/internal/gr00tmap"
	"github.com/ndpack/ndpack/internal/peertext"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/ndpack/ndpack"
	"github.com/ndpack/ndpack/dialect"
	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/filesection"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/remote"
)

const convertUsage = `Usage: ndpack convert [options] IN OUT

Convert arrays between formats, chosen by the file extensions:
  .npy               one NumPy array
  .npz               a NumPy archive of named arrays
  .msgpack, .mpk     one msgpack document: an array, or a map of names to
                     arrays; read as ext 110 (YEP-110) or as the maps of
                     msgpack-numpy or OpenPI, whichever the file holds;
                     written as ext 110 unless --to names a dialect
  .zarr              a Zarr v2 store (zarr-python 2.x): a directory, or
                     as OUT an s3:// prefix; written with --chunks and
                     --compress, its arrays' metadata after their chunks;
                     read whole (an array, or a group's arrays by path),
                     chunks uncompressed or zlib, in C or F order
  .json              as IN, a kerchunk reference file (ndpack refs makes
                     them): the arrays whose chunks it points at, read
                     from their files or URLs

Any format converts to any other. An .npz, or a msgpack map, becomes a map
or an archive of the same names; to make an .npy of one of its arrays, name
it as IN:NAME or with --member (not needed when it holds only one). A lone
array put into an .npz is named after IN, or --name.

In a msgpack message, arrays at any depth are found: inside lists and maps
they are named by their path, the keys and list indices on the way joined
by "/" (msg.msgpack:params/0 is the first parameter of a yaq-RPC request,
frames.msgpack:2/image the image of its third map). inspect lists every
array with its path, and a map's other values by their value (short, as
jq -c prints them); convert leaves values that are not arrays out.

IN may be "-" (standard input), a pipe or <(...): its first bytes tell its
format (an .npz from a pipe is copied to a temporary file first, a zip
being read from its end). OUT may be "-" or /dev/stdout, with --to naming
the format; --to that contradicts OUT's extension is an error. OUT may not
be IN (by any name or link): that would destroy what is being read.

IN may be a URL of an .npy or .npz: http://, https:// or s3://BUCKET/KEY
(with :NAME for a member, as for files), read by Range requests, a large
one in --part-size parts on --concurrency connections at once. OUT may be
s3://BUCKET/KEY: written as a multipart upload of --part-size parts,
--concurrency of them at once (memory stays that many parts), completed
only when the whole output was
written and aborted on any error or on Ctrl-C, so that no partial object
ever appears under the key. The AWS settings honoured are listed in the
README (AWS_ENDPOINT_URL for S3-compatible stores, path-style).

Memory stays small whatever the size: data streams from IN to OUT (a
Fortran-order array, which must be transposed, is the exception). A
regular OUT is written to a temporary file beside it and renamed when
complete, so a failed or interrupted conversion (Ctrl-C included) leaves
no OUT and never damages an existing one. An existing OUT keeps its
permissions; if it is a symbolic link, its target is replaced; a read-only
OUT is refused. A FIFO or device OUT is written into, as cp does, never
replaced.

Options:
  --allow-nonstandard  let S, U, V, M8 and m8 arrays into ext 110 (YEP-110
                       lists only b, i, u, f, c; its reference code reads them)
  --from FMT           format of IN: npy, npz or msgpack
  --to FMT             format of OUT: npy, npz, msgpack (ext 110),
                       msgpack-numpy or openpi
  --compress           deflate the members of an .npz OUT, or the chunks of
                       a Zarr OUT (numcodecs' zlib), on every core
  --level N            with --compress, the deflate level: 1 (fastest) to 9
                       (smallest); default 6, numpy's, for an .npz and 1,
                       numcodecs', for a Zarr store
  --chunks R,C,...     the chunks of a Zarr OUT (default: about 1 MiB,
                       whole rows when a row fits)
  --member NAME        the array of an .npz or msgpack map IN to convert
  --name NAME          the member name of a lone array put into an .npz
  --append             add IN's array to the .npy OUT as one row (or, if its
                       shape is rows of OUT's row shape, a block of rows);
                       OUT is created if absent, and numpy can load it
                       whenever a row has been added, even after a crash;
                       another ndpack or program appending to OUT at the
                       same time is an error
  --wait               with --append, wait for another appender to finish
  --objects            read object arrays (numpy dtype O, a pickle) as data,
                       running nothing in the pickle: into an .npy or .npz
                       they go as np.save writes them; into msgpack their
                       elements go as plain msgpack values, nested by shape
                       instead (dicts keep their order and keys); a
                       msgpack list of plain values (no arrays) is read
                       as an object array of its items
  --max-objects-size SIZE  with --objects, refuse an object array whose
                       pickle, values in memory, or output (a value the
                       pickle shares counted at every place) would pass
                       SIZE bytes (a number, or with K, M, G or T for KiB,
                       MiB ...; default 24 times the pickle's stored bytes,
                       compressed in an .npz, plus 64M)
  --rows START:STOP    only these rows (the first axis; Python slice rules:
                       either bound may be left out, negative ones count
                       from the end; no step) of an .npy or .npz member,
                       read alone
  --field NAME         only the field NAME of a record array (numpy's
                       a['NAME']; "outer.inner" for a nested record's field)
  --astype DTYPE       convert the values to DTYPE (as np.dtype takes it:
                       float32, i2, >f8, bool, complex64, int_ ...), as
                       numpy's astype does
  --casting RULE       which conversions --astype makes, as numpy's casting:
                       no, equiv (byte order only), safe, same_kind
                       (default: within a kind or up bool, unsigned, signed,
                       float, complex), unsafe (any: floats to integers
                       truncate); a refused one is an error
  --max-header-size N  read .npy headers of up to N bytes (default 10000,
                       numpy's max_header_size): records of thousands of
                       fields
  --max-size SIZE      the largest array read into memory whole (rows,
                       a field, a Fortran-order array; default half the
                       memory the process may use; 512M, 2G ...)
` + remoteHelp + `  --quiet              no progress on standard error

Examples:
  ndpack convert image.npy image.msgpack
  ndpack convert image.msgpack image.npy
  ndpack convert run.npz run.mpk
  ndpack convert --compress run.mpk run.npz
  ndpack convert image.npy image.npz
  ndpack convert run.npz:image image.npy
  ndpack convert --append frame.msgpack frames.npy
  ndpack convert --to openpi run.npz request.msgpack
  cat image.npy | ndpack convert --from npy --to msgpack - - | nc host 5555
  ndpack convert https://data.example.org/big.npy big.msgpack
  ndpack convert --rows 1000:2000 s3://lab/run.npz:image part.npy
  ndpack convert run.npz s3://lab/run.msgpack
  ndpack convert --field pos --astype float32 tracks.npy pos.npy
  ndpack convert --chunks 1,1024,1024 --compress --level 6 stack.npy stack.zarr
  ndpack convert run.npz s3://lab/run.zarr
  ndpack convert stack.zarr stack.npy
  ndpack convert refs.json image.npy
`

type convertOptions struct {
	from, to         format
	toDialect        dialect.Dialect // for msgpack output: 0 is ext 110
	allowNonstandard bool
	compress         bool
	level            int // --level; 0 is the default
	member, name     string
	quiet            bool
	wait             bool  // --append waits for another appender
	objects          bool  // read object arrays (pickles) as data
	maxObjects       int64 // --max-objects-size; 0 is the default
	rows             *rowRange
	maxHeader        int         // --max-header-size; 0 is numpy's 10,000
	maxSize          int64       // --max-size; 0 is half the memory
	remote           remoteFlags // --concurrency, --part-size
	field            string      // --field: a record field
	astype           *astypeSpec // --astype and --casting
	chunks           []int       // --chunks, of a Zarr OUT
}

// inputOptions are the options IN is read with.
func (o convertOptions) inputOptions(e env) inputOptions {
	return inputOptions{objects: o.objects, maxObjects: o.maxObjects, maxHeader: o.maxHeader, maxSize: o.maxSize, stderr: e.stderr, remote: o.remote}
}

// transformed reports whether the arrays are changed on the way (--rows,
// --field, --astype), which the direct .npy <-> ext 110 paths do not do.
func (o convertOptions) transformed() bool {
	return o.rows != nil || o.field != "" || o.astype != nil
}

func runConvert(e env, args []string) error {
	fs := flag.NewFlagSet("convert", flag.ContinueOnError)
	allow := fs.Bool("allow-nonstandard", false, "")
	from := fs.String("from", "", "")
	to := fs.String("to", "", "")
	compress := fs.Bool("compress", false, "")
	level := fs.Int("level", 0, "")
	member := fs.String("member", "", "")
	name := fs.String("name", "", "")
	quiet := fs.Bool("quiet", false, "")
	appendRows := fs.Bool("append", false, "")
	objects := fs.Bool("objects", false, "")
	var maxObjects byteSize
	fs.Var(&maxObjects, "max-objects-size", "")
	wait := fs.Bool("wait", false, "")
	rowsFlag := fs.String("rows", "", "")
	remoteSet := addRemoteFlags(fs)
	field := fs.String("field", "", "")
	astype := fs.String("astype", "", "")
	casting := fs.String("casting", "", "")
	maxHeader := addMaxHeaderFlag(fs)
	maxSize := addMaxSizeFlag(fs)
	chunksFlag := fs.String("chunks", "", "")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	chunks, err := parseChunks(*chunksFlag)
	if err != nil {
		return err
	}
	rows, err := parseRows(*rowsFlag)
	if err != nil {
		return err
	}
	as, err := parseAstype(*astype, *casting)
	if err != nil {
		return err
	}
	if *casting != "" && as == nil {
		return usageError("--casting says how --astype converts; it goes with --astype")
	}
	if err := remoteSet.check(); err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError("want IN and OUT, got %d %s", len(pos), plural(int64(len(pos)), "argument"))
	}
	in, out := pos[0], pos[1]
	levelSet := false
	fs.Visit(func(f *flag.Flag) { levelSet = levelSet || f.Name == "level" })
	if levelSet && (*level < 1 || *level > 9) {
		return usageError("--level %d: deflate levels are 1 to 9", *level)
	}
	if levelSet && !*compress {
		return usageError("--level sets the deflate level; it goes with --compress")
	}
	o := convertOptions{allowNonstandard: *allow, compress: *compress, level: *level, member: *member, name: *name, quiet: *quiet, objects: *objects, maxObjects: int64(maxObjects), rows: rows,
		maxHeader: int(*maxHeader), maxSize: int64(*maxSize), field: *field, astype: as, remote: *remoteSet, chunks: chunks}
	in, o.member = splitMember(in, o.member)
	if as != nil {
		as.warn = castWarner(e.stderr, shownName(in, o.member))
	}
	if o.from, err = resolveFormat(in, *from, "from"); err != nil {
		return err
	}
	if o.to, err = resolveFormat(out, *to, "to"); err != nil {
		return err
	}
	if d, err := dialect.Parse(strings.ToLower(*to)); err == nil {
		o.toDialect = d
	}
	if o.toDialect != 0 && o.allowNonstandard {
		o.allowNonstandard = false // the dialects carry every kind they can
	}
	switch {
	case o.compress && o.to != formatNPZ && o.to != formatZarr:
		return usageError("--compress deflates the members of an .npz or a Zarr store's chunks; OUT is %s", o.to)
	case o.chunks != nil && o.to != formatZarr:
		return usageError("--chunks sets the chunks of a Zarr store; OUT is %s", o.to)
	case o.to == formatRefs:
		return usageError("ndpack refs writes reference files: ndpack refs IN... > OUT.json")
	case o.to == formatZarr && isStdout(out):
		return usageError("a Zarr store is a directory or an s3:// prefix, not standard output")
	case o.name != "" && o.to != formatNPZ:
		return usageError("--name names the member of an .npz; OUT is %s", o.to)
	case o.member != "" && o.from == formatNPY:
		return usageError("--member picks an array of an .npz or a msgpack map; IN is npy")
	case (o.field != "" || o.astype != nil) && o.objects:
		return usageError("--field and --astype take arrays of numbers or records; an object array (--objects) holds Python objects")
	case *appendRows && o.objects:
		return usageError("--append adds rows of numbers to an .npy; an object array (--objects) is not appended")
	case *wait && !*appendRows:
		return usageError("--wait waits for another appender; it goes with --append")
	case remoteSet.partSize != 0 && remoteSet.partSize < 5<<20 && strings.HasPrefix(out, "s3://"):
		return usageError("--part-size %d: S3 takes upload parts of 5M to 5G", remoteSet.partSize)
	case *appendRows && remote.IsURL(out):
		return usageError("--append adds rows to a local .npy file")
	case *appendRows && (o.to != formatNPY || isStdout(out)):
		return usageError("--append adds rows to an .npy file; OUT is %s", map[bool]string{true: "standard output", false: string(o.to)}[isStdout(out)])
	}
	if err := refuseSameFile(in, out); err != nil {
		return err
	}
	if *appendRows {
		o.wait = *wait
		return failedOn(in, out, o.appendTo(e, in, out))
	}
	return o.convertTo(e, in, out)
}

// convertTo converts IN into OUT, a local file, standard output or an
// s3:// object (uploaded in parts as o.remote says), which is left as it
// was if the conversion fails.
func (o convertOptions) convertTo(e env, in, out string) error {
	if o.to == formatZarr {
		return o.convertToZarr(e, in, out)
	}
	var dst *output
	var err error
	switch {
	case strings.HasPrefix(out, "s3://"):
		dst, err = s3Output(e, out, o.remote)
	case remote.IsURL(out):
		return usageError("OUT %s: only s3:// objects are written; HTTP outputs are not", displayName(out))
	default:
		dst, err = openOutput(e, out)
	}
	if err != nil {
		return err
	}
	defer dst.abort()
	if err := failedOn(in, out, o.convert(e, dst.w, in)); err != nil {
		return err
	}
	return dst.commit()
}

// failedOn words err, from converting IN into OUT, as the input's error
// unless it already names OUT.
func failedOn(in, out string, err error) error {
	var pe *os.PathError
	if err == nil || errors.As(err, &pe) && pe.Path == out {
		return err
	}
	return errors.New(describe(in, err))
}

// appendTo adds the one array of IN to the .npy file out as a row or a block
// of rows. A new file takes the array's shape as its row shape.
func (o convertOptions) appendTo(e env, in, out string) error {
	fa, err := openInputArrays(in, e.stdin, o.from, o.inputOptions(e))
	if err != nil {
		return err
	}
	defer fa.close()
	fa.withRows(o.rows)
	fa.withFieldAndType(o.field, o.astype)
	arrays, err := o.pickFrom(fa)
	if err != nil {
		return err
	}
	if len(arrays) != 1 {
		return fmt.Errorf("%d arrays (%s): --append adds one; pick it as IN:NAME or with --member", len(arrays), names(arrays))
	}
	a, err := readArray(arrays[0])
	if err != nil {
		return err
	}
	rowShape := a.Shape
	if fi, err := os.Stat(out); err == nil && !fi.Mode().IsRegular() {
		// Opening a FIFO would wait for a writer that may never come.
		return &os.PathError{Op: "append", Path: out, Err: errors.New("not a regular file: --append adds rows to an .npy file")}
	}
	if f, err := os.Open(out); err == nil {
		h, herr := npybridge.ReadOptions{MaxHeaderSize: o.maxHeader}.ReadHeader(bufio.NewReader(f))
		f.Close()
		if herr != nil {
			return &os.PathError{Op: "append", Path: out, Err: herr}
		}
		if len(h.Shape) > 0 {
			rowShape = h.Shape[1:]
		}
	}
	w, err := npybridge.AppendOptions{Wait: o.wait}.OpenAppend(context.Background(), out, a.DType, rowShape...)
	var pe *os.PathError
	if errors.Is(err, npybridge.ErrLocked) && errors.As(err, &pe) {
		return &os.PathError{Op: pe.Op, Path: pe.Path, Err: fmt.Errorf("%w (--wait waits for it to finish)", pe.Err)}
	}
	if err != nil {
		return err
	}
	if err := w.Append(a); err != nil {
		w.Close()
		if errors.As(err, &pe) {
			return err // it names the file and says how many rows it holds
		}
		return &os.PathError{Op: "append", Path: out, Err: err}
	}
	return w.Close()
}

// splitMember reads IN as FILE:MEMBER when FILE is an .npz or msgpack file
// and IN itself does not exist; a URL as splitURLMember reads it.
func splitMember(in, member string) (string, string) {
	i := strings.LastIndexByte(in, ':')
	if i <= 0 || member != "" {
		return in, member
	}
	if remote.IsURL(in) {
		return splitURLMember(in)
	}
	if _, err := os.Stat(in); err == nil {
		return in, member
	}
	if namesArchive(in[:i]) {
		return in[:i], in[i+1:]
	}
	// A pipe (/dev/fd/3, <(...)) or standard input names no format: its
	// first bytes will tell.
	if fi, err := os.Stat(in[:i]); in[:i] == "-" || err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return in[:i], in[i+1:]
	}
	return in, member
}

// splitURLMember reads a URL as URL:MEMBER when what comes before the
// member names an .npz or a msgpack file. The member is cut from the
// URL's path, and the query and fragment stay with the URL: a signed
// https://h/run.npz:image?X-Amz-Signature=... is the object run.npz,
// requested with its signature, and its member image, never a member
// named "image?X-Amz-Signature=..." (which messages would show) of an
// object requested unsigned. A member after the query, as in
// https://h/run.npz?X-Amz-Signature=...:image, is read too.
func splitURLMember(in string) (string, string) {
	base, tail := in, ""
	if i := strings.IndexAny(in, "?#"); i >= 0 {
		base, tail = in[:i], in[i:]
	}
	pathAt := strings.Index(base, "://") + 3
	if slash := strings.IndexByte(base[pathAt:], '/'); slash >= 0 {
		pathAt += slash
	} else {
		pathAt = len(base) // no path: a ':' is the host's port
	}
	if i := strings.LastIndexByte(base, ':'); i > pathAt && namesArchive(base[:i]) {
		return base[:i] + tail, base[i+1:]
	}
	if i := strings.LastIndexByte(tail, ':'); i >= 0 && namesArchive(base+tail[:i]) {
		return base + tail[:i], tail[i+1:]
	}
	return in, ""
}

// namesArchive says whether name's extension is an .npz's or a msgpack
// file's, whose arrays are named.
func namesArchive(name string) bool {
	f := formatOf(name)
	return f == formatNPZ || f == formatMsgpack || f == formatZarr || f == formatRefs
}

// shownName is FILE[:NAME] as messages show it: a URL without its user,
// password, query and fragment (displayName), then the member picked.
func shownName(path, member string) string {
	if member == "" {
		return displayName(path)
	}
	return displayName(path) + ":" + member
}

// outputWriter names OUT, not its temporary file, in write errors.
type outputWriter struct {
	w    io.Writer
	name string
}

func (o *outputWriter) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = &os.PathError{Op: "write", Path: o.name, Err: pe.Err}
	}
	return n, err
}

// ReadFrom lets the file below take the bytes from r itself (splice from
// a pipe); a file section moves itself (Section.WriteTo), through
// WriteRange.
func (o *outputWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(o.w, r)
	return n, o.renamed(err)
}

// WriteRange has the kernel move a range of an input file into the
// output file (filesection.CopyRange), as cp does.
func (o *outputWriter) WriteRange(f *os.File, off int64, n int) (int, error) {
	dst, ok := o.w.(*os.File)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	k, err := filesection.CopyRange(dst, f, off, n)
	return k, o.renamed(err)
}

// renamed names OUT instead of its temporary file in a write error.
func (o *outputWriter) renamed(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && pe.Op == "write" {
		err = &os.PathError{Op: "write", Path: o.name, Err: pe.Err}
	}
	return err
}

// countingWriter feeds a progress display with the bytes written.
type countingWriter struct {
	w    io.Writer
	prog *progress
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.prog.add(int64(n))
	return n, err
}

// ReadFrom passes r on to the writer below, so that a file OUT can take
// the bytes from r itself.
func (c countingWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(c.w, r)
	c.prog.add(n)
	return n, err
}

// WriteRange passes the range on to the writer below, counting what it
// wrote, so that a file section reaches a file OUT kernel to kernel.
func (c countingWriter) WriteRange(f *os.File, off int64, n int) (int, error) {
	rw, ok := c.w.(filesection.RangeWriter)
	if !ok {
		return 0, errors.ErrUnsupported
	}
	k, err := rw.WriteRange(f, off, n)
	c.prog.add(int64(k))
	return k, err
}

// openInput opens IN before the progress starts, where that tells its
// size: a local file's size; for a URL the object itself (the .npy to ext
// 110 stream, obj) or its arrays (fa). Whatever it opened, close releases.
func (o convertOptions) openInput(e env, in string) (total int64, obj *remote.Object, fa *fileArrays, err error) {
	switch {
	case isRegularFile(in):
		fi, _ := os.Stat(in)
		return fi.Size(), nil, nil, nil
	case remote.IsURL(in) && o.from == formatNPY && !o.transformed() && o.maxHeader == 0 && o.to == formatMsgpack && o.toDialect == 0 && !o.objects:
		if obj, err = remoteOptions(o.remote, e.stderr).Open(context.Background(), in); err != nil {
			return 0, nil, nil, err
		}
		return obj.Size(), obj, nil, nil
	case remote.IsURL(in) && o.from == formatMsgpack && o.to == formatNPY && o.member == "" && !o.transformed() && !o.objects:
		// A lone ext 110 array streams into the .npy, as from a file.
		if obj, err = remoteOptions(o.remote, e.stderr).Open(context.Background(), in); err != nil {
			return 0, nil, nil, err
		}
		var first [1]byte
		if _, err := obj.ReadAt(first[:], 0); err == nil && isExtHeader(first[0]) {
			return obj.Size(), obj, nil, nil
		}
		obj.Close()
		if fa, err = openInputArrays(in, e.stdin, o.from, o.inputOptions(e)); err != nil {
			return 0, nil, nil, err
		}
		return fa.size, nil, fa, nil
	case remote.IsURL(in):
		if fa, err = openInputArrays(in, e.stdin, o.from, o.inputOptions(e)); err != nil {
			return 0, nil, nil, err
		}
		return fa.size, nil, fa, nil
	}
	return 0, nil, nil, nil
}

func (o convertOptions) convert(e env, w io.Writer, in string) (err error) {
	total, obj, fa, err := o.openInput(e, in)
	if err != nil {
		return err
	}
	if fa != nil {
		defer fa.close()
	}
	if obj != nil {
		defer obj.Close()
	}
	prog := e.startProgress("convert "+displayName(in), total, o.quiet)
	defer prog.finish()
	// An ext 110 object from a stream, or a Fortran-order array, is held
	// whole: within --max-size, as every array read into memory is.
	opts := ndpack.ConvertOptions{Ext110: ext110.Options{AllowNonstandard: o.allowNonstandard}, MaxSize: o.inputOptions(e).arrayBound()}
	if done, err := o.direct(e, w, in, obj, prog, opts); done {
		return err
	}
	w = countingWriter{w, prog}
	if fa == nil {
		if fa, err = openInputArrays(in, e.stdin, o.from, o.inputOptions(e)); err != nil {
			return err
		}
		defer fa.close()
	}
	fa.withRows(o.rows)
	fa.withFieldAndType(o.field, o.astype)
	arrays, err := o.pickFrom(fa)
	if err != nil {
		return err
	}
	defer func() {
		if err == nil {
			o.warnSkipped(e, in, fa)
		}
	}()
	switch o.to {
	case formatNPY:
		return writeNPYOut(w, arrays)
	case formatMsgpack:
		return o.writeMsgpackOut(w, arrays, opts.Ext110)
	}
	return o.writeNPZOut(w, in, arrays)
}

// direct converts .npy <-> ext 110 on their own paths, measured at the
// speed of cp, when the conversion is one of those (done).
func (o convertOptions) direct(e env, w io.Writer, in string, obj *remote.Object, prog *progress, opts ndpack.ConvertOptions) (done bool, err error) {
	if !(isRegularFile(in) || o.from == formatNPY || obj != nil) || o.toDialect != 0 || o.objects || o.transformed() || o.maxHeader != 0 {
		return false, nil
	}
	counted := countingWriter{w, prog}
	switch {
	case o.from == formatMsgpack && o.to == formatNPY && obj != nil:
		rc := obj.Stream(0, obj.Size())
		defer rc.Close()
		return true, opts.Ext110ToNPY(counted, rc)
	case o.from == formatNPY && o.to == formatMsgpack && obj != nil:
		// One request streams the whole object, counted as it is read:
		// the output's ReadFrom would count it only at the end. Written
		// through a 1 MiB buffer, which reads the body in large pieces
		// too.
		rc := obj.Stream(0, obj.Size())
		defer rc.Close()
		bw := bufio.NewWriterSize(w, 1<<20)
		if err := opts.NPYToExt110(bw, io.TeeReader(rc, prog)); err != nil {
			return true, err
		}
		return true, bw.Flush()
	case o.from == formatNPY && o.to == formatMsgpack:
		return true, withInput(e, in, func(r io.Reader) error { return opts.NPYToExt110(counted, r) })
	case o.from == formatMsgpack && o.to == formatNPY && o.member == "" && isRegularFile(in) && startsWithExt(in):
		return true, withInput(e, in, func(r io.Reader) error { return opts.Ext110ToNPY(counted, r) })
	}
	return false, nil
}

// writeNPYOut writes the one array of arrays as an .npy.
func writeNPYOut(w io.Writer, arrays []arraySource) error {
	if len(arrays) != 1 {
		return fmt.Errorf("%d arrays (%s): an .npy holds one; pick it as IN:NAME or with --member", len(arrays), names(arrays))
	}
	if arrays[0].objects != nil {
		a, err := arrays[0].objects()
		if err != nil {
			return err
		}
		return npybridge.WriteObjects(w, a)
	}
	return withData(arrays[0], func(dt ndarray.DType, shape []int, r io.Reader) error {
		return npybridge.WriteFrom(w, dt, shape, r)
	})
}

// writeMsgpackOut writes arrays as a msgpack document: one array alone,
// or a map of their names, as ext 110 or --to's dialect.
func (o convertOptions) writeMsgpackOut(w io.Writer, arrays []arraySource, ext110Opts ext110.Options) error {
	ext := ext110.NewEncoder(w)
	ext.Options = ext110Opts
	encodeFrom := ext.EncodeFrom
	switch o.toDialect {
	case 0:
	case dialect.GR00T:
		encodeFrom = func(dt ndarray.DType, shape []int, r io.Reader) error { return gr00tmap.EncodeFrom(w, dt, shape, r) }
	default:
		encodeFrom = dialect.NewEncoder(w, o.toDialect).EncodeFrom
	}
	if hasObjects(arrays) {
		return o.writeObjectsMessage(w, arrays)
	}
	if len(arrays) == 1 && (arrays[0].name == "" || o.member != "") {
		return withData(arrays[0], encodeFrom)
	}
	if err := writeMapHeader(w, len(arrays)); err != nil {
		return err
	}
	for _, a := range arrays {
		if err := writeString(w, a.name); err != nil {
			return err
		}
		if err := withData(a, encodeFrom); err != nil {
			return fmt.Errorf("array %q: %w", a.name, err)
		}
	}
	return nil
}

// writeNPZOut writes arrays as the members of an .npz, a lone array
// named by --name or after IN.
func (o convertOptions) writeNPZOut(w io.Writer, in string, arrays []arraySource) error {
	for _, a := range arrays {
		if err := checkMemberName(a.name, "array"); err != nil {
			return err
		}
	}
	z := npybridge.NewNPZWriter(w, o.compress)
	z.Level = o.level
	for _, a := range arrays {
		name := a.name
		if name == "" || (o.name != "" && len(arrays) == 1) {
			name = o.lonelyName(in) // --name names the one array put in, a picked member too
		}
		if a.objects != nil {
			oa, err := a.objects()
			if err == nil {
				err = z.WriteObjects(name, oa)
			}
			if err != nil {
				return err
			}
			continue
		}
		if err := withData(a, func(dt ndarray.DType, shape []int, r io.Reader) error {
			return z.WriteFrom(name, dt, shape, r)
		}); err != nil {
			return err
		}
	}
	return z.Close()
}

// withInput opens IN ("-" is standard input) for a converter.
func withInput(e env, in string, f func(io.Reader) error) error {
	if in == "-" {
		return f(e.stdin)
	}
	file, err := os.Open(in)
	if err != nil {
		return err
	}
	defer file.Close()
	return f(file)
}

// startsWithExt reports whether the file starts with an ext header (one ext
// 110 object) rather than a map of them.
func startsWithExt(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return true // let the converter report it
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.Read(b[:]); err != nil {
		return true
	}
	return isExtHeader(b[0])
}

// pickFrom is pick over fa's arrays. The one --member names is described
// alone where fa can find it by name (an .npz, by its directory), so that
// one member of a remote archive costs its own request, not one per member.
func (o convertOptions) pickFrom(fa *fileArrays) ([]arraySource, error) {
	if o.member != "" {
		switch a, found, known := fa.named(o.member); {
		case found:
			return []arraySource{a}, nil
		case known:
			return nil, fmt.Errorf("no array %q; it holds %s", o.member, strings.Join(fa.memberNames, ", "))
		}
	}
	return o.pick(fa.all())
}

// pick returns the arrays to convert: the one --member names, or all.
func (o convertOptions) pick(arrays []arraySource) ([]arraySource, error) {
	if o.member != "" {
		for _, a := range arrays {
			if a.name == o.member {
				return []arraySource{a}, nil
			}
		}
		return nil, fmt.Errorf("no array %q; it holds %s", o.member, names(arrays))
	}
	// The values of a message that are not arrays (a prompt, an id, the
	// lists and maps whose arrays are members of their own), and the
	// members of an .npz that are not .npy files (a notes.txt), are left
	// out.
	var picked []arraySource
	for _, a := range arrays {
		if notAnArray(a) {
			continue
		}
		if a.objects != nil {
			a.err = nil // read through its objects reader
		}
		picked = append(picked, a)
	}
	if len(picked) == 0 && len(arrays) > 0 {
		return nil, arrays[0].err
	}
	for _, a := range picked {
		if a.err != nil && len(picked) == 1 {
			return nil, a.err
		}
		if a.err != nil {
			return nil, fmt.Errorf("%w (convert the others one at a time, as IN:NAME)", a.err)
		}
	}
	return picked, nil
}

// notAnArray reports whether a is a value of a message that is not an
// array, or an .npz member that is not an .npy file.
func notAnArray(a arraySource) bool {
	return a.err != nil && (errors.Is(a.err, errNotArray) || errors.Is(a.err, ndarray.ErrNotArray))
}

// warnSkipped says, in one line on standard error, which members of an
// .npz IN that are not .npy files a conversion of the whole archive
// leaves out.
func (o convertOptions) warnSkipped(e env, in string, fa *fileArrays) {
	if o.member != "" || fa.format != formatNPZ {
		return
	}
	var skipped []string
	for _, a := range fa.all() {
		if a.err != nil && errors.Is(a.err, ndarray.ErrNotArray) {
			skipped = append(skipped, peertext.Line(a.name))
		}
	}
	if len(skipped) == 0 {
		return
	}
	what := fmt.Sprintf("%d members that are not .npy files", len(skipped))
	if len(skipped) == 1 {
		what = "a member that is not an .npy file"
	}
	fmt.Fprintf(e.stderr, "ndpack: warning: %s\n", oneLine(fmt.Sprintf("%s: %s left out (%s): ndpack converts the arrays",
		displayName(in), what, strings.Join(skipped, ", "))))
}

// names lists the names of arrays for a message, each escaped
// (escapeText): a name from a file may hold anything.
func names(arrays []arraySource) string {
	var s []string
	for _, a := range arrays {
		s = append(s, peertext.Line(a.name))
	}
	return strings.Join(s, ", ")
}

// lonelyName names a lone array put into an .npz: --name, else IN's base
// name without its extension, else arr_0 as np.savez names it.
func (o convertOptions) lonelyName(in string) string {
	if o.name != "" {
		return o.name
	}
	if in == "-" {
		return "arr_0"
	}
	base := filepath.Base(in)
	if remote.IsURL(in) {
		// The object's name: not its query (a signature), nor a user.
		base = path.Base(urlPath(in))
	}
	if base == "/" || base == "." {
		return "arr_0"
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// withData hands an array's dtype, shape and row-major data to write: a
// Fortran-order array is read whole and transposed as it arrives first.
func withData(a arraySource, write func(ndarray.DType, []int, io.Reader) error) error {
	if a.err != nil {
		return a.err
	}
	if a.whole {
		if err := a.fits(); err != nil {
			return err
		}
	}
	if a.fortran {
		arr, err := readArray(a)
		if err != nil {
			return err
		}
		// A bytes.Reader has the Len and WriteTo with which the encoders
		// write the data in one call instead of copying it in chunks.
		return write(arr.DType, arr.Shape, bytes.NewReader(arr.Data))
	}
	rc, err := a.open()
	if err != nil {
		return err
	}
	defer rc.Close()
	return write(a.dtype, a.shape, rc)
}

// readArray reads an array whole, row-major. The size its header claims is
// allocated at once only when the input was checked to hold it (its reader
// has a Len); from standard input memory grows as the bytes arrive, so that
// a header claiming gigabytes costs what was sent.
func readArray(a arraySource) (*ndarray.Array, error) {
	if a.err != nil {
		return nil, a.err
	}
	if err := a.fits(); err != nil {
		return nil, err
	}
	rc, err := a.open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	h := &npybridge.Header{DType: a.dtype, Shape: a.shape, FortranOrder: a.fortran, DataOffset: a.dataOffset}
	return h.ReadArray(rc)
}

// writeMapHeader and writeString write the msgpack framing of a map of
// names to arrays, as msgpack-python packs it.
func writeMapHeader(w io.Writer, n int) error {
	var b [5]byte
	_, err := w.Write(mpwire.AppendMapHeader(b[:0], n))
	return err
}

func writeString(w io.Writer, s string) error {
	var b [5]byte
	_, err := w.Write(mpwire.AppendString(b[:0], s))
	return err
}

// errNotArrays is a msgpack document that holds neither an array nor a map.
var errNotArrays = errors.New("not an array or a map of names to arrays")

// errNotArray is a value of a msgpack map that is not an array.
var errNotArray = errors.New("not an array")

func hasObjects(arrays []arraySource) bool {
	for _, a := range arrays {
		if a.objects != nil {
			return true
		}
	}
	return false
}

// writeObjectsMessage writes arrays, some of them object arrays, as one
// msgpack value (one array) or a map of their names: an object array's
// elements as plain msgpack nested by its shape, the arrays among and
// beside them as --to says (ext 110 or a dialect).
func (o convertOptions) writeObjectsMessage(w io.Writer, arrays []arraySource) error {
	msg := ndpack.MessageOptions{Encoding: o.toDialect, AllowNonstandard: o.allowNonstandard}
	enc := ext110.Options{AllowNonstandard: o.allowNonstandard}.Append
	switch o.toDialect {
	case 0:
	case dialect.GR00T:
		enc = gr00tmap.Append
	default:
		enc = o.toDialect.Append
	}
	// write writes a's value after key (its name in the map, or nothing),
	// once it is known to be writable.
	write := func(a arraySource, key func() error) error {
		if a.objects != nil {
			oa, err := a.objects()
			if err != nil {
				return err
			}
			p := newPlainWriter(w, enc)
			if err := p.checkArray(oa); err != nil {
				return err
			}
			if err := key(); err != nil {
				return err
			}
			return p.writeChecked(oa)
		}
		arr, err := readArray(a)
		if err != nil {
			return err
		}
		b, err := msg.MarshalMessage(arr)
		if err != nil {
			return err
		}
		if err := key(); err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	if len(arrays) == 1 && (arrays[0].name == "" || o.member != "") {
		return write(arrays[0], func() error { return nil })
	}
	if err := writeMapHeader(w, len(arrays)); err != nil {
		return err
	}
	for _, a := range arrays {
		if err := write(a, func() error { return writeString(w, a.name) }); err != nil {
			return fmt.Errorf("array %q: %w", a.name, err)
		}
	}
	return nil
}
