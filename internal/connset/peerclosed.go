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
// limit, which closes the connection idle longest). The check waits up to
// a millisecond on a live connection: not worth paying between calls in a
// tight loop.
const ProbeIdleAfter = 100 * time.Millisecond

// PeerClosed reports whether the peer has closed conn, read through br,
// while nothing was being exchanged. What br holds and what arrives at
// once is looked past if skippable says so (the empty frames that end yaq
// answers, which its clients read only at the next call; nil skips
// nothing); anything else is something to read, and the connection is
// taken for open. A closed connection answers the read at once; a live one
// times out after a millisecond, because a deadline already past fails
// without reading at all.
func PeerClosed(conn net.Conn, br *bufio.Reader, skippable func(buffered []byte) bool) bool {
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
