// Package ext110 encodes and decodes N-dimensional arrays as msgpack
// extension type 110, as specified by YEP-110 ("N-Dimensional Array msgpack
// Extension Type", yaq): an ext object whose payload is the msgpack map
// {data, typestr, shape, version: 3} of NumPy's array interface, with data
// the C-contiguous bytes of the array.
//
// Encoding is byte-identical to the YEP's reference pack_ndarray running on
// msgpack-python 1.0: keys in the order data, typestr, shape, version;
// integers in their smallest form; the ext header msgpack-python picks for
// the payload length. Encoding refuses the dtypes outside the YEP's standard
// kinds (S, U, V, M, m) unless Options.AllowNonstandard is set.
//
// Record (structured) arrays are such a nonstandard kind, V: with
// AllowNonstandard they are written as the reference pack_ndarray writes
// them, which sends numpy's whole __array_interface__: typestr |V<itemsize>
// and a descr key holding numpy's dtype.descr as msgpack-python packs it
// (tuples become arrays: [name, format] and [name, format, shape] entries,
// [title, name] for a titled field, a nested list for a nested record,
// [base, shape] for a subarray format, ["", "|V<n>"] for padding), in the
// key order data, descr, typestr, shape, version. The bytes are those of
// pack_ndarray for every record with more than one descr entry; for a record
// of one entry (one field, no padding) the reference drops the descr and
// sends opaque |V<n> bytes, and ndpack keeps it, since a record is never
// written as a bare |V<n>. A record whose fields overlap or are out of order
// has no descr (numpy's dtype.descr refuses it) and is refused.
//
// The reference's own ext_hook cannot read what pack_ndarray writes for a
// record: it hands the unpacked map to np.array as an array interface,
// numpy builds the dtype from descr only for a void typestr, and it wants
// tuples where msgpack gives lists, so every record (with or without
// titles, nested or padded) fails with TypeError "Field elements must be 2-
// or 3-tuples, got '['x', '<i4']'" and msgpack.unpackb of the whole message
// fails with it (numpy 1.24, msgpack-python 1.0). ndpack reads what
// pack_ndarray writes: descr is read as numpy.lib.format.descr_to_dtype
// reads a list (padding skipped, offsets following), a format array is a
// subarray when its second item is a shape and a nested record otherwise,
// and the decoded dtype has the fields, offsets, padding and item size of
// the sender's. A descr that holds only padding (numpy's [["", "|V8"]] for
// a plain void) gives the plain void; a |V blob without descr is plain
// opaque bytes, as before; a descr with a typestr of another kind is
// ignored, as numpy ignores it. A descr whose records are not the typestr's
// size, or that does not parse, is an error, never a silent |V. Nesting and
// the entries over all levels are bounded (ndarray.MaxRecordDepth,
// MaxRecordFields) before anything is allocated for them.
//
// Object arrays (typestr |O; the reference sends the addresses of Python
// objects) are refused as "an object array (pickle)", in a descr field too.
//
// Decoding is tolerant where the YEP and older peers vary (any key order,
// every ext header form, data as bin or str, integers of any width, extra
// keys, strides: nil, any version) and strict where the bytes would
// otherwise lie: data whose length is not shape times item size, negative or
// overflowing dimensions, non-nil strides, bytes left over, truncation. No
// length read from the input is trusted before it is checked against the
// bytes the input actually has.
//
// # Python peers
//
// YEP-110's reference pack_ndarray and ext_hook are not in any Python
// package: they are printed in the YEP's "Reference Implementation" section
// (https://yeps.yaq.fyi/110/; the text ndpack follows is shared/specs/yep-110.txt
// beside this repository), and a Python peer pastes them in. The snippet
// leaves packb_, unpackb_, ExtType, PackException and sys undefined; bound to
// msgpack-python's, as in internal/testutil/pypeer/yep110.py, the copy
// ndpack's interop tests run, it reads what ndpack writes and writes what
// ndpack reads (Example_python shows both, byte for byte):
//
//	import sys
//	import msgpack
//	from msgpack import ExtType
//	import numpy as np  # before unpackb, or ext_hook returns ArrayInterface objects
//
//	packb_, unpackb_ = msgpack.packb, msgpack.unpackb
//
//	class PackException(Exception):
//	    pass
//
//	# ArrayInterface, pack_ndarray and ext_hook, as the YEP prints them
//
//	msg = msgpack.unpackb(b, ext_hook=ext_hook)  # b: bytes ndpack wrote
//	b = msgpack.packb({"image": image}, default=pack_ndarray)  # for ndpack
//
// Its limits are the reference's: ext_hook returns a numpy array only if
// numpy was imported before the call (otherwise an ArrayInterface object
// holding the unpacked map), each array is a copy of the message's bytes
// (np.array), records fail as described above, and pack_ndarray refuses
// arrays that are not C-contiguous and sends object arrays' addresses,
// which ndpack refuses.
//
// Importing the package registers ext 110 with
// github.com/vmihailenco/msgpack/v5, so a *ndarray.Array (or an
// ndarray.Array) can be a field, element or map value of anything passed
// to msgpack.Marshal, and msgpack.Unmarshal into an interface{} yields
// *ndarray.Array.
//
// Messages with arrays are the root package's: decode whole messages from
// outside with ndpack.MessageOptions.UnmarshalMessage (or an
// ndpack.MessageDecoder), not msgpack.Unmarshal. It checks every claimed
// count and length against the bytes present, the nesting depth, the size
// and the memory decoding would take before the msgpack library, which
// trusts counts and recurses per level, sees the bytes; it finds the
// dialects' maps too, and lets arrays alias the message (NoCopy).
package ext110
