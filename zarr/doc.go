// Package zarr reads and writes arrays in Zarr v2 stores, as zarr-python
// 2.x keeps them: an array's metadata (.zarray, its attributes in
// .zattrs), its chunks under keys of their grid indices ("0.1.2"), a
// group's .zgroup, in any key/value store (a local directory, an object
// store, a kerchunk reference set).
//
// It knows the format and nothing of where the stores live: Meta is the
// .zarray (dtypes as Zarr v2 writes them, numpy's dtype.str or the
// descr of a record; fill values; the chunk grid), Open reads an array or
// a group's arrays from any Store, and Writer writes an array's chunks,
// compressed with numcodecs' zlib on every core, into any WritableStore,
// its metadata last. Dir is a store in a local directory, written
// atomically.
//
// Nothing a store claims sizes an allocation before its bytes are there:
// metadata is bounded in size and nesting before it is decoded, a chunk
// is read only when its stored size fits what its array's chunk can be,
// and a zlib chunk is inflated into exactly its chunk's bytes, a stream
// that decompresses to more being refused as it passes them.
package zarr
