// Package openpi speaks the websocket protocol of robot policy servers as
// Physical Intelligence's openpi serves them (WebsocketPolicyServer) and
// robots call them (openpi-client's WebsocketClientPolicy), both ways: Dial
// connects a Go robot or service to a policy server, and Server serves a Go
// Policy to Python robots.
//
// The wire: a websocket without compression; the server first sends its
// metadata as one binary message; then each binary message from the client
// is an observation, a msgpack map with arrays in openpi's msgpack_numpy
// form ({"__ndarray__": True, "data": bytes, "dtype": typestr, "shape":
// [...]}, package dialect's OpenPI), answered by one binary message, the
// action map, to which the server adds "server_timing". A server that
// fails sends one text message, the traceback, and closes the connection
// with status 1011. GET /healthz answers 200 "OK". A client may send
// "Authorization: Api-Key KEY".
//
// Observations and actions are Go maps as the Python dicts are:
// *ndarray.Array for numpy arrays (numpy scalars arrive as 0-d arrays),
// nested map[string]any for nested dicts, and plain values. Every message
// read is bounded (MaxSize, nesting, the memory its decoded values take:
// 8 times its size and 1 MiB) before anything is allocated for it, and its
// arrays are checked against their dtype and shape; decoded arrays alias
// the message read, which Infer allocates once per answer and
// InferReusing not at all. A Server bounds, besides, what its peers hold
// together: memory (MaxMemory), connections (MaxConnections), and time
// (IdleTimeout, ReadTimeout, WriteTimeout, PingInterval). Text a peer
// sends (a traceback, a close reason) reaches errors and logs with its
// control characters escaped.
package openpi
