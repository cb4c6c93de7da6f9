package zarr

import (
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/ndpack/ndpack/ndarray"
)

// hostileStore is a directory store holding .zarray text and the files
// given.
func hostileStore(t *testing.T, zarray string, files map[string][]byte) Dir {
	t.Helper()
	d := Dir(t.TempDir())
	if err := os.WriteFile(filepath.Join(string(d), ".zarray"), []byte(zarray), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(string(d), name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(string(d), name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

func zarray(shape, chunks, dtype, compressor string) string {
	return `{"chunks": ` + chunks + `, "compressor": ` + compressor + `, "dtype": "` + dtype + `", "fill_value": null, "filters": null, "order": "C", "shape": ` + shape + `, "zarr_format": 2}`
}

// readHostile opens d and reads its array, returning the error and the
// heap the reading grew.
func readHostile(t *testing.T, d Dir, o ReadOptions) (err error, grew uint64) {
	t.Helper()
	allocated, _ := hostile.HeapCost(func() {
		var arrays []*Array
		if arrays, err = o.Open(d, ""); err != nil {
			return
		}
		var r io.ReadCloser
		if r, err = arrays[0].NewReader(); err != nil {
			return
		}
		defer r.Close()
		_, err = io.Copy(io.Discard, r)
	})
	return err, allocated
}

func TestHostileStores(t *testing.T) {
	bomb := func(n int) []byte {
		var b bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&b, 9)
		zw.Write(make([]byte, n))
		zw.Close()
		return b.Bytes()
	}
	for _, c := range []struct {
		name  string
		store Dir
		class error
		text  string
	}{
		{"a chunk of a terabyte", hostileStore(t, zarray("[1099511627776]", "[1099511627776]", "<f8", "null"), nil),
			ndarray.ErrTooLarge, "a chunk of shape (1099511627776,) of <f8 is 8796093022208 bytes"},
		{"a band of 128 MiB", hostileStore(t, zarray("[1048576, 16777216]", "[1, 1]", "<f8", "null"), nil),
			ndarray.ErrTooLarge, "1 rows of chunks (shape (1, 1))"},
		{"a chunk short", hostileStore(t, zarray("[4]", "[4]", "<f8", "null"), map[string][]byte{"0": make([]byte, 31)}),
			ndarray.ErrMalformed, `chunk "0" holds 31 bytes; a chunk of shape (4,) of <f8 holds 32`},
		{"a chunk too long", hostileStore(t, zarray("[4]", "[4]", "<f8", "null"), map[string][]byte{"0": make([]byte, 33)}),
			ndarray.ErrTooLarge, "33 bytes, more than the 32 its key may hold"},
		{"a zlib bomb", hostileStore(t, zarray("[1024]", "[1024]", "|u1", `{"id": "zlib", "level": 9}`), map[string][]byte{"0": bomb(1 << 20)}),
			ndarray.ErrMalformed, `chunk "0" inflates to more than the 1024 bytes of its chunk`},
		{"a zlib chunk short", hostileStore(t, zarray("[1024]", "[1024]", "|u1", `{"id": "zlib", "level": 9}`), map[string][]byte{"0": bomb(1000)}),
			ndarray.ErrMalformed, `inflates to 1000 bytes, fewer than the 1024 of its chunk`},
		{"not zlib", hostileStore(t, zarray("[4]", "[4]", "|u1", `{"id": "zlib", "level": 1}`), map[string][]byte{"0": []byte("PK\x03\x04 not zlib")}),
			ndarray.ErrMalformed, `not a zlib stream`},
		{"a bad checksum", hostileStore(t, zarray("[1000]", "[1000]", "|u1", `{"id": "zlib", "level": 1}`), map[string][]byte{"0": func() []byte {
			b := bomb(1000)
			b[len(b)-1] ^= 1
			return b
		}()}), ndarray.ErrMalformed, `its Adler-32 is`},
		{"a directory for a chunk", hostileStore(t, zarray("[4]", "[4]", "|u1", "null"), map[string][]byte{"0/x": nil}),
			nil, "not a regular file"},
	} {
		err, grew := readHostile(t, c.store, ReadOptions{})
		if err == nil || c.class != nil && !errors.Is(err, c.class) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: got %v, want %v with %q", c.name, err, c.class, c.text)
		}
		if grew > 1<<20 {
			t.Errorf("%s: reading it allocated %d bytes", c.name, grew)
		}
	}
}

// TestHugeChunkFileNotRead: a chunk file of a gigabyte (sparse, so the
// test costs nothing) where 8 bytes are due is refused from its size,
// unread.
func TestHugeChunkFileNotRead(t *testing.T) {
	d := hostileStore(t, zarray("[1]", "[1]", "<f8", `{"id": "zlib", "level": 1}`), nil)
	f, err := os.Create(filepath.Join(string(d), "0"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	err, grew := readHostile(t, d, ReadOptions{})
	if !errors.Is(err, ndarray.ErrTooLarge) || grew > 1<<20 {
		t.Errorf("a 1 GiB chunk file: %v, %d bytes allocated", err, grew)
	}
}

// TestMissingChunksAreFill: chunks that are not stored read as the fill
// value, null as zero bytes.
func TestMissingChunksAreFill(t *testing.T) {
	d := hostileStore(t, strings.Replace(zarray("[5]", "[2]", "<i2", "null"), `"fill_value": null`, `"fill_value": -2`, 1),
		map[string][]byte{"1": {1, 0, 2, 0}})
	arrays, err := ReadOptions{}.Open(d, "")
	if err != nil {
		t.Fatal(err)
	}
	a, err := arrays[0].Read()
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0xfe, 0xff, 0xfe, 0xff, 1, 0, 2, 0, 0xfe, 0xff}; !bytes.Equal(a.Data, want) {
		t.Errorf("read % x, want % x", a.Data, want)
	}
}

// TestGroupsNestBounded: groups nested 40 deep are refused, not walked.
func TestGroupsNestBounded(t *testing.T) {
	d := Dir(t.TempDir())
	p := string(d)
	for i := 0; i < 40; i++ {
		os.WriteFile(filepath.Join(p, ".zgroup"), GroupMetadata, 0o644)
		p = filepath.Join(p, "g")
		os.Mkdir(p, 0o755)
	}
	if _, err := (ReadOptions{}).Open(d, ""); err == nil || !strings.Contains(err.Error(), "groups nest more than 32 deep") {
		t.Errorf("40 nested groups: %v", err)
	}
	if _, err := (ReadOptions{}).Open(Dir(t.TempDir()), ""); !errors.Is(err, ErrNotZarr) {
		t.Errorf("an empty directory: %v", err)
	}
}
