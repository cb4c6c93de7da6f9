package pickle

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"github.com/ndpack/ndpack/internal/testutil/pycanon"
	"os"
	"testing"

	"github.com/ndpack/ndpack/ndarray"
)

// seeds returns the checked-in numpy pickles (testdata/seeds.hex) and the
// hostile ones.
func seeds(t testing.TB) [][]byte {
	f, err := os.Open("testdata/seeds.hex")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		b, err := hex.DecodeString(string(line))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) < 20 {
		t.Fatalf("only %d seeds in testdata/seeds.hex", len(out))
	}
	for _, c := range hostileCases() {
		if len(c.in) < 1<<16 {
			out = append(out, c.in)
		}
	}
	return out
}

// TestSeeds reads every numpy seed, so that the fuzz corpus is known to
// reach the decoder's numpy paths and not only its refusals.
func TestSeeds(t *testing.T) {
	for i, s := range seeds(t)[:24] {
		if _, err := Decode(s, Options{}); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
}

// FuzzPickle decodes arbitrary bytes under small limits: no input may
// panic, hang or exceed them. An object array that decodes is written
// back, and what is written must decode to the same values.
func FuzzPickle(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		opts := Options{MaxDepth: 64, MaxStack: 4096, MaxSize: 1 << 20, MaxAlloc: 1<<20 + 64*int64(len(in))}
		v, used, err := DecodePrefix(in, opts)
		// The Scanner finds the same end, fed the bytes in two parts.
		var sc Scanner
		end, done := sc.Scan(in[:len(in)/2])
		if !done {
			end, done = sc.Scan(in)
		}
		if err != nil {
			if done && end < len(in) && errors.Is(err, ErrTruncated) {
				if _, _, err2 := DecodePrefix(in[:end], opts); err2 == nil {
					t.Fatalf("the Scanner stops at %d, where a pickle decodes, but all %d bytes do not: %v", end, len(in), err)
				}
			}
			return
		}
		if !done || end != used {
			t.Fatalf("the pickle ends at %d; the Scanner says %d (done %v)", used, end, done)
		}
		a, ok := v.(*ObjectArray)
		if !ok {
			return
		}
		out, err := AppendObjectArray(nil, a.Shape, a.Values, EncodeOptions{})
		if err != nil {
			return // values the writer does not take (datetimes, records)
		}
		v2, err := Decode(out, Options{})
		if err != nil {
			t.Fatalf("our own pickle of %s does not read back: %v", pycanon.Of(v), err)
		}
		// ndarray.__setstate__ reads data into the machine's byte order,
		// _frombuffer does not: both are the same values.
		if native(v) != native(v2) {
			t.Fatalf("read back %s, wrote %s", pycanon.Of(v2), pycanon.Of(v))
		}
	})
}

// native is canon with every array in the machine's byte order.
func native(v any) string {
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case *ndarray.Array:
			a, err := v.ToOrder(ndarray.NativeOrder())
			if err != nil {
				return v
			}
			return a
		case *ObjectArray:
			return &ObjectArray{Shape: v.Shape, Values: walk(v.Values).([]any)}
		case []any:
			out := make([]any, len(v))
			for i, x := range v {
				out[i] = walk(x)
			}
			return out
		case Tuple:
			return Tuple(walk([]any(v)).([]any))
		case Set:
			return Set(walk([]any(v)).([]any))
		case Dict:
			out := make(Dict, len(v))
			for i, it := range v {
				out[i] = DictItem{walk(it.Key), walk(it.Value)}
			}
			return out
		}
		return v
	}
	return pycanon.Of(walk(v))
}
