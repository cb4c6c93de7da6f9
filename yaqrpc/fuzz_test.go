package yaqrpc

import (
	"context"
	"io"
	"log"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/ndpack/ndpack/internal/mpwalk"
)

func FuzzDispatch(f *testing.F) {
	for _, m := range []any{
		map[string]any{"ver": "1.0", "method": "echo", "id": 1, "params": []any{1}},
		map[string]any{"ver": "1.0", "method": "add", "id": "x", "params": map[string]any{"a": 1, "b": 2}},
		map[string]any{"ver": "1.0", "method": "note"},
		[]any{1, 2},
	} {
		b, _ := msgpack.Marshal(m)
		f.Add(b)
	}
	srv := &Server{}
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.Handle("echo", func(_ context.Context, r *Request) (any, error) { v, _ := r.Param(0, "v"); return v, nil })
	srv.Handle("add", func(_ context.Context, r *Request) (any, error) {
		a, err := ParamAs[int64](r, 0, "a")
		if err != nil {
			return nil, err
		}
		b, err := ParamAs[int64](r, 1, "b")
		return a + b, err
	})
	f.Fuzz(func(t *testing.T, in []byte) {
		// As the server does: only bytes the walker framed reach dispatch.
		n, err := mpwalk.Len(in, mpwalk.Limits{MaxDepth: defaultMaxDepth, MaxExpansion: defaultMaxExpansion})
		if err != nil {
			return
		}
		resp := srv.dispatch(in[:n])
		if resp == nil {
			return
		}
		if _, err := msgpack.Marshal(resp); err != nil {
			t.Fatalf("response cannot be encoded: %v", err)
		}
	})
}

// FuzzParseResponse: the client's reading of a response envelope never
// panics, and a result it finds is a slice of the message.
func FuzzParseResponse(f *testing.F) {
	for _, v := range []any{
		resultResponse{Version, int64(3), []any{1.5, "x"}},
		errorResponse{Version, "a", Errorf(CodeInvalidParams, "bad")},
		errorResponse{Version, nil, Errorf(CodeInvalidRequest, "too large")},
	} {
		b, _ := msgpack.Marshal(v)
		f.Add(b)
	}
	f.Add([]byte{0x83, 0xa2, 'i', 'd', 0xcf, 1, 2, 3, 4, 5, 6, 7, 8, 0xa6, 'r', 'e', 's', 'u', 'l', 't', 0xc0, 0xa3, 'v', 'e', 'r', 0xa0})
	f.Fuzz(func(t *testing.T, in []byte) {
		n, err := mpwalk.Len(in, mpwalk.Limits{MaxDepth: defaultMaxDepth})
		if err != nil {
			return // the walker refuses it before parseResponse sees it
		}
		resp, err := parseResponse(in[:n])
		if err != nil {
			return
		}
		if resp.Result != nil && (len(resp.Result) == 0 || len(resp.Result) > n) {
			t.Fatalf("result of %d bytes from a %d-byte message", len(resp.Result), n)
		}
	})
}
