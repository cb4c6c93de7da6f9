// Package yaq is ndpack's side of yaq as it is spoken today: Avro RPC
// (YEP-107) between instrument daemons and clients, with arrays as the
// YEP-113 ndarray record.
//
// The Avro codec itself (schemas, values, the ndarray record) is package
// yaq/avro, which knows nothing of yaq. Package yaq is the protocol on
// top:
//
//   - Avro RPC as yaqd-core and yaqc speak it (the handshake, the call and
//     answer layout, error answers, connection limits): Client, which
//     calls a daemon as yaqc does, and Daemon, which serves a protocol with
//     Go handlers as yaqd-core does.
//
// The daemon kit that makes a Go daemon as short as a Python one (traits
// composed as yaq-traits composes them, their messages answered as
// yaqd-core answers them, Program as a daemon's main, config and state
// files) is package yaq/kit, built on this package's Daemon.
//
// The wire protocol is YEP-107 (Avro RPC for yaq) as the real programs
// speak it, checked against recorded sessions of yaqc with yaqd-fakes and
// against python3-avro.
package yaq
