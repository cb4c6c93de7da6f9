package yaq

import (
	"context"
	"errors"
	"github.com/ndpack/ndpack/yaq/avro"
	"net"
	"strings"
	"testing"
	"time"
)

// A peer that is not a yaq daemon (here one answering as an HTTP server
// does) is reported as such, with what it sent, not as a frame of
// billions of bytes.
func TestDialNotYaq(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for i := 0; i < 4; i++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n400 Bad Request"))
			time.Sleep(50 * time.Millisecond)
			c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, l.Addr().String(), nil)
	if err == nil {
		c.Close()
		t.Fatal("Dial of an HTTP server succeeded")
	}
	want := `does not speak yaq (Avro RPC frames): it sent "HTTP/1.1 400 Bad Request\r\nContent-Type: text/pla"... first`
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q\ndoes not contain %q", err, want)
	}
	if !errors.Is(err, avro.ErrMalformed) {
		t.Errorf("%v is not avro.ErrMalformed", err)
	}
}
