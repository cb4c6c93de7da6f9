package npybridge

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/ndarray"
)

// smallDisk mounts a 1 MiB tmpfs for the test. Where mounting is not
// allowed (not root, or a container without the right) the test is
// skipped: TestAppendDiskFullRollsBack covers the rollback everywhere, and
// this one adds the real kernel's ENOSPC where it can.
func smallDisk(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "disk")
	require.NoError(t, os.Mkdir(dir, 0o755))
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// On a disk that fills up, appending stops at the last whole row: rows of
// 600 bytes straddle the tmpfs's pages, so the write that fails has
// written part of its row.
func TestAppendFullTmpfs(t *testing.T) {
	p := filepath.Join(smallDisk(t), "frames.npy")
	w, err := AppendOptions{}.OpenAppend(context.Background(), p, rowDType, 300)
	require.NoError(t, err)
	defer w.Close()
	var rows int64
	row := make([]byte, 600)
	for ; rows < 10000; rows++ {
		for k := 0; k < 300; k++ {
			binary.LittleEndian.PutUint16(row[2*k:], uint16(rows))
		}
		a, _ := ndarray.New(rowDType, []int{300}, row)
		if err = w.Append(a); err != nil {
			break
		}
	}
	require.Error(t, err, "1 MiB holds fewer than 10,000 rows of 600 bytes")
	assert.ErrorIs(t, err, ErrNotAppended)
	assert.ErrorIs(t, err, syscall.ENOSPC)
	assert.EqualError(t, err, fmt.Sprintf("append %s: npybridge: rows not appended at byte %d: the disk is full: "+
		"1 row (600 bytes) did not fit; the file was cut back to its last whole row and holds %d rows: no space left on device", p, 128+600*rows, rows))
	assert.Equal(t, rows, w.Rows())
	fi, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, 128+600*rows, fi.Size(), "no partial row")
	t.Logf("the 1 MiB disk filled after %d rows", rows)

	out := pypeer.Run(t, `
import json
import numpy as np
a = np.load(sys.stdin.readline().strip())
print(json.dumps([list(a.shape), bool((a == (np.arange(len(a)) % 65536).astype("<u2")[:, None]).all())]))
`, []byte(p+"\n"))
	var res []any
	require.NoError(t, json.Unmarshal(out, &res))
	assert.Equal(t, []any{[]any{float64(rows), 300.0}, true}, res)
}
