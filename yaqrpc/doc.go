// Package yaqrpc is yaq-RPC (YEP-100): msgpack RPC between instrument
// daemons and their clients, with arrays as msgpack extension type 110
// (YEP-110, package ext110).
//
// A request is a msgpack map {"ver": "1.0", "method": str, "params": array
// or map (optional), "id": int or str}; without an id it is a notification
// and is never answered. A response is {"ver": "1.0", "id": ..., "result":
// ...} or {"ver": "1.0", "id": ..., "error": {"code", "message", "data"}}
// with the JSON-RPC error codes. Messages are msgpack objects back to back
// on a TCP connection, with no other framing.
//
// Server dispatches requests to Handler functions, one goroutine per
// connection, and never allocates for a message more than its size limit:
// lengths are checked as the bytes arrive. Client makes context-aware calls,
// any number at once over one connection.
package yaqrpc
