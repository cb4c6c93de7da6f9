package yaqrpc

import (
	"context"
	"io"
	"log"
	"testing"

	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/vmihailenco/msgpack/v5"
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
	srv := NewServer()
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
		n, err := mpwalk.Len(in, mpwalk.Limits{MaxDepth: DefaultMaxDepth, MaxExpansion: DefaultMaxExpansion})
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
