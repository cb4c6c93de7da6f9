package main

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"testing"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/pickle"
	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// FuzzObjectConversion: an object array's pickle, read as --objects reads
// it (under a limit of 1 MiB) and converted both ways: to plain msgpack,
// which must be one whole msgpack value, the same bytes every time, no
// bigger than the limit allows; and to .npy, which must read back to the
// same msgpack. Nothing may panic, and nothing may cost more than the
// limit. Seeded with numpy's own pickles and issue 36's hostile ones.
func FuzzObjectConversion(f *testing.F) {
	for _, c := range hostile.ObjectCases(true) {
		f.Add(c.Data)
	}
	if file, err := os.Open("../../internal/pickle/testdata/seeds.hex"); err == nil {
		sc := bufio.NewScanner(file)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 && line[0] != '#' {
				if b, err := hex.DecodeString(string(line)); err == nil {
					f.Add(b)
				}
			}
		}
		file.Close()
	}
	const limit = 1 << 20
	read := func(data []byte) (*npybridge.ObjectArray, bool) {
		v, err := pickle.Decode(data, pickle.Options{MaxAlloc: limit, MaxSize: limit, MaxDepth: 64,
			ObjectArray: func(shape []int, values []any) any { return &npybridge.ObjectArray{Shape: shape, Values: values} }})
		a, ok := v.(*npybridge.ObjectArray)
		return a, err == nil && ok
	}
	plain := func(a *npybridge.ObjectArray) ([]byte, bool) {
		var buf bytes.Buffer
		// Arrays in the machine's byte order: ndarray.__setstate__ reads
		// them so, _frombuffer does not, and both are the same values.
		p := newPlainWriter(&buf, func(dst []byte, a *ndarray.Array) ([]byte, error) {
			n, err := a.ToOrder(ndarray.NativeOrder())
			if err != nil {
				return dst, err
			}
			return ext110.Options{AllowNonstandard: true}.Append(dst, n)
		})
		if p.checkArray(a) != nil {
			return nil, false
		}
		if err := p.writeChecked(a); err != nil {
			return nil, false
		}
		return buf.Bytes(), true
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, ok := read(in)
		if !ok {
			return
		}
		out, ok := plain(a)
		if ok {
			if len(out) > 2*limit+4096 {
				t.Fatalf("%d bytes of msgpack from values under the limit of %d", len(out), limit)
			}
			if n, err := mpwalk.Len(out, mpwalk.Limits{MaxDepth: 4096}); err != nil || n != len(out) {
				t.Fatalf("the msgpack written is not one value: %d of %d bytes: %v", n, len(out), err)
			}
			again, _ := plain(a)
			if !bytes.Equal(out, again) {
				t.Fatal("two writes of the same values differ")
			}
		}
		npy, err := npybridge.AppendObjects(nil, a)
		if err != nil {
			return
		}
		if len(npy) > 4*len(in)+4096 {
			t.Fatalf("%d bytes of .npy from a pickle of %d", len(npy), len(in))
		}
		back, err := npybridge.ReadOptions{AllowObjects: true, MaxObjectsSize: 2 * limit}.ReadObjects(bytes.NewReader(npy))
		if err != nil {
			t.Fatalf("our own .npy does not read back: %v", err)
		}
		if ok {
			out2, ok2 := plain(back)
			if !ok2 || !bytes.Equal(out, out2) {
				t.Fatalf("read back from .npy, the values write other msgpack")
			}
		}
	})
}
