package conformance_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ndpack/ndpack/ext110"
	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/sharedfiles"
	"github.com/ndpack/ndpack/ndarray"
	"github.com/ndpack/ndpack/npybridge"
)

// externalDir holds files other projects wrote, with numpy's verdict on each
// in expected.json; it lives beside the repository, not in it.
const externalDir = "../../shared/corpus/external"

// verdict is numpy 1.24's reading of one file or npz member.
type verdict struct {
	Kind       string    `json:"kind"`
	Verdict    string    `json:"verdict"` // valid, structured, pickle, reject
	Name       string    `json:"name"`    // of an npz member
	DType      string    `json:"dtype"`
	Shape      []int     `json:"shape"`
	SHA256     string    `json:"sha256"`      // of the C-ordered bytes
	SaveSHA256 string    `json:"save_sha256"` // of np.save of them
	ExtSHA256  string    `json:"ext_sha256"`  // of the YEP-110 reference bytes
	Members    []verdict `json:"members"`
}

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// checkValid compares what ndpack read with numpy's reading, and what it
// writes with what np.save and the reference packer write.
func checkValid(t *testing.T, a *ndarray.Array, v verdict) {
	t.Helper()
	assert.Equal(t, v.DType, a.DType.String(), "dtype")
	assert.Equal(t, v.Shape, append([]int{}, a.Shape...), "shape")
	assert.Equal(t, v.SHA256, sha(a.Data), "the array's bytes")
	var buf bytes.Buffer
	require.NoError(t, npybridge.Write(&buf, a))
	assert.Equal(t, v.SaveSHA256, sha(buf.Bytes()), "written as np.save writes it")
	if v.ExtSHA256 != "" {
		b, err := ext110.Marshal(a)
		require.NoError(t, err)
		assert.Equal(t, v.ExtSHA256, sha(b), "written as the reference packer writes it")
	}
}

func TestExternalCorpus(t *testing.T) {
	raw := sharedfiles.ReadFile(t, filepath.Join(externalDir, "expected.json"))
	var expected map[string]verdict
	require.NoError(t, json.Unmarshal(raw, &expected))
	require.GreaterOrEqual(t, len(expected), 290)
	counts := map[string]int{}
	structured := map[string]*ndarray.Array{}
	for name, v := range expected {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(externalDir, name)
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			counts[v.Kind+" "+v.Verdict]++
			switch v.Kind {
			case "npy":
				a, err := npybridge.Read(bytes.NewReader(b))
				switch v.Verdict {
				case "valid":
					require.NoError(t, err)
					checkValid(t, a, v)
				case "structured":
					require.NoError(t, err)
					checkStructured(t, a, v)
					structured[name] = a
				case "pickle":
					require.ErrorIs(t, err, npybridge.ErrUnsupported)
				default:
					require.Error(t, err)
				}
			case "npz":
				checkNPZ(t, b, v)
			case "msgpack":
				// Not ext 110 (msgpack-numpy's own format): refused as such.
				_, err := ext110.Unmarshal(b)
				require.Error(t, err)
				require.True(t, errors.Is(err, ndarray.ErrNotArray) || errors.Is(err, ndarray.ErrMalformed), "%v", err)
			default:
				t.Fatalf("unknown kind %q", v.Kind)
			}
		})
	}
	t.Logf("checked: %v", counts)
	checkStructuredWithNumpy(t, structured)
}

// checkStructured compares a record array with numpy's reading: expected.json
// gives numpy's dtype.descr, which the header ndpack writes must carry.
func checkStructured(t *testing.T, a *ndarray.Array, v verdict) {
	t.Helper()
	require.True(t, a.DType.IsRecord(), "a structured file must read as a record, not %s", a.DType)
	assert.Equal(t, v.Shape, append([]int{}, a.Shape...), "shape")
	header := string(npybridge.AppendHeader(nil, a.DType, a.Shape))
	_, descr, _ := strings.Cut(header, "{'descr': ")
	descr, _, _ = strings.Cut(descr, ", 'fortran_order'")
	assert.Equal(t, v.DType, descr, "dtype.descr")
}

// checkStructuredWithNumpy: what ndpack writes of each structured file is
// what np.save writes of numpy's reading of it, byte for byte.
func checkStructuredWithNumpy(t *testing.T, arrays map[string]*ndarray.Array) {
	if len(arrays) == 0 {
		return
	}
	var names []string
	ours := map[string]string{}
	for name, a := range arrays {
		var buf bytes.Buffer
		require.NoError(t, npybridge.Write(&buf, a))
		names = append(names, name)
		ours[name] = sha(buf.Bytes())
	}
	in, err := json.Marshal(names)
	require.NoError(t, err)
	out := pypeer.Run(t, `
import sys, json, io, hashlib, os
import numpy as np
res = {}
for name in json.load(sys.stdin):
    f = io.BytesIO()
    np.save(f, np.load(os.path.join(sys.argv[1], name)))
    res[name] = hashlib.sha256(f.getvalue()).hexdigest()
json.dump(res, sys.stdout)
`, in, externalDir)
	var theirs map[string]string
	require.NoError(t, json.Unmarshal(out, &theirs))
	assert.Equal(t, theirs, ours, "np.save of numpy's reading, against ndpack's Write")
}

// checkNPZ reads every member of an archive by itself: a valid member reads
// as numpy reads it whatever the others hold.
func checkNPZ(t *testing.T, b []byte, v verdict) {
	z, err := npybridge.OpenNPZ(bytes.NewReader(b), int64(len(b)))
	require.NoError(t, err)
	require.Len(t, z.Names(), len(v.Members))
	for _, m := range v.Members {
		a, err := z.Read(m.Name)
		switch m.Verdict {
		case "valid":
			require.NoError(t, err, m.Name)
			checkValid(t, a, m)
		case "structured":
			require.NoError(t, err, m.Name)
			checkStructured(t, a, m)
		case "pickle":
			require.ErrorIs(t, err, npybridge.ErrUnsupported, m.Name)
		default:
			require.Error(t, err, m.Name)
		}
	}
}
