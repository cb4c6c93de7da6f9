package connset

import (
	"bufio"
	"errors"
	"net"
	"time"
)

// ProbeIdleAfter is how long a client's connection must have carried
// nothing before the client checks, before its next call, that the server
// has not closed it (an idle timeout, or room made at the connection
// limit, which closes the connection idle longest). Where the socket
// cannot be asked without waiting, the check waits up to a millisecond on
// a live connection: not worth paying between calls in a tight loop.
const ProbeIdleAfter = 100 * time.Millisecond

// socketState is what a look at a socket's receive queue, without
// waiting and without taking anything from it, found.
type socketState int

const (
	socketUnknown  socketState = iota // cannot be asked without waiting
	socketQuiet                       // open, nothing to read
	socketReadable                    // bytes wait to be read
	socketClosed                      // the peer hung up (or reset)
)

// PeerClosed reports whether the peer has closed conn, read through br,
// while nothing was being exchanged. What br holds and what arrives at
// once is looked past if skippable says so (the empty frames that end yaq
// answers, which its clients read only at the next call; nil skips
// nothing); anything else is something to read, and the connection is
// taken for open.
//
// On TCP sockets of the common Unix systems the kernel is asked directly
// (a peeking, non-blocking receive), so the answer does not depend on how
// soon this goroutine runs. Elsewhere a read with a millisecond's deadline
// stands in: a closed connection answers it at once, a live one times
// out; but on a machine so loaded that the deadline passes before the
// read starts, the read fails without looking and a closed connection is
// taken for open (the call then meets the closing).
func PeerClosed(conn net.Conn, br *bufio.Reader, skippable func(buffered []byte) bool) bool {
	for {
		if n := br.Buffered(); n > 0 {
			b, _ := br.Peek(n)
			if skippable == nil || !skippable(b) {
				return false
			}
		}
		switch peekSocket(conn) {
		case socketQuiet:
			return false
		case socketClosed:
			return true
		case socketUnknown:
			return peerClosedByDeadline(conn, br, skippable)
		}
		// Readable: the bytes are there, so this read does not wait.
		if _, err := br.Peek(br.Buffered() + 1); err != nil {
			return !errors.Is(err, bufio.ErrBufferFull) // a buffer full of skippable bytes: let the call meet them
		}
	}
}

// peerClosedByDeadline is PeerClosed where the socket cannot be asked
// without waiting.
func peerClosedByDeadline(conn net.Conn, br *bufio.Reader, skippable func(buffered []byte) bool) bool {
	conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	defer conn.SetReadDeadline(time.Time{})
	for {
		if n := br.Buffered(); n > 0 {
			b, _ := br.Peek(n)
			if skippable == nil || !skippable(b) {
				return false
			}
		}
		_, err := br.Peek(br.Buffered() + 1)
		var ne net.Error
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return false // a buffer full of skippable bytes: let the call meet them
		case errors.As(err, &ne) && ne.Timeout():
			return false
		case err != nil:
			return true
		}
	}
}
