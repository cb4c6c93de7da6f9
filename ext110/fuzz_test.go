package ext110

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/ndarray"
)

// fuzzSeeds are the ext 110 files of the conformance corpus, valid objects of several shapes and forms plus the
// hand-made malformed ones of the decode tests.
func fuzzSeeds(f *testing.F) {
	for _, seed := range conformance.Seeds("ext110") {
		f.Add(seed)
	}
	f.Add(arange6)
	for _, ts := range []string{"|b1", "<i2", ">f8", "<c16", "|S3", "<U2", "<M8[ns]"} {
		dt := ndarray.MustParseDType(ts)
		for _, shape := range [][]int{{}, {0}, {3}, {2, 2}} {
			n, _ := ndarray.ByteSize(dt, shape)
			a, _ := ndarray.New(dt, shape, bytes.Repeat([]byte{1}, n))
			b, _ := Options{AllowNonstandard: true}.Marshal(a)
			f.Add(b)
		}
	}
	data := []byte{1, 0, 2, 0, 3, 0}
	f.Add(ext32(mpMap(mpStr("data"), mpStr(string(data)), mpStr("strides"), []byte{0xc0},
		mpStr("typestr"), mpStr("<u2"), mpStr("shape"), []byte{0x91, 0xd3, 0, 0, 0, 0, 0, 0, 0, 3})))
	f.Add(ext8(mpMap(mpStr("descr"), []byte{0x91, 0x92, 0xa0, 0xa3, '<', 'u', '2'}, mpStr("x"), []byte{0xdf, 0, 0, 0, 1, 0xc0, 0xc0})))
	f.Add([]byte{0xc9, 0xff, 0xff, 0xff, 0xff, 110, 0x84})
	for _, dt := range seedRecords() {
		for _, shape := range [][]int{{}, {0}, {2}} {
			n, _ := ndarray.ByteSize(dt, shape)
			a, _ := ndarray.New(dt, shape, bytes.Repeat([]byte{1}, n))
			b, _ := Options{AllowNonstandard: true}.Marshal(a)
			f.Add(b)
		}
	}
	// A descr nested past the depth bound, and one whose list claims
	// more entries than there are bytes.
	deep := []byte{0x91, 0x92, 0xa1, 'z', 0xa3, '<', 'i', '8'}
	for range 40 {
		deep = append([]byte{0x91, 0x92, 0xa1, 'n'}, deep...)
	}
	f.Add(ext32(mpMap(mpStr("data"), mpBin(make([]byte, 8)), mpStr("descr"), deep, mpStr("typestr"), mpStr("|V8"), mpStr("shape"), []byte{0x91, 0x01})))
	f.Add(ext32(mpMap(mpStr("data"), mpBin(nil), mpStr("descr"), []byte{0xdd, 0x7f, 0xff, 0xff, 0xff, 0x92, 0xa0, 0x90}, mpStr("typestr"), mpStr("|V8"), mpStr("shape"), []byte{0x91, 0x00})))
}

// seedRecords are record dtypes of every feature a descr carries:
// padding, big-endian and string fields, titles, nesting, subarrays.
func seedRecords() []ndarray.DType {
	must := func(dt ndarray.DType, err error) ndarray.DType {
		if err != nil {
			panic(err)
		}
		return dt
	}
	f8, i2 := ndarray.MustParseDType("<f8"), ndarray.MustParseDType(">i2")
	inner := must(ndarray.NewRecord([]ndarray.Field{{Name: "c", DType: i2}, {Name: "d", Title: "the d", DType: ndarray.MustParseDType("|S3"), Offset: 4}}, 8))
	sub := must(ndarray.NewSubarray(ndarray.MustParseDType("<u2"), []int{2}))
	return []ndarray.DType{
		must(ndarray.NewRecord([]ndarray.Field{{Name: "x", DType: ndarray.MustParseDType("<i4")}, {Name: "y", DType: f8, Offset: 8}}, 24)),
		must(ndarray.NewRecord([]ndarray.Field{{Name: "a", DType: inner, Shape: []int{2}}, {Name: "s", DType: sub, Shape: []int{3}, Offset: 16}, {Name: "é", DType: ndarray.MustParseDType("<U2"), Offset: 28}}, 0)),
		must(ndarray.NewRecord([]ndarray.Field{{Name: "only", DType: ndarray.MustParseDType("<M8[ns]")}}, 0)),
		must(ndarray.NewRecord(nil, 0)),
	}
}

func FuzzUnmarshal(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := Unmarshal(in)
		z, zerr := UnmarshalNoCopy(in)
		if (err == nil) != (zerr == nil) {
			t.Fatalf("Unmarshal: %v, UnmarshalNoCopy: %v", err, zerr)
		}
		if err != nil {
			return
		}
		if !a.Equal(z) {
			t.Fatal("copying and aliasing decodes differ")
		}
		if verr := a.Validate(); verr != nil {
			t.Fatalf("decoded an invalid array: %v", verr)
		}
		out, err := Options{AllowNonstandard: true}.Marshal(a)
		if err != nil {
			t.Fatalf("cannot re-encode a decoded array: %v", err)
		}
		back, err := Unmarshal(out)
		if err != nil || !back.Equal(a) {
			t.Fatalf("re-encoded array does not decode to itself: %v", err)
		}
	})
}

func FuzzDecoder(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, in []byte) {
		dec := NewDecoder(bytes.NewReader(in))
		for i := 0; ; i++ {
			a, err := dec.Decode()
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			if verr := a.Validate(); verr != nil {
				t.Fatalf("decoded an invalid array: %v", verr)
			}
			if i == 0 {
				// A single object decodes the same both ways.
				if one, err := Unmarshal(in); err == nil && !one.Equal(a) {
					t.Fatal("stream and Unmarshal disagree")
				}
			}
		}
	})
}
