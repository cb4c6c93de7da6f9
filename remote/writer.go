package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Writer writes an S3 object in one stream, as a multipart upload in
// memory of one part: the object appears under its key only when Close
// completes the upload. Any error, Abort, or the end of the context given
// to Create aborts the upload, so that no partial object is ever visible.
// Write and Close are not for concurrent use; Abort may be called from
// another goroutine at any time (a signal handler).
type Writer struct {
	mu          sync.Mutex // guards uploadID and aborted, for Abort
	aborted     bool
	ctx         context.Context
	client      *s3.Client
	bucket, key string
	name        string
	buf         []byte // the part being filled, of cap PartSize
	uploadID    *string
	parts       []types.CompletedPart
	err         error // sticky
	done        bool
	abortWait   time.Duration
}

// Create starts writing the S3 object at rawURL (s3://BUCKET/KEY): nothing
// is sent until the first part is full or Close is called. ctx governs the
// whole upload.
// It fails with an error wrapping ErrUnsupported for a URL that is not
// s3://BUCKET/KEY, a plain error for a PartSize outside S3's limits, and the
// AWS configuration's error.
func (o Options) Create(ctx context.Context, rawURL string) (*Writer, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "s3" {
		return nil, fmt.Errorf("%w: %s: only s3://BUCKET/KEY objects can be written", ErrUnsupported, Redact(rawURL))
	}
	name := redactURL(u)
	bucket, key, err := splitS3(u, name)
	if err != nil {
		return nil, err
	}
	part := o.PartSize
	if part == 0 {
		part = defaultPartSize
	}
	if part < minPartSize {
		return nil, fmt.Errorf("remote: %s: a part size of %d bytes is under S3's minimum of %d", name, part, minPartSize)
	}
	if part > 5<<30 {
		return nil, fmt.Errorf("remote: %s: a part size of %d bytes is over S3's maximum of 5 GiB", name, part)
	}
	c, err := newS3Client(ctx, name)
	if err != nil {
		return nil, err
	}
	wait := o.abortWait
	if wait <= 0 {
		wait = abortTimeout
	}
	return &Writer{ctx: ctx, client: c, bucket: bucket, key: key, name: name, buf: make([]byte, 0, part), abortWait: wait}, nil
}

// Write adds p to the object, uploading each part as it fills. On an
// error the upload is aborted and every later call fails.
func (w *Writer) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.done {
		return 0, fmt.Errorf("remote: %s: write after Close", w.name)
	}
	if w.isAborted() {
		return 0, w.fail("UploadPart", errAborted)
	}
	n := 0
	for len(p) > 0 {
		k := copy(w.buf[len(w.buf):cap(w.buf)], p)
		w.buf = w.buf[:len(w.buf)+k]
		p = p[k:]
		n += k
		if len(w.buf) == cap(w.buf) {
			if err := w.flush(); err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// flush uploads the buffered part.
func (w *Writer) flush() error {
	if err := w.ctx.Err(); err != nil {
		return w.fail("UploadPart", err)
	}
	id := w.id()
	if id == nil {
		out, err := w.client.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{Bucket: &w.bucket, Key: &w.key})
		if err != nil {
			return w.fail("CreateMultipartUpload", err)
		}
		w.mu.Lock()
		w.uploadID, id = out.UploadId, out.UploadId
		aborted := w.aborted
		w.mu.Unlock()
		if aborted {
			return w.fail("UploadPart", errAborted)
		}
	}
	num := int32(len(w.parts) + 1)
	if num > 10000 {
		return w.fail("UploadPart", errors.New("more than S3's 10,000 parts: raise the part size"))
	}
	out, err := w.client.UploadPart(w.ctx, &s3.UploadPartInput{
		Bucket: &w.bucket, Key: &w.key, UploadId: id,
		PartNumber: aws.Int32(num), Body: bytes.NewReader(w.buf),
		ContentLength: aws.Int64(int64(len(w.buf))),
	})
	if err != nil {
		return w.fail("UploadPart", err)
	}
	w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
	w.buf = w.buf[:0]
	return nil
}

// fail records err and aborts the upload; an abort that fails too is
// said in the error.
func (w *Writer) fail(op string, err error) error {
	w.err = s3Error(op, w.name, err)
	var af *abortFailure
	if errors.As(w.abort(), &af) {
		w.err = fmt.Errorf("%w (and the upload could not be aborted: upload ID %s: %v; %s)", w.err, af.id, af.cause, partsStay)
	}
	return w.err
}

// partsStay says what an upload that was not aborted leaves.
const partsStay = "its parts stay in the bucket, unseen, until it is aborted (aws s3api abort-multipart-upload) or a lifecycle rule removes them"

// abortFailure is an AbortMultipartUpload that failed or had no answer.
type abortFailure struct {
	name, id string
	cause    error
}

func (e *abortFailure) Error() string {
	return fmt.Sprintf("remote: AbortMultipartUpload %s: upload ID %s: %v; %s", e.name, e.id, e.cause, partsStay)
}

func (e *abortFailure) Unwrap() error { return e.cause }

// wrapped is an error that says text and wraps err.
type wrapped struct {
	text string
	err  error
}

func (e *wrapped) Error() string { return e.text }
func (e *wrapped) Unwrap() error { return e.err }

// id returns the upload's ID, nil before it began or once aborted.
func (w *Writer) id() *string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.uploadID
}

