package pickle

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ndpack/ndpack/internal/testutil/hostile"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileCase is a pickle built to run code, or to swamp a reader that
// trusts what it says.
type hostileCase struct {
	name  string
	in    []byte
	class error
	msg   string
}

func cat(parts ...string) []byte { return []byte(strings.Join(parts, "")) }

func u32(n uint32) string { return string(binary.LittleEndian.AppendUint32(nil, n)) }

func u64(n uint64) string { return string(binary.LittleEndian.AppendUint64(nil, n)) }

// memoBomb builds lists L(k+1) = [L(k), L(k)] through the memo, levels
// deep: 2**levels leaves from 8 bytes a level.
func memoBomb(levels int) []byte {
	b := []byte("\x80\x02]q\x000")
	for k := 0; k < levels; k++ {
		b = append(b, "](h\x00h\x00eq\x000"...)
	}
	return append(b, "h\x00."...)
}

// deepLists nests levels lists, one inside the next, with a stack of two.
func deepLists(levels int) []byte {
	b := []byte("\x80\x02]q\x000")
	for k := 0; k < levels; k++ {
		b = append(b, "](h\x00eq\x000"...)
	}
	return append(b, "h\x00."...)
}

func hostileCases() []hostileCase {
	return []hostileCase{
		{"posix.system", cat("\x80\x02cposix\nsystem\nq\x00X\x02\x00\x00\x00lsq\x01\x85q\x02Rq\x03."), ErrNotData, `at byte 2: global "posix.system" is not data that is read; nothing was run`},
		{"os.system by STACK_GLOBAL", cat("\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x02ls\x85R."), ErrNotData, `at byte 14: global "os.system"`},
		{"REDUCE of builtins.eval", cat("\x80\x03cbuiltins\neval\nX\x06\x00\x00\x00print(1)\x85R."), ErrNotData, `at byte 2: global "builtins.eval"`},
		{"REDUCE of a list", cat("\x80\x02])R."), ErrNotData, "at byte 4: REDUCE calls a list"},
		{"REDUCE of numpy.ndarray itself", cat("\x80\x02cnumpy\nndarray\n)R."), ErrNotData, "REDUCE calls numpy.ndarray, which only appears as an argument"},
		{"BUILD of a dict", cat("\x80\x02}}b."), ErrNotData, "at byte 4: BUILD of a dict"},
		{"BUILD of an int", cat("\x80\x02K\x01}b."), ErrNotData, "BUILD of an int"},
		{"persistent id", cat("\x80\x02X\x01\x00\x00\x001Q."), ErrNotData, "at byte 8: opcode BINPERSID"},
		{"extension code", cat("\x80\x02\x82\x01."), ErrNotData, "at byte 2: opcode EXT1"},
		{"NEWOBJ", cat("\x80\x02cnumpy\ndtype\n)\x81."), ErrNotData, "opcode NEWOBJ"},
		{"out-of-band buffer", cat("\x80\x05\x97."), ErrNotData, "opcode NEXT_BUFFER"},
		{"INST", cat("\x80\x02(ios\nsystem\n."), ErrNotData, "opcode INST"},
		{"datetime", cat("\x80\x03cdatetime\ndate\nC\x04\x07\xe4\x01\x02\x85R."), ErrNotData, `global "datetime.date" is not data that is read (datetime objects are not among the types read)`},
		{"global as a value", cat("\x80\x02cnumpy\ndtype\n."), ErrNotData, "the global numpy.dtype is a value"},
		{"self-containing list", cat("\x80\x02]q\x00h\x00a."), ErrNotData, "at byte 2: a container that holds itself"},
		{"protocol 0 opcode", cat("I1\n."), ErrMalformed, "at byte 0: opcode INT of protocol 0"},
		{"unknown opcode", cat("\x80\x02\xff."), ErrMalformed, "at byte 2: unknown opcode 0xff"},
		{"protocol 6", cat("\x80\x06N."), ErrMalformed, "protocol 6"},
		{"stack underflow", cat("\x80\x02a."), ErrMalformed, "APPEND on an empty stack"},
		{"no STOP", cat("\x80\x02N"), ErrTruncated, "at byte 3: the pickle ends without STOP"},
		{"BINUNICODE8 claiming 2**62", cat("\x80\x04\x8d", u64(1<<62), "abc."), ErrTruncated, "claims 4611686018427387904 bytes, 4 remain"},
		{"BINBYTES claiming 4 GiB", cat("\x80\x03B", u32(0xffffffff), "abc."), ErrTruncated, "claims 4294967295 bytes"},
		{"LONG4 claiming 2 GiB", cat("\x80\x02\x8b", u32(0x7fffffff), "."), ErrTruncated, "claims 2147483647 bytes"},
		{"FRAME claiming 2**60", cat("\x80\x04\x95", u64(1<<60), "N."), ErrTruncated, "FRAME claims"},
		{"memo get never put", cat("\x80\x02j", u32(1<<31), "."), ErrMalformed, "memo entry 2147483648 was never put"},
		{"object array claiming 2**40 elements", cat("\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R",
			"(K\x01\x8a\x06\x00\x00\x00\x00\x00\x01\x85cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R(K\x03X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb\x89]tb."),
			ErrMalformed, "an object array of shape (1099511627776,) is built from a list of 0 elements, not 1099511627776"},
		{"numeric array claiming 2**40 elements", cat("\x80\x02cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R",
			"(K\x01\x8a\x06\x00\x00\x00\x00\x00\x01\x85cnumpy\ndtype\nX\x02\x00\x00\x00f8\x89\x88\x87R(K\x03X\x01\x00\x00\x00<NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89C\x00tb."),
			ErrMalformed, "needs 8796093022208 bytes; its data holds 0"},
		{"memo bomb", memoBomb(100), ErrTooLarge, "shared ones repeated where they appear (Options.MaxSize)"},
		{"deep lists", deepLists(100000), ErrTooDeep, "containers nested deeper than 1000 (Options.MaxDepth)"},
		{"deep tuples", append(append([]byte("\x80\x02)"), bytes.Repeat([]byte{0x85}, 10000)...), '.'), ErrTooDeep, "nested deeper than 1000"},
		{"10 million Nones on the stack", append(bytes.Repeat([]byte("N"), 10000000), '.'), ErrTooLarge, "more than 65536 entries on the stack"},
		{"10 million DUPs", append(append([]byte("N"), bytes.Repeat([]byte("2"), 10000000)...), '.'), ErrTooLarge, "Options.MaxStack"},
		{"10 million MARKs", bytes.Repeat([]byte("("), 10000000), ErrTooLarge, "Options.MaxStack"},
		{"10 million MEMOIZEs", append(append([]byte("\x80\x04N"), bytes.Repeat([]byte{0x94}, 10000000)...), '0'), ErrTruncated, "without STOP"},
		{"sparse memo", append(append([]byte("\x80\x02N"), bytes.Repeat([]byte("r\x01\x02\x03\x04r\x05\x06\x07\x08"), 100000)...), '0'), ErrTruncated, "without STOP"},
		{"_codecs.encode of one MiB 20000 times", codecsBomb(1<<20, 20000), ErrTooLarge, "Options.MaxAlloc"},
		{"3 million empty lists", append(bytes.Repeat([]byte("]0"), 3000000), 'N', '.'), ErrTooLarge, "Options.MaxAlloc"},
		// What np.save writes for np.empty(2 * 10**6, dtype=object): read.
		{"two million Nones in a list", append(append([]byte("\x80\x02]"), bytes.Repeat(append(append([]byte("("), bytes.Repeat([]byte("N"), 1000)...), 'e'), 2000)...), '.'), nil, ""},
	}
}

