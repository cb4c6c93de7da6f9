package kit_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/ndpack/ndpack/yaq"
)

// exampleConfig writes a config of one daemon, table [name] on a free
// 127.0.0.1 port plus the extra lines, into a new directory that also
// takes the daemon's state file (XDG_DATA_HOME). It returns the config's
// path, the daemon's address, and what restores the environment and
// removes the directory.
func exampleConfig(name, extra string) (config, addr string, cleanup func()) {
	dir, _ := os.MkdirTemp("", "yaq-example")
	old, had := os.LookupEnv("XDG_DATA_HOME")
	os.Setenv("XDG_DATA_HOME", dir)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	config = filepath.Join(dir, name+".toml")
	os.WriteFile(config, []byte(fmt.Sprintf("[%s]\nport = %d\nhost = \"127.0.0.1\"\n%s", name, port, extra)), 0o644)
	return config, fmt.Sprintf("127.0.0.1:%d", port), func() {
		if had {
			os.Setenv("XDG_DATA_HOME", old)
		} else {
			os.Unsetenv("XDG_DATA_HOME")
		}
		os.RemoveAll(dir)
	}
}

// dialStarted dials the daemon at addr, started a moment ago, until it
// answers (for up to a second).
func dialStarted(ctx context.Context, addr string) *yaq.Client {
	var c *yaq.Client
	var err error
	for range 100 {
		if c, err = yaq.Dial(ctx, addr, nil); err == nil {
			return c
		}
		time.Sleep(10 * time.Millisecond)
	}
	log.Fatal(err)
	return nil
}
