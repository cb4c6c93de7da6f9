package pickle

import (
	"math/big"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func objectCase(t *testing.T, name string) []byte {
	t.Helper()
	for _, c := range hostile.ObjectCases(false) {
		if c.Name == name {
			return c.Data
		}
	}
	t.Fatalf("no case %q", name)
	return nil
}

// A dict key or set element Python cannot hash is refused, as pickle.load
// refuses it: before, {{}: 1} became a Dict whose key was a Dict, and the
// CLI panicked putting it in a Go map.
func TestUnhashableRefused(t *testing.T) {
	for _, name := range []string{"dict key dict", "dict key 0-d object array", "set of a list"} {
		_, err := Decode(objectCase(t, name), Options{})
		assert.ErrorIs(t, err, ErrMalformed, name)
		assert.ErrorContains(t, err, "which Python cannot hash (unhashable type)", name)
	}
	// A tuple holding a list is no key either; a tuple of numbers is.
	_, err := Decode([]byte("\x80\x02}](K\x01e\x85K\x01s."), Options{})
	assert.ErrorContains(t, err, "a dict key is a tuple holding a list, dict, set or array")
	v, err := Decode([]byte("\x80\x02}K\x01K\x02\x86K\x01s."), Options{})
	require.NoError(t, err)
	assert.Equal(t, Dict{{Tuple{int64(1), int64(2)}, int64(1)}}, v)
}

// An object array takes its elements when it is built, as numpy does: a
// list too short then is refused, and what is appended to the list
// afterwards is not the array's.
func TestObjectArrayBuiltOnce(t *testing.T) {
	_, err := Decode(objectCase(t, "append after build"), Options{})
	assert.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, "an object array of shape (2,) is built from a list of 1 element, not 2")
	v, err := Decode(objectCase(t, "append to the list after build"), Options{})
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1), int64(2)}, v.(*ObjectArray).Values)
}

// Dicts keep the pickle's order and every key, bin and str alike.
func TestDictOrderAndKeys(t *testing.T) {
	v, err := Decode(objectCase(t, "bytes and str keys"), Options{})
	require.NoError(t, err)
	d := v.(*ObjectArray).Values[0].(Dict)
	assert.Equal(t, Dict{{[]byte("a"), int64(1)}, {"a", int64(2)}, {"z", int64(3)}, {"b", int64(4)}}, d)
}

// Sizes count, not items: a 1 MiB str referred to 200,000 times (a 1.4 MB
// pickle) is 209 GB written out and refused at once; before, it counted as
// 200,000 items and passed. A list of 30 shared 2,000,000 times (70 MB
// written out) passes, one Go value in every place.
func TestSharedValuesCountBySize(t *testing.T) {
	start := time.Now()
	_, err := Decode(objectCase(t, "1 MiB str shared 200000 times"), Options{})
	assert.ErrorIs(t, err, ErrTooLarge)
	assert.ErrorContains(t, err, "shared ones repeated where they appear (Options.MaxSize)")
	assert.Less(t, time.Since(start), 5*time.Second)

	v, err := Decode(objectCase(t, "30-item list shared 2000000 times"), Options{})
	require.NoError(t, err)
	vals := v.(*ObjectArray).Values
	require.Len(t, vals, 2000000)
	first, last := vals[0].([]any), vals[len(vals)-1].([]any)
	assert.Len(t, first, 30)
	assert.Same(t, &first[0], &last[0], "a shared list is one Go value")
	_, err = Decode(objectCase(t, "30-item list shared 2000000 times"), Options{MaxSize: 50 << 20})
	assert.ErrorIs(t, err, ErrTooLarge)

	v, err = Decode(objectCase(t, "4 MiB int"), Options{})
	require.NoError(t, err)
	assert.Equal(t, 4<<20*8-1, v.(*ObjectArray).Values[0].(*big.Int).BitLen())
}

// A numeric array whose byte count overflows said it "holds 0 bytes, not
// 0"; it says why.
func TestNumericOverflowMessage(t *testing.T) {
	in := cat("\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R",
		"(K\x01\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x20\x85cnumpy\ndtype\nX\x02\x00\x00\x00f8\x89\x88\x87R(K\x03X\x01\x00\x00\x00<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89C\x00tb.")
	_, err := Decode(in, Options{})
	assert.ErrorIs(t, err, ErrMalformed)
	assert.NotContains(t, err.Error(), "holds 0 bytes, not 0")
	assert.ErrorContains(t, err, "an array of shape (2305843009213693952,) and dtype <f8: ")
	assert.ErrorContains(t, err, "overflows int")
}

// The Scanner stops where each pickle ends, whichever way its bytes
// arrive, and at once at an opcode it cannot skip.
func TestScannerFindsSTOP(t *testing.T) {
	for _, c := range hostile.ObjectCases(true) {
		in := append(append([]byte{}, c.Data...), "trailing bytes"...)
		var sc Scanner
		var end int
		var done bool
		for n := 1; n <= len(in) && !done; n += 7 {
			end, done = sc.Scan(in[:n])
		}
		if !done {
			end, done = sc.Scan(in)
		}
		assert.True(t, done, c.Name)
		assert.Equal(t, len(c.Data), end, c.Name)
	}
	var sc Scanner
	end, done := sc.Scan([]byte("\x80\x02N\x00more"))
	assert.True(t, done)
	assert.Equal(t, 8, end, "an unknown opcode: Decode says so")
	sc = Scanner{}
	_, done = sc.Scan([]byte("\x80\x02X\xff\xff\xff\x00abc"))
	assert.False(t, done, "a str of 16 MiB is still arriving")
}
