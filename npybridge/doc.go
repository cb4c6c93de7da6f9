// Package npybridge reads and writes NumPy .npy files (format versions 1.0,
// 2.0 and 3.0, as specified by NEP 1 and numpy.lib.format) and .npz
// archives, and converts between .npy files and msgpack ext 110 objects
// (YEP-110, package ext110) without loss.
//
// Writing is byte-identical to numpy's np.save (numpy >= 1.24): the same
// version choice, header text, growth-axis padding and 64-byte alignment.
// Reading accepts any header numpy accepts and refuses, with an error that
// says what and where, everything else: bad magic or version, malformed or
// oversized headers, object (pickle) dtypes, negative or overflowing
// shapes, short data. No length from a file is trusted before it is
// checked against what the file holds.
//
// Record (structured) arrays are read and written as numpy does, their
// dtype.descr list in the header (record.go says which descrs np.load
// takes): nested records, subarray fields, padding and align=True layouts,
// titles, big-endian fields, field names beyond latin-1 (format 3.0). A
// record always comes back as an ndarray record dtype with its fields,
// never as a plain "|Vn".
//
// Arrays always come back row-major: a fortran_order file is transposed on
// reading. Byte order is kept as the file has it.
package npybridge
