// Package gr00tpolicy speaks the policy wire of NVIDIA Isaac GR00T's inference
// server (gr00t/policy/server_client.py: PolicyServer and PolicyClient),
// both ways: Dial connects a Go robot or gateway to a GR00T policy server,
// and Server serves a Go Policy to GR00T's Python clients.
//
// The wire: ZeroMQ, a REQ client and a REP server over TCP (port 5555 by
// default), one request and one reply in lockstep. A request is a msgpack
// map {"endpoint": NAME, "data": {...}, "api_token": TOKEN}, "data" only
// for endpoints that take input and "api_token" only when the client has
// one. The endpoints are "ping" (answering {"status": "ok", "message":
// ...}), "kill" (the server answers nil and stops), "get_action" (data
// {"observation": {...}, "options": ...}, answering the list [action,
// info]), "reset" (data {"options": ...}) and "get_modality_config"
// (answering a map of ModalityConfig objects); a server answers an unknown
// endpoint, a failure or a wrong token with {"error": TEXT}.
//
// Arrays anywhere in a message are maps {"__ndarray_class__": true,
// "as_npy": BYTES}, BYTES being what numpy's np.save(allow_pickle=False)
// writes: this package writes those bytes exactly, and reads them with
// package npybridge's reader and its bounds (any format version, Fortran
// order, records, strings; object arrays and pickles are refused, never
// unpickled). A ModalityConfig travels as {"__ModalityConfig_class__":
// true, "as_json": {...}}.
//
// Observations, actions and infos are Go maps as the Python dicts are:
// *ndarray.Array for numpy arrays, nested map[string]any for nested dicts,
// and plain values. Every message read is bounded before anything is
// allocated for it: its frames by MaxSize, its nesting, and the memory its
// decoded values take; a Server bounds besides what its peers hold
// together (MaxMemory, MaxConnections, and the timeouts). Text a peer
// sends (an error, a key) reaches errors and logs with its control
// characters escaped.
//
// ZeroMQ is spoken by the module's own ZMTP 3.1 implementation (NULL
// security, as pyzmq's sockets use by default), so that the package builds
// without cgo and refuses a frame over its limit before allocating it.
package gr00tpolicy
