// Package npybridge reads and writes NumPy .npy files (format versions 1.0,
// 2.0 and 3.0, as specified by NEP 1 and numpy.lib.format) and .npz
// archives, maps them read-only or read-write, and appends rows to them.
// (Conversion between .npy files and ext 110 objects, which combines two
// codecs, is package ndpack's.)
//
// Writing is byte-identical to numpy's np.save (numpy >= 1.24): the same
// version choice, header text, growth-axis padding and 64-byte alignment.
// Reading accepts any header numpy accepts and refuses, with an error that
// says what and where, everything else: bad magic or version, malformed or
// oversized headers, negative or overflowing shapes, short data, and
// object (pickle) arrays unless asked for. No length from a file is trusted before it is
// checked against what the file holds.
//
// Record (structured) arrays are read and written as numpy does, their
// dtype.descr list in the header (record.go says which descrs np.load
// takes): nested records, subarray fields, padding and align=True layouts,
// titles, big-endian fields, field names beyond latin-1 (format 3.0). A
// record always comes back as an ndarray record dtype with its fields,
// never as a plain "|Vn".
//
// Object arrays (dtype O, their data a Python pickle) are refused unless
// ReadOptions.AllowObjects is set; ReadObjects then reads them with a
// pickle reader that builds data and runs nothing (internal/pickle):
// strings, numbers, lists, dicts, nested arrays, as np.load(allow_pickle=
// True) would return them, and any other Python global refused by name.
// What a pickle may cost (its bytes, its values, their size written out
// with shared values repeated) is bounded by ReadOptions.MaxObjectsSize.
// WriteObjects writes them as np.save does.
//
// Arrays always come back row-major: a fortran_order file is transposed on
// reading. Byte order is kept as the file has it.
package npybridge
