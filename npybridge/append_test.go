package npybridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// row returns row i of the test streams: 256 <u2 values, all i.
func row(i int) *ndarray.Array {
	v := make([]uint16, 256)
	for k := range v {
		v[k] = uint16(i)
	}
	a, _ := ndarray.FromSlice(v)
	a, _ = a.ToOrder('<')
	return a
}

var rowDType = ndarray.MustParseDType("<u2")

// numpy loads the file after every Append, with every row so far.
func TestAppendIsValidAfterEveryAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "frames.npy")
	w, err := AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	var snapshots []string
	snap := func() {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		snapshots = append(snapshots, hex.EncodeToString(b))
	}
	snap() // zero rows
	rows := 0
	for i := 0; i < 12; i++ {
		if i%4 == 3 { // a block of three rows
			block, _ := ndarray.New(rowDType, []int{3, 256}, bytes.Repeat(row(rows).Data, 3))
			require.NoError(t, w.Append(block))
			rows += 3
		} else {
			require.NoError(t, w.Append(row(rows)))
			rows++
		}
		snap()
	}
	// Past 9 and 99 rows the count gains digits.
	for rows < 105 {
		require.NoError(t, w.Append(row(rows)))
		rows++
	}
	snap()
	assert.Equal(t, int64(105), w.Rows())
	require.NoError(t, w.Close())

	// Reopened, it carries on.
	w, err = AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	require.NoError(t, w.Append(row(105)))
	require.NoError(t, w.Close())
	snap()

	in, _ := json.Marshal(snapshots)
	out := pypeer.Run(t, `
import io, json
import numpy as np
res = []
for h in json.load(sys.stdin):
    a = np.load(io.BytesIO(bytes.fromhex(h)))
    res.append([list(a.shape), a.dtype.str, [int(r[0]) for r in a], bool((a == a[:, :1]).all()) if len(a) else True])
print(json.dumps(res))
`, in)
	var res [][]any
	require.NoError(t, json.Unmarshal(out, &res))
	require.Len(t, res, len(snapshots))
	for i, r := range res {
		n := len(r[2].([]any))
		assert.Equal(t, []any{float64(n), 256.0}, r[0], "snapshot %d", i)
		assert.Equal(t, "<u2", r[1])
		assert.Equal(t, true, r[3], "each row holds one value")
	}
	last := res[len(res)-1][2].([]any)
	assert.Len(t, last, 106)
	assert.Equal(t, 105.0, last[105])
	a, err := ReadFile(p)
	require.NoError(t, err)
	assert.Equal(t, []int{106, 256}, a.Shape)
}

func TestAppendRefuses(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.npy")
	w, err := AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	wrongType, _ := ndarray.FromSlice(make([]float32, 256))
	assert.ErrorIs(t, w.Append(wrongType), ErrInvalidArray)
	wrongShape, _ := ndarray.FromSlice(make([]uint16, 255))
	err = w.Append(wrongShape)
	assert.EqualError(t, err, "npybridge: invalid array: cannot append an array of shape (255,) to rows of shape (256,)")
	big := row(1)
	be, _ := big.ToOrder('>')
	assert.ErrorIs(t, w.Append(be), ErrInvalidArray, "byte order must match")
	require.NoError(t, w.Close())
	assert.ErrorIs(t, w.Append(row(0)), os.ErrClosed)

	_, err = AppendOptions{}.OpenAppend(context.Background(), p, ndarray.DTypeOf[float64](), 256)
	assert.EqualError(t, err, "append "+p+": npybridge: invalid array: the file holds <u2, not <f8")
	_, err = AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 128)
	assert.ErrorIs(t, err, ErrInvalidArray)

	fortran := filepath.Join(dir, "fortran.npy")
	require.NoError(t, os.WriteFile(fortran, npyWith(1, "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 3), }          \n", six), 0o644))
	_, err = AppendOptions{}.OpenAppend(context.Background(), fortran, rowDType, 3)
	assert.ErrorIs(t, err, ErrUnsupported)
	assert.Contains(t, err.Error(), "Fortran order")

	// A header written without room for a longer count.
	tight := filepath.Join(dir, "tight.npy")
	require.NoError(t, os.WriteFile(tight, npyWith(1, "{'descr':'<u2','fortran_order':False,'shape':(6,)}\n", six), 0o644))
	_, err = AppendOptions{}.OpenAppend(context.Background(), tight, rowDType)
	assert.ErrorIs(t, err, errHeaderTooLarge)
	assert.Contains(t, err.Error(), "no room for a count of 6 rows")
	b, _ := os.ReadFile(tight)
	assert.Equal(t, npyWith(1, "{'descr':'<u2','fortran_order':False,'shape':(6,)}\n", six), b, "left as it was")

	// Rows a crash left uncounted are dropped on opening.
	w, err = AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	require.NoError(t, w.Append(row(7)))
	require.NoError(t, w.Close())
	f, _ := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	f.Write(make([]byte, 100))
	f.Close()
	w, err = AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	require.NoError(t, err)
	assert.Equal(t, int64(1), w.Rows())
	require.NoError(t, w.Close())
	fi, _ := os.Stat(p)
	assert.Equal(t, int64(128+512), fi.Size())
}

// TestAppendChild is the process the crash test kills: it appends rows to
// the file named by NDPACK_APPEND_CHILD and prints each count once its
// Append has returned.
func TestAppendChild(t *testing.T) {
	p := os.Getenv("NDPACK_APPEND_CHILD")
	if p == "" {
		t.Skip("run by TestAppendSurvivesKill")
	}
	w, err := AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 256)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	out := bufio.NewWriter(os.Stdout)
	for i := int(w.Rows()); ; i++ {
		if err := w.Append(row(i)); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		fmt.Fprintln(out, i+1)
		out.Flush()
	}
}

// A process killed (SIGKILL) at any moment of an append stream leaves a file
// numpy loads with the rows of every completed Append.
func TestAppendSurvivesKill(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	type result struct {
		File string `json:"file"`
		Done int    `json:"done"`
	}
	var results []result
	for trial := 0; trial < 20; trial++ {
		p := filepath.Join(dir, fmt.Sprintf("killed-%d.npy", trial))
		cmd := exec.Command(os.Args[0], "-test.run=^TestAppendChild$")
		cmd.Env = append(os.Environ(), "NDPACK_APPEND_CHILD="+p)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		lines := bufio.NewScanner(stdout)
		done := 0
		deadline := time.Now().Add(time.Duration(5+rng.IntN(60)) * time.Millisecond)
		for lines.Scan() {
			n, err := strconv.Atoi(lines.Text())
			require.NoError(t, err, lines.Text())
			done = n
			if time.Now().After(deadline) {
				break
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		results = append(results, result{p, done})
	}
	in, _ := json.Marshal(results)
	out := pypeer.Run(t, `
import json
import numpy as np
res = []
for r in json.load(sys.stdin):
    a = np.load(r["file"])
    ok = a.shape[1:] == (256,) and a.shape[0] >= r["done"] and all((a[i] == i % 65536).all() for i in range(a.shape[0]))
    res.append([int(a.shape[0]), r["done"], bool(ok)])
print(json.dumps(res))
`, in)
	var res [][]any
	require.NoError(t, json.Unmarshal(out, &res))
	for i, r := range res {
		assert.Equal(t, true, r[2], "trial %d: numpy loaded %v rows, %v Appends had completed", i, r[0], r[1])
	}
	t.Logf("killed 20 times after 0-%v completed appends: %v", res[len(res)-1][1], res)
}
