// Package refs makes and reads kerchunk reference files (version 1, the
// format fsspec's "reference://" file system reads): Zarr v2 arrays whose
// chunks are byte ranges of other files. References to .npy files and to
// the stored members of .npz archives let zarr-python, xarray and Dask
// read the arrays where they lie, on a local disk, an HTTP server or in
// S3, nothing copied.
//
// A Builder makes a Set: each .npy an array named after its file, an
// .npz's stored members the arrays of a group named after the archive,
// or many .npy files of one dtype and shape stacked into one array along
// a new first axis (one per shot or frame, as acquisition runs write
// them); C-order arrays may be cut into chunks of rows, so that Dask
// reads one large file in parallel. Only headers are read: an .npy costs
// one request of 4 KiB, an .npz its directory and one per member.
//
// Parse reads a reference file, bounded in size and nesting before it is
// decoded, and Options.Store serves a Set to the zarr package's readers,
// fetching each range as it is read, checked against the file it points
// into.
package refs
