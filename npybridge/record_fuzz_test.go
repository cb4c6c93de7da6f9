package npybridge

import (
	"bytes"
	"strings"
	"testing"
)

// descrSeeds are descr literals: those of the corpus's and the header
// tests' files, and record descrs of every shape numpy writes.
func descrSeeds() []string {
	seeds := []string{
		"[('x', '<f4'), ('y', '<i8')]",
		"[('id', '<u4'), ('pos', [('x', '<f8'), ('y', '<f8')]), ('ok', '|b1')]",
		"[('a', '|i1'), ('', '|V7'), ('b', '<f8'), ('c', '<i2'), ('', '|V6')]",
		"[('pos', '<f4', (3,)), ('m', '>i2', (2, 2)), ('one', '<i4', (1,)), ('none', '<i4', (0,))]",
		"[('a', [('b', '<i4', (2,)), ('c', [('d', '>f2', (3,))], (2,))], (2,))]",
		"[('a', ('<i4', (2,)), (3,))]",
		"[(('Title A', 'a'), '<i4'), (('tb', 'b'), '|S3'), ((None, 'c'), '<f2')]",
		"[('\xe9t\xe9', '<f4'), (\"it's\", 'u1'), ('a\"b\\'', 'u1'), ('tab\\there\\\\', 'u1'), ('\\x00\\u2028\\U0001f600', 'u1')]",
		"[('s', '|S5'), ('u', '<U3'), ('v', '|V4'), ('t', '<M8[ns]'), ('d', '>m8[10s]'), ('g', '<f16')]",
		"[]", "[('', '|V8')]", "[('', '<i4'), ('b', 'u1')]", "{'ab': 1}", "['ab']", "[['a', 'i', 2]]",
		"{'names': ['a'], 'formats': ['<u2'], 'offsets': [0], 'itemsize': 2}",
		"[('a', '<i4', 1)]", "[('a', '<i4', [2, 3])]", "[('a', 'O')]", "('<i4', (2,))",
	}
	for _, file := range npySeeds() {
		h, err := ReadOptions{}.ReadHeader(bytes.NewReader(file))
		if err != nil {
			continue
		}
		text := string(file[:h.DataOffset])
		if _, d, ok := strings.Cut(text, "'descr': "); ok {
			if d, _, ok := strings.Cut(d, ", 'fortran_order'"); ok {
				seeds = append(seeds, d)
			}
		}
	}
	return seeds
}

// FuzzDescr parses a descr literal as a header's and checks that what is
// accepted is a valid dtype whose descr, written as np.save writes it,
// parses back to the same dtype.
func FuzzDescr(f *testing.F) {
	for _, s := range descrSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, serr := parsePyLiteral([]byte(text), true)
		if serr != nil {
			return
		}
		dt, err := descrParser{}.dtype(&v)
		if err != nil {
			return
		}
		if err := dt.Validate(); err != nil {
			t.Fatalf("accepted an invalid dtype: %v", err)
		}
		if checkWritable(dt) != nil {
			return
		}
		out := appendDescr(nil, dt)
		latin, ok := toLatin1(out)
		if !ok {
			latin = out
		}
		w, serr := parsePyLiteral(latin, ok)
		if serr != nil {
			t.Fatalf("cannot parse the descr written for %s: %q: %v", dt, out, serr)
		}
		again, err := descrParser{}.dtype(&w)
		if err != nil {
			t.Fatalf("cannot read the descr written for %s: %q: %v", dt, out, err)
		}
		if again != dt {
			t.Fatalf("descr %q read back as %s, not %s", out, again, dt)
		}
	})
}
