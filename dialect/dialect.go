// Package dialect encodes and decodes N-dimensional arrays as the plain
// msgpack maps that Python services send in place of an ext type:
//
//   - msgpack-numpy (msgpack_numpy.encode/decode, also spaCy's srsly):
//     {b'nd': True, b'type': dtype.str, b'kind': b”, b'shape': [..],
//     b'data': bin}, and for record (structured) and other void arrays
//     {b'nd': True, b'type': dtype.descr, b'kind': b'V', ...};
//   - OpenPI (openpi_client.msgpack_numpy, robot policy servers):
//     {b'__ndarray__': True, b'data': bin, b'dtype': dtype.str,
//     b'shape': [..]}.
//
// Encoding is byte-identical to what those packers write with msgpack-python
// 1.0 and use_bin_type=True: bin keys in their key order, the typestr as str,
// the data as bin, integers in their smallest form. Decoding tolerates what
// senders vary: keys and data as bin or str (older senders use str), any key
// order, integers of any width, extra keys; and numpy scalars (msgpack-numpy
// {b'nd': False, ...}, OpenPI {b'__npgeneric__': True, ...}) become 0-d
// arrays. It is strict where the bytes would otherwise lie, as ext110 is:
// data whose length is not shape times item size, negative or overflowing
// dimensions, and object arrays (kind b'O', or an |O field), whose data is a
// pickle (or Python object addresses) and is never read. No length from the
// input is used before it is checked against the bytes the input holds.
//
// Records travel in msgpack-numpy's form, both ways: type is numpy's
// dtype.descr as msgpack-python packs it ([name, format] and [name, format,
// shape] entries, [title, name] for a titled field, nested lists for nested
// records, [base, shape] for a subarray format, ["", "|V<n>"] for padding),
// kind b'V', byte-identical with msgpack_numpy.encode; a plain |V<n> array
// goes as the descr [["", "|V<n>"]], as msgpack-numpy sends it. The descr is
// read as numpy.lib.format.descr_to_dtype reads it (padding skipped,
// offsets following), so the record keeps its fields, offsets, padding and
// item size, and a list of padding only is the plain void. A record with
// no fields (numpy's {'names': [], 'itemsize': 8}) has the plain void's
// descr [("", "|V8")] and typestr in numpy itself, so it goes as the same
// bytes msgpack_numpy.encode writes for both and comes back as |V8: the
// wire cannot tell them apart. msgpack-numpy's
// own decode is looser: it makes a field of each padding entry (f1, ...),
// fails on titles (TypeError) and on subarray formats (IndexError), and
// turns a plain |V8 into the record [('f0', 'V8')]; ndpack writes exactly
// what msgpack-numpy writes all the same. A descr list without kind, as
// older msgpack-numpy versions sent it, is read too. OpenPI cannot carry
// records (its map has a typestr only, and its packer refuses kind V):
// encoding one fails with ErrStructured, and so does an OpenPI map with a
// descr list.
//
// The package depends only on ndarray and the msgpack wire format.
package dialect

import (
	"errors"
	"fmt"

	"github.com/ndpack/ndpack/internal/codecerr"
	"github.com/ndpack/ndpack/ndarray"
)

// Dialect is a convention for an array as a msgpack map.
type Dialect int

const (
	// MsgpackNumpy is msgpack-numpy's map: nd, type, kind, shape, data.
	MsgpackNumpy Dialect = iota + 1
	// OpenPI is openpi_client's map: __ndarray__, data, dtype, shape.
	OpenPI
)

// String returns the dialect's name as the command line spells it:
// "msgpack-numpy" or "openpi".
func (d Dialect) String() string {
	switch d {
	case MsgpackNumpy:
		return "msgpack-numpy"
	case OpenPI:
		return "openpi"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// Parse returns the dialect a name ("msgpack-numpy" or "openpi", as String
// returns them) stands for. It also takes "msgpack_numpy", the Python
// module's name. Any other name fails, with an error that names the two and
// matches no sentinel.
func Parse(name string) (Dialect, error) {
	switch name {
	case "msgpack-numpy", "msgpack_numpy":
		return MsgpackNumpy, nil
	case "openpi":
		return OpenPI, nil
	}
	return 0, fmt.Errorf("dialect: unknown dialect %q (want msgpack-numpy or openpi)", name)
}

// Sentinel errors; every error of the package wraps one, for errors.Is.
// Errors about the array itself also wrap the ndarray sentinel. The classes
// every codec reports are ndarray's: ndarray.ErrNotArray (the input is not
// a map of either dialect), ErrMalformed (the map has a marker but not a
// valid array: missing or mistyped keys, data that does not match the
// shape, bytes left over), ErrTruncated.
var (
	// ErrPickle: a msgpack-numpy object array (kind b'O'), whose data is a
	// Python pickle, or an object (|O) typestr or record field; it is never
	// unpickled.
	ErrPickle = errors.New("object array (pickle)")
	// ErrStructured: a record (structured) array where the dialect cannot
	// carry one: encoding it as OpenPI, or an OpenPI map whose dtype is a
	// descr list (msgpack-numpy carries records).
	ErrStructured = errors.New("structured dtype")
	// ErrUnsupported: encoding an array the dialect's packer refuses
	// (OpenPI: complex; msgpack-numpy: datetime, timedelta, a record whose
	// fields overlap, which has no descr list).
	ErrUnsupported = errors.New("not sendable in this dialect")
)

// The shared classes as this package words them.
var (
	errNotArray  = codecerr.Class("not a dialect array", ndarray.ErrNotArray)
	errMalformed = codecerr.Class("malformed array map", ndarray.ErrMalformed)
)

func errAt(class error, off int, format string, args ...any) error {
	return &ndarray.Error{Pkg: "dialect", Err: class, Offset: int64(off), Detail: fmt.Sprintf(format, args...)}
}

func wrapAt(class error, off int, cause error) error {
	return &ndarray.Error{Pkg: "dialect", Err: class, Offset: int64(off), Cause: cause}
}
