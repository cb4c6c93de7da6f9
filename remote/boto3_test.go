package remote_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strings"
	"testing"

	"github.com/ndpack/ndpack/internal/testutil/pypeer"
	"github.com/ndpack/ndpack/internal/testutil/s3fake"
	"github.com/ndpack/ndpack/npybridge"
	"github.com/ndpack/ndpack/remote"
)

// boto3 is the Python S3 client (Debian's python3-boto3), pointed at the
// fake S3 by path.
const boto3 = `
import os, sys, io, hashlib
import boto3
from botocore.config import Config
s3 = boto3.client('s3', endpoint_url=os.environ['AWS_ENDPOINT_URL'], region_name='us-east-1',
                  config=Config(s3={'addressing_style': 'path'}))
`

// TestBoto3 has boto3 write an object that ndpack reads, and read back one
// that ndpack wrote by multipart upload, byte for byte.
func TestBoto3(t *testing.T) {
	pypeer.RequireModule(t, "boto3", "python3-boto3")
	s := s3fake.Start(t, "peer")
	// boto3 writes an .npy numpy made; ndpack reads it and some rows.
	out := pypeer.Run(t, boto3+`
import numpy as np
a = np.arange(3000, dtype='<i8').reshape(1000, 3)
b = io.BytesIO()
np.save(b, a)
s3.put_object(Bucket='peer', Key='from/boto3.npy', Body=b.getvalue())
print(hashlib.sha256(b.getvalue()).hexdigest())
`, nil)
	obj := open(t, "s3://peer/from/boto3.npy")
	all, err := io.ReadAll(io.NewSectionReader(obj, 0, obj.Size()))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(all); hex.EncodeToString(sum[:]) != strings.TrimSpace(string(out)) {
		t.Fatalf("the object boto3 wrote reads back as %d other bytes", len(all))
	}
	rows, err := npybridge.ReadOptions{}.ReadRowsAt(obj, obj.Size(), 998, 1000)
	if err != nil || len(rows.Data) != 48 || rows.Data[0] != byte(2994%256) || rows.Data[40] != byte(2999%256) {
		t.Fatalf("rows 998:1000: %v, %v", rows, err)
	}

	// ndpack writes 12 MiB in three parts; boto3 reads them back.
	data := testData(12<<20 + 777)
	w, err := remote.Options{PartSize: (5 << 20)}.Create(context.Background(), "s3://peer/from/ndpack.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	out = pypeer.Run(t, boto3+`
body = s3.get_object(Bucket='peer', Key='from/ndpack.bin')['Body'].read()
print(len(body), hashlib.sha256(body).hexdigest())
`, nil)
	sum := sha256.Sum256(data)
	if want := "12583689 " + hex.EncodeToString(sum[:]); strings.TrimSpace(string(out)) != want {
		t.Fatalf("boto3 read %q, want %q", out, want)
	}
	_ = s
}