// errAborted is the cause of the errors after Abort.
var errAborted = errors.New("the upload was aborted")

// abort ends the multipart upload, if one was begun, even after ctx ended.
func (w *Writer) abort() error {
	w.mu.Lock()
	id := w.uploadID
	w.uploadID, w.aborted = nil, true
	w.mu.Unlock()
	if id == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(w.ctx), w.abortWait)
	defer cancel()
	if _, err := w.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &w.bucket, Key: &w.key, UploadId: id}); err != nil {
		if ctx.Err() != nil {
			return &abortFailure{name: w.name, id: *id, cause: fmt.Errorf("no answer within %v", w.abortWait)}
		}
		// Its cause as s3Error says it, without the operation and name
		// that abortFailure says.
		err = s3Error("AbortMultipartUpload", w.name, err)
		what := strings.TrimPrefix(err.Error(), "remote: AbortMultipartUpload "+w.name+": ")
		return &abortFailure{name: w.name, id: *id, cause: &wrapped{what, err}}
	}
	return nil
}

// Close uploads the last part and completes the upload: only then does the
// object appear (an object smaller than one part is sent whole, by one
// PutObject). If anything fails the upload is aborted.
// It fails with the S3 request's error (matching what Open's errors match),
// ctx's error, the error that failed an earlier Write, or, after Abort, an
// error saying so.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return nil
	}
	w.done = true
	if err := w.ctx.Err(); err != nil {
		return w.fail("CompleteMultipartUpload", err)
	}
	if w.isAborted() {
		return w.fail("CompleteMultipartUpload", errAborted)
	}
	if w.id() == nil {
		_, err := w.client.PutObject(w.ctx, &s3.PutObjectInput{
			Bucket: &w.bucket, Key: &w.key, Body: bytes.NewReader(w.buf),
			ContentLength: aws.Int64(int64(len(w.buf))),
		})
		w.buf = nil
		if err != nil {
			w.err = s3Error("PutObject", w.name, err)
		}
		return w.err
	}
	if len(w.buf) > 0 {
		if err := w.flush(); err != nil {
			return err
		}
	}
	id := w.id()
	if id == nil {
		return w.fail("CompleteMultipartUpload", errAborted)
	}
	_, err := w.client.CompleteMultipartUpload(w.ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &w.bucket, Key: &w.key, UploadId: id,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: w.parts},
	})
	if err != nil {
		return w.fail("CompleteMultipartUpload", err)
	}
	w.mu.Lock()
	w.uploadID, w.buf = nil, nil
	w.mu.Unlock()
	return nil
}

// Abort discards what was written: the upload is aborted and nothing
// appears under the key; Write and Close fail after it. It does nothing
// once Close has completed the upload. It may be called while another
// goroutine writes. It waits at most 10 seconds for the store's answer.
// Its error, when the store refuses the abort or gives no answer in time,
// names the upload ID, whose parts then stay in the bucket.
func (w *Writer) Abort() error {
	return w.abort()
}

func (w *Writer) isAborted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.aborted
}
