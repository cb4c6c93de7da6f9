// Package pickle reads Python pickles (protocols 2 to 5) as data, never as
// code, and writes the pickles np.save writes for object arrays.
//
// An object array's data in an .npy file is a pickle, and unpickling in
// Python can call any function the stream names. Decode interprets the
// opcode stream without calling anything: it builds Go values for Python's
// data types and recognises, by name, the few numpy globals an object
// array's pickle uses (numpy.core.multiarray._reconstruct and its numpy 2
// spelling, numpy.ndarray, numpy.dtype, numpy scalars, the numeric
// _frombuffer of protocol 5, _codecs.encode and bytes for protocol 2's
// bytes, complex, set, frozenset, bytearray, copyreg._reconstructor of an
// ndarray). Any other global, a REDUCE or BUILD of anything else,
// persistent ids, extension codes and out-of-band buffers stop the read
// with an error naming the global or opcode and its byte offset.
//
// Python values become:
//
//	None                 nil
//	bool                 bool
//	int                  int64, or *big.Int beyond 64 bits
//	float                float64
//	complex              complex128
//	str                  string (UTF-8)
//	bytes, bytearray     []byte
//	list                 []any
//	tuple                Tuple
//	dict                 Dict (its items in order)
//	set, frozenset       Set
//	numpy.ndarray        *ndarray.Array (row-major), or for an object
//	                     array whatever Options.ObjectArray makes
//	                     (*ObjectArray by default)
//	numpy scalar         *ndarray.Array of shape () (np.float64(1.5) is a
//	                     0-d <f8 array, so its dtype survives)
//
// Everything is bounded by the input: each stack and memo entry costs at
// least one input byte, allocations are counted against Options.MaxAlloc,
// nesting against Options.MaxDepth, and the size of the result written out
// (a value shared through the memo counts once for each place it appears,
// a long str as much as a list) against Options.MaxSize, so that a memo
// bomb is refused rather than handed to a caller who walks or writes it.
// A dict key or set element Python could not hash (a list, dict, set or
// array) is refused, as Python's pickle.load refuses it.
package pickle
