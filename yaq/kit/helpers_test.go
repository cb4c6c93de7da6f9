package kit

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// freePort returns a loopback port that was free a moment ago, for a
// config file's port key.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return port
}
