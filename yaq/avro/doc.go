// Package avro is the Avro codec yaq speaks: schemas, values in Avro's
// binary encoding and the YEP-113 ndarray record, as yaq's daemons
// (yaqd-core, on fastavro and python3-avro) and its client (yaqc) write
// them. It knows nothing of yaq's traits or daemons; package yaq is the
// protocol built on it, and holds Avro RPC's frames and handshake records.
//
// What it implements, and from which text:
//
//   - Schemas and values, from the Apache Avro 1.x specification
//     ("Schema Declaration", "Data Serialization": binary encoding):
//     ParseSchema, Names, Schema.Decode, Schema.Append, Schema.AppendPieces.
//     Every schema is checked as it is parsed (unknown and doubly defined
//     names, unions in unions, fixed sizes, records that could never end),
//     so that what a peer sends cannot make a schema that is costly to
//     walk. Every length and count is checked against the bytes present
//     and nesting is bounded before anything is allocated, and the Go
//     memory a value decodes to is bounded by a small multiple of its
//     bytes (ndarray.ErrTooLarge past it).
//   - Protocols (.avpr), from the specification's "Protocol Declaration":
//     ParseProtocol, with the whole JSON object kept for the attributes
//     applications add (yaq's traits, config and state).
//   - The ndarray record of YEP-113 (yaq's "ndarray" logical type): its
//     shape as array<int>, its typestr, its C-ordered bytes and the array
//     interface version, 3, byte for byte as fastavro and python3-avro
//     write it: ArraySchema, AppendArray, DecodeArray. Schema.Decode
//     gives every value of that record as an *ndarray.Array aliasing the
//     input, and Schema.Append takes one.
//   - For Avro RPC's framing ("Protocol Wire Format"), which package yaq
//     holds (its client and daemon are the only readers of frames), the
//     package finds where a value ends in bytes that arrive a frame at a
//     time, so that a value split over frames is read with work linear in
//     its bytes however it is cut.
//
// Errors are *ndarray.Error, "avro: CLASS at byte N: DETAIL", whose class is one
// of the sentinels (ndarray.ErrTruncated, shared with the module's other codecs,
// ndarray.ErrMalformed, ndarray.ErrTooLarge, ErrDoesNotFit, ndarray.ErrNonstandard, ErrSchema) for
// errors.Is.
package avro
