package yaq

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/ndarray"
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
	if !errors.Is(err, ndarray.ErrMalformed) {
		t.Errorf("%v is not ndarray.ErrMalformed", err)
	}
}

// A peer of some other binary protocol, whose first bytes would announce a
// frame of gigabytes, is reported as not speaking yaq, with what it sent,
// not as a frame over the limit (which --max-size cannot help).
func TestDialBinaryPeer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.Write([]byte("\xab\xcd\xef\x01\x37\x91\x05binary banner\x00\x00"))
		c.Read(make([]byte, 100)) // until the client gives up
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := Dial(ctx, l.Addr().String(), nil)
	if err == nil {
		c.Close()
		t.Fatal("Dial of a binary peer succeeded")
	}
	want := `does not speak yaq (Avro RPC frames): it sent "\xab\xcd\xef\x017\x91\x05binary banner\x00\x00" first, which is no handshake answer (as a frame it would be 2882400001 bytes)`
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q\ndoes not contain %q", err, want)
	}
	if !errors.Is(err, ndarray.ErrMalformed) || errors.Is(err, ndarray.ErrTooLarge) {
		t.Errorf("%v is not ndarray.ErrMalformed alone", err)
	}
}
