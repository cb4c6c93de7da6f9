package hostile

import (
	"encoding/binary"
	"fmt"
	"strings"
)

// The object-array pickles of issue 36: each passes the restricted pickle
// reader's opcode checks, and hurts what comes after it (a panic, a shared
// value multiplied in the output, a number too long to print, a dict that
// loses a key). They are generated: some are megabytes.

// ObjectCase is one object array: its elements and the pickle np.load
// would read (or refuse).
type ObjectCase struct {
	Name string
	N    int    // elements of the 1-d array
	Data []byte // the pickle
}

// ObjectArrayOps returns the opcodes that build a numpy object array as
// numpy pickles one: of shape (n,), or () when n < 0, its elements the
// list that listOps pushes.
func ObjectArrayOps(n int, listOps string) string {
	shape := ")"
	if n >= 0 {
		shape = "J" + string(binary.LittleEndian.AppendUint32(nil, uint32(n))) + "\x85"
	}
	return "cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85C\x01b\x87R" +
		"(K\x01" + shape +
		"cnumpy\ndtype\nX\x02\x00\x00\x00O8\x89\x88\x87R(K\x03X\x01\x00\x00\x00|NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK?tb" +
		"\x89" + listOps + "tb"
}

// ObjectPickle returns a protocol 2 pickle: pre (which leaves the stack as
// it found it, to put shared values in the memo), then a 1-d object array
// of n elements, each pushed by item(i), in batches of 1000 as Python's
// pickler writes them, then STOP.
func ObjectPickle(n int, pre string, item func(i int) string) []byte {
	var sb strings.Builder
	for i := 0; i < n; {
		sb.WriteByte('(')
		for end := min(n, i+1000); i < end; i++ {
			sb.WriteString(item(i))
		}
		sb.WriteByte('e')
	}
	return []byte("\x80\x02" + pre + ObjectArrayOps(n, "]"+sb.String()) + ".")
}

// ObjectNPY returns an NPY file (version 1.0) of a 1-d object array of n
// elements whose data is pickle.
func ObjectNPY(n int, pickle []byte) []byte {
	dict := fmt.Sprintf("{'descr': '|O', 'fortran_order': False, 'shape': (%d,), }", n)
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	dict += strings.Repeat(" ", pad) + "\n"
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(dict)), byte(len(dict)>>8))
	b = append(b, dict...)
	return append(b, pickle...)
}

func u32s(n int) string { return string(binary.LittleEndian.AppendUint32(nil, uint32(n))) }

// ObjectCases returns the hostile object arrays; small leaves out the
// ones of megabytes (for fuzz seeds).
func ObjectCases(small bool) []ObjectCase {
	one := func(ops string) func(int) string { return func(int) string { return ops } }
	cases := []ObjectCase{
		// {{}: 1}: a dict key Python cannot hash.
		{"dict key dict", 1, ObjectPickle(1, "", one("}}K\x01s"))},
		// {array({1: 2}, dtype=object): 1}: the same inside a 0-d array.
		{"dict key 0-d object array", 1, ObjectPickle(1, "", one("}"+ObjectArrayOps(-1, "](}K\x01K\x02se")+"K\x01s"))},
		// [[1], ...]: a set of a list.
		{"set of a list", 1, ObjectPickle(1, "", one("\x8f(](K\x01e\x90"))},
		// {b'a': 1, 'a': 2, 'z': 3, 'b': 4}: bin and str keys, not sorted.
		{"bytes and str keys", 2, ObjectPickle(2, "", one("}(C\x01aK\x01X\x01\x00\x00\x00aK\x02X\x01\x00\x00\x00zK\x03X\x01\x00\x00\x00bK\x04u"))},
		// An array of shape (2,) built from a list of one, the second
		// element appended after BUILD: numpy refuses it (or crashes).
		{"append after build", 2, []byte("\x80\x02" + ObjectArrayOps(2, "]q\x01(K\x01e") + "h\x01K\x02a0.")},
		// An array of shape (2,) built from [1, 2], then 3 appended to the
		// list: the array is [1, 2].
		{"append to the list after build", 2, []byte("\x80\x02" + ObjectArrayOps(2, "]q\x01(K\x01K\x02e") + "h\x01K\x03a0.")},
		// A 1000-digit integer: printed cut short.
		{"1000-digit int", 1, ObjectPickle(1, "", one("\x8b"+u32s(416)+strings.Repeat("\x55", 416)))},
	}
	if small {
		return cases
	}
	return append(cases,
		// A 1 MiB str memoized once, referred to 200,000 times: 209 GB
		// written out.
		ObjectCase{"1 MiB str shared 200000 times", 200000,
			ObjectPickle(200000, "X"+u32s(1<<20)+strings.Repeat("a", 1<<20)+"q\x000", one("h\x00"))},
		// A list of 30 ints memoized once, referred to 2,000,000 times.
		ObjectCase{"30-item list shared 2000000 times", 2000000,
			ObjectPickle(2000000, "]("+strings.Repeat("K\x01", 30)+"eq\x000", one("h\x00"))},
		// A 4 MiB integer (10 million digits).
		ObjectCase{"4 MiB int", 1, ObjectPickle(1, "", one("\x8b"+u32s(4<<20)+strings.Repeat("\x55", 4<<20)))},
	)
}
