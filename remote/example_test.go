package remote_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ndpack/ndpack/remote"
)

// An object on an HTTP server read as an io.ReaderAt: each read is one
// Range request for the bytes asked for.
func ExampleOptions_Open() {
	data := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "x.bin", time.Unix(0, 0), bytes.NewReader(data))
	}))
	defer srv.Close()

	obj, err := remote.Options{}.Open(context.Background(), srv.URL+"/x.bin")
	if err != nil {
		fmt.Println(err)
		return
	}
	p := make([]byte, 6)
	if _, err := obj.ReadAt(p, 10); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(obj.Size(), string(p))
	// Output: 36 abcdef
}
