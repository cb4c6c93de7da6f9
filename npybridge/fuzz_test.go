package npybridge

import (
	"archive/zip"
	"bytes"
	"testing"

	"github.com/ndpack/ndpack/conformance"
	"github.com/ndpack/ndpack/ndarray"
)

// npySeeds are the .npy files of the conformance corpus, files np.save would write for several dtypes and shapes, plus
// the hand-written variants of the header tests.
func npySeeds() [][]byte {
	seeds := conformance.Seeds("npy")
	for _, ts := range []string{"|b1", "<i2", ">f8", "<c16", "|S3", "<U2", "<M8[ns]"} {
		dt := ndarray.MustParseDType(ts)
		for _, shape := range [][]int{{}, {0}, {3}, {2, 2}} {
			n, _ := ndarray.ByteSize(dt, shape)
			a, _ := ndarray.New(dt, shape, bytes.Repeat([]byte{1}, n))
			var buf bytes.Buffer
			_ = Write(&buf, a)
			seeds = append(seeds, buf.Bytes())
		}
	}
	seeds = append(seeds,
		npyWith(1, "{'descr': '<u2', 'fortran_order': True, 'shape': (2L, 3), } # c\n", six),
		npyWith(3, `{"shape": (3,), "descr": "<u2", "fortran_order": False}`, six[:6]),
		npyWith(2, "{'descr': [('a', '<u2')], 'fortran_order': False, 'shape': (1000000, 1000000)}", nil))
	return seeds
}

func FuzzReadHeader(f *testing.F) {
	for _, s := range npySeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		h, err := ReadOptions{}.ReadHeader(r)
		if err != nil {
			return
		}
		if h.DataOffset != int64(len(in)-r.Len()) {
			t.Fatalf("DataOffset %d, but the header took %d bytes", h.DataOffset, len(in)-r.Len())
		}
		if _, err := ndarray.ByteSize(h.DType, h.Shape); err != nil {
			t.Fatalf("accepted a header whose size overflows: %v", err)
		}
		// A header we accept, written back by AppendHeader, reads the same.
		again, err := ReadOptions{}.ReadHeader(bytes.NewReader(AppendHeader(nil, h.DType, h.Shape)))
		if err != nil || again.DType != h.DType || ndarray.FormatShape(again.Shape) != ndarray.FormatShape(h.Shape) {
			t.Fatalf("header does not survive a rewrite: %v", err)
		}
	})
}

func FuzzRead(f *testing.F) {
	for _, s := range npySeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		a, err := Read(bytes.NewReader(in))
		if err != nil {
			return
		}
		if err := a.Validate(); err != nil {
			t.Fatalf("read an invalid array: %v", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, a); err != nil {
			t.Fatalf("cannot write what was read: %v", err)
		}
		back, err := Read(&buf)
		if err != nil || !back.Equal(a) {
			t.Fatalf("written array does not read back: %v", err)
		}
	})
}

func FuzzReadNPZ(f *testing.F) {
	for i, s := range npySeeds() {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		m := zip.Store
		if i%2 == 1 {
			m = zip.Deflate
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "a.npy", Method: m})
		w.Write(s)
		zw.Close()
		f.Add(buf.Bytes())
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		arrays, err := ReadOptions{}.ReadNPZ(bytes.NewReader(in), int64(len(in)))
		if err != nil {
			return
		}
		for _, na := range arrays {
			if err := na.Array.Validate(); err != nil {
				t.Fatalf("member %q: invalid array: %v", na.Name, err)
			}
		}
	})
}

// FuzzReadRows reads rows of any input: no panic, and where the whole
// array reads too, the rows are its rows, as Python slices them.
func FuzzReadRows(f *testing.F) {
	for i, s := range npySeeds() {
		f.Add(s, i%5-2, 3-i%7)
	}
	f.Fuzz(func(t *testing.T, in []byte, start, stop int) {
		rows, err := ReadOptions{}.ReadRowsAt(bytes.NewReader(in), int64(len(in)), start, stop)
		if err != nil {
			return
		}
		if err := rows.Validate(); err != nil {
			t.Fatalf("read invalid rows: %v", err)
		}
		a, err := Read(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("rows %d:%d read, the whole array does not: %v", start, stop, err)
		}
		first, count := rowSpan(a.Shape[0], start, stop)
		rowBytes := 0
		if a.Shape[0] > 0 {
			rowBytes = len(a.Data) / a.Shape[0]
		}
		if rows.Shape[0] != count || !bytes.Equal(rows.Data, a.Data[first*rowBytes:(first+count)*rowBytes]) {
			t.Fatalf("rows %d:%d of shape %v: got %d rows that differ from the array's", start, stop, a.Shape, rows.Shape[0])
		}
	})
}
