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
// Decoding is tolerant where the YEP and older peers vary (any key order,
// every ext header form, data as bin or str, integers of any width, extra
// keys, strides: nil, any version) and strict where the bytes would
// otherwise lie: data whose length is not shape times item size, negative or
// overflowing dimensions, non-nil strides, bytes left over, truncation. No
// length read from the input is trusted before it is checked against the
// bytes the input actually has.
//
// Importing the package registers ext 110 with
// github.com/vmihailenco/msgpack/v5, so a *ndarray.Array can be a field,
// element or map value of anything passed to msgpack.Marshal, and
// msgpack.Unmarshal into an interface{} yields *ndarray.Array.
//
// Decode whole messages from outside with UnmarshalMessage or a
// MessageDecoder rather than msgpack.Unmarshal: they check every claimed
// count and length against the bytes present, the nesting depth, the size
// and the memory decoding would take before the msgpack library, which
// trusts counts and recurses per level, sees the bytes.
package ext110
