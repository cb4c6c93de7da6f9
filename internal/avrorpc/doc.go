// Package avrorpc is Avro RPC's framing and handshake records, from the
// Avro specification's "Protocol Wire Format" ("Message Framing",
// "Handshake", "Call Format"), as yaq's daemons (yaqd-core) and its client
// (yaqc) write them: FrameReader and FrameWriter, HandshakeRequest and
// HandshakeResponse. A FrameReader reads values as yaq's peers frame them,
// including a value split over frames or frames holding several, with
// work linear in the bytes however they are cut.
//
// It is the wire under package yaq's client and daemon server, built on
// package yaq/avro's schemas and values; it is internal because only
// package yaq reads and writes frames. Where a value spans frames, it finds the
// value's end with yaq/avro's Scanner.
// Its errors are *ndarray.Error, "avro: CLASS at byte N: DETAIL", matching
// avro's sentinels (ErrTruncated, ErrTooLarge, ErrMalformed).
package avrorpc