// codecsBomb encodes one shared str of size bytes times times: each
// REDUCE would copy it.
func codecsBomb(size, times int) []byte {
	b := []byte("\x80\x02c_codecs\nencode\nq\x00X")
	b = binary.LittleEndian.AppendUint32(b, uint32(size))
	b = append(b, bytes.Repeat([]byte("a"), size)...)
	b = append(b, "q\x01X\x06\x00\x00\x00latin1q\x02]q\x03"...)
	for i := 0; i < times; i++ {
		b = append(b, "h\x00h\x01h\x02\x86Ra"...)
	}
	return append(b, '.')
}

// TestHostile runs every hostile pickle and requires its refusal, within a
// second and 48 bytes allocated per input byte plus 2 MiB: the default
// limits allow 24 bytes of values per input byte, and a slice that grows
// to its size allocates about twice that on the way.
func TestHostile(t *testing.T) {
	for _, c := range hostileCases() {
		t.Run(c.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := hostile.CPUTime()
			_, err := Decode(c.in, Options{})
			elapsed := hostile.CPUTime() - start
			runtime.ReadMemStats(&after)
			if c.class == nil {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.ErrorIs(t, err, c.class)
				assert.Contains(t, err.Error(), c.msg)
				assert.True(t, strings.HasPrefix(err.Error(), "pickle: "), err.Error())
			}
			alloc := after.TotalAlloc - before.TotalAlloc
			assert.LessOrEqual(t, alloc, uint64(48*len(c.in)+2<<20), "allocated %d bytes for %d input bytes", alloc, len(c.in))
			bound := time.Second
			if raceDetector {
				bound *= 10
			}
			assert.Less(t, elapsed, bound)
		})
	}
}

