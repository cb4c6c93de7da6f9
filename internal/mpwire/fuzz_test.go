package mpwire_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/internal/mpwalk"
	"github.com/ndpack/ndpack/internal/mpwire"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
)

// FuzzReaders: no input makes a reader panic or read past its input; what
// a reader accepts is a prefix of the input whose claims fit, which the
// walker measures alike and the appenders write back to the same value; what
// it refuses is an *Error of one of the classes, at an offset inside the
// input.
func FuzzReaders(f *testing.F) {
	for _, s := range conformance.Seeds("ext110") {
		f.Add(s)
	}
	// Fails under CI, and skips elsewhere, without the corpus.
	sharedfiles.ReadFile(f, "../../../shared/corpus/dialects/expected.json")
	files, _ := filepath.Glob("../../../shared/corpus/dialects/*.msgpack")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<16 {
			f.Add(b)
		}
	}
	for _, s := range [][]byte{
		{0xdf, 0xff, 0xff, 0xff, 0xff}, {0xc9, 0, 0, 1, 0, 110}, {0xcf, 0xff, 0, 0, 0, 0, 0, 0, 0},
		{0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0}, {0xca, 0x3f, 0xc0, 0, 0}, {0xc1}, {0xd8, 5}, {0xdb, 0, 0, 0, 2, 'a'},
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		walked, walkErr := mpwalk.Len(b, mpwalk.Limits{})
		check := func(name string, rest []byte, err error) {
			if err != nil {
				var we *mpwire.Error
				if !errors.As(err, &we) {
					t.Fatalf("%s: error %v is not an *Error", name, err)
				}
				if !errors.Is(err, mpwire.ErrTruncated) && !errors.Is(err, mpwire.ErrType) && !errors.Is(err, mpwire.ErrRange) {
					t.Fatalf("%s: error %v of no class", name, err)
				}
				if we.Offset < 0 || we.Offset > len(b) || errors.Is(err, mpwire.ErrTruncated) && we.Remain != len(b)-we.Offset {
					t.Fatalf("%s: %v: offset %d, remain %d in %d bytes", name, err, we.Offset, we.Remain, len(b))
				}
				if len(rest) != len(b) {
					t.Fatalf("%s failed but consumed bytes", name)
				}
				return
			}
			used := len(b) - len(rest)
			if used < 1 || (len(rest) > 0 && &rest[0] != &b[used]) {
				t.Fatalf("%s: rest is not what follows the value (used %d of %d)", name, used, len(b))
			}
		}
		// A whole value read is exactly what the walker measures.
		whole := func(name string, rest []byte, err error) {
			check(name, rest, err)
			if err == nil && (walkErr != nil || walked != len(b)-len(rest)) {
				t.Fatalf("%s took %d bytes, the walker %d (%v)", name, len(b)-len(rest), walked, walkErr)
			}
		}

		n, rest, err := mpwire.ReadMapHeaderBytes(b)
		check("ReadMapHeaderBytes", rest, err)
		if err == nil && n > 15 && 2*n > len(rest) {
			t.Fatalf("map of %d entries, %d bytes after its header", n, len(rest))
		}
		n, rest, err = mpwire.ReadArrayHeaderBytes(b)
		check("ReadArrayHeaderBytes", rest, err)
		if err == nil && n > 15 && n > len(rest) {
			t.Fatalf("array of %d items, %d bytes after its header", n, len(rest))
		}
		for name, read := range map[string]func([]byte) ([]byte, []byte, error){
			"ReadStringZC": mpwire.ReadStringZC, "ReadBytesZC": mpwire.ReadBytesZC, "ReadStringOrBinZC": mpwire.ReadStringOrBinZC,
		} {
			v, rest, err := read(b)
			whole(name, rest, err)
			if err != nil {
				continue
			}
			if cap(v) != len(v) || len(v) > 0 && &v[0] != &b[len(b)-len(rest)-len(v)] {
				t.Fatalf("%s: the value is not the input's bytes before rest, capped", name)
			}
			// Written again, the value reads back the same.
			var again []byte
			if mpwire.NextType(b) == mpwire.StrType {
				again = mpwire.AppendStringFromBytes(nil, v)
			} else {
				again = mpwire.AppendBytes(nil, v)
			}
			if w, r, err := read(again); err != nil || string(w) != string(v) || len(r) != 0 {
				t.Fatalf("%s: re-appended value reads back as %q, %v", name, w, err)
			}
		}
		typ, l, rest, extErr := mpwire.ReadExtHeaderBytes(b)
		check("ReadExtHeaderBytes", rest, extErr)
		if extErr == nil {
			if l > len(rest) || walkErr == nil && walked != len(b)-len(rest)+l {
				t.Fatalf("ext payload of %d bytes, %d after the header, walker %d", l, len(rest), walked)
			}
			if ty, ul, r, err := mpwire.ReadExtHeaderBytes(append(mpwire.AppendExtHeader(nil, typ, l), rest[:l]...)); err != nil || ty != typ || ul != l || len(r) != l {
				t.Fatalf("re-appended ext header reads back as %d, %d: %v", ty, ul, err)
			}
		}
		utyp, ul, rest, err := mpwire.ReadExtHeaderUnchecked(b)
		check("ReadExtHeaderUnchecked", rest, err)
		if err == nil && extErr == nil && (utyp != typ || int(ul) != l || len(rest) != len(b)-mpwire.HeadOf(b[0]).Size()) {
			t.Fatalf("unchecked ext header %d, %d differs", utyp, ul)
		}
		i, rest, err := mpwire.ReadIntBytes(b)
		whole("ReadIntBytes", rest, err)
		if err == nil {
			if j, r, err := mpwire.ReadIntBytes(mpwire.AppendInt(nil, i)); err != nil || j != i || len(r) != 0 {
				t.Fatalf("int %d reads back as %d: %v", i, j, err)
			}
		}
		u, rest, err := mpwire.ReadUintBytes(b)
		whole("ReadUintBytes", rest, err)
		if err == nil {
			if v, r, err := mpwire.ReadUintBytes(mpwire.AppendUint(nil, u)); err != nil || v != u || len(r) != 0 {
				t.Fatalf("uint %d reads back as %d: %v", u, v, err)
			}
		}
		fl, rest, err := mpwire.ReadFloat64Bytes(b)
		whole("ReadFloat64Bytes", rest, err)
		if err == nil {
			if g, _, err := mpwire.ReadFloat64Bytes(mpwire.AppendFloat64(nil, fl)); err != nil || g != fl && fl == fl {
				t.Fatalf("float %v reads back as %v: %v", fl, g, err)
			}
		}
		_, rest, err = mpwire.ReadBoolBytes(b)
		whole("ReadBoolBytes", rest, err)
		rest, err = mpwire.ReadNilBytes(b)
		whole("ReadNilBytes", rest, err)
		if mpwire.NextType(b) == mpwire.InvalidType && walkErr == nil {
			t.Fatal("the walker took a value whose type is invalid")
		}
	})
}