// TestLimits checks that each limit of Options is the one that refuses.
func TestLimits(t *testing.T) {
	_, err := Decode(deepLists(20), Options{MaxDepth: 10})
	assert.ErrorContains(t, err, "nested deeper than 10")
	_, err = Decode(deepLists(20), Options{MaxDepth: 30})
	assert.NoError(t, err)
	_, err = Decode(memoBomb(10), Options{MaxSize: 1000})
	assert.ErrorContains(t, err, "more than 1000 bytes written out")
	_, err = Decode(memoBomb(10), Options{MaxSize: 11000})
	assert.NoError(t, err)
	_, err = Decode(append(bytes.Repeat([]byte("]0"), 1000), 'N', '.'), Options{MaxAlloc: 1000})
	assert.ErrorContains(t, err, "more than 1000 bytes (Options.MaxAlloc)")
	_, err = Decode(append(bytes.Repeat([]byte("N"), 100), '.'), Options{MaxStack: 50})
	assert.ErrorContains(t, err, "more than 50 entries")
}

// TestPy2Strings reads Python 2's str as np.load's encoding argument does.
func TestPy2Strings(t *testing.T) {
	in := []byte("\x80\x02U\x03a\xe9b.")
	_, err := Decode(in, Options{})
	assert.ErrorIs(t, err, ErrMalformed)
	assert.ErrorContains(t, err, "non-ASCII byte 0xe9 (decode it as latin-1 or bytes: Options.Strings)")
	v, err := Decode(in, Options{Strings: Latin1})
	require.NoError(t, err)
	assert.Equal(t, "aéb", v)
	v, err = Decode(in, Options{Strings: Bytes})
	require.NoError(t, err)
	assert.Equal(t, []byte("a\xe9b"), v)
	v, err = Decode([]byte("\x80\x02U\x02ab."), Options{})
	require.NoError(t, err)
	assert.Equal(t, "ab", v)
}

// TestValues reads each opcode's value and the containers' Go types.
func TestValues(t *testing.T) {
	v, err := Decode([]byte("\x80\x02(N\x88\x89K\x01M\x00\x01J\xff\xff\xff\xff\x8a\x00\x8a\x01\xffG?\xf8\x00\x00\x00\x00\x00\x00X\x01\x00\x00\x00aC\x01b)}l."), Options{})
	require.NoError(t, err)
	assert.Equal(t, []any{nil, true, false, int64(1), int64(256), int64(-1), int64(0), int64(-1), 1.5, "a", []byte("b"), Tuple{}, Dict{}}, v)
	v, err = Decode([]byte("\x80\x02}(K\x01K\x02K\x01K\x03u."), Options{})
	require.NoError(t, err)
	got, ok := v.(Dict).Get(int64(1))
	assert.True(t, ok)
	assert.Equal(t, int64(3), got, "the last of equal keys, as a dict keeps it")
	// Bytes after STOP are not read.
	v, n, err := DecodePrefix([]byte("\x80\x02N.garbage"), Options{})
	require.NoError(t, err)
	assert.Nil(t, v)
	assert.Equal(t, 4, n)
}
