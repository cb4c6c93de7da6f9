package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Writer writes an S3 object in one stream, as a multipart upload: the
// object appears under its key only when Close completes the upload. Full
// parts are uploaded Options.Concurrency at a time while the next fills,
// so that it holds at most that many parts and the one being filled. Any
// error, Abort, or the end of the context given to Create aborts the
// upload, so that no partial object is ever visible. Write and Close are
// not for concurrent use; Abort may be called from another goroutine at
// any time (a signal handler). Make one with Options.Create: the zero
// Writer writes to nothing, and its methods fail.
type Writer struct {
	mu          sync.Mutex // guards uploadID, aborted, parts and failed, for Abort and the uploads
	aborted     bool
	ctx         context.Context
	client      *s3.Client
	bucket, key string
	name        string
	buf         []byte // the part being filled, of cap PartSize
	uploadID    *string
	parts       []types.CompletedPart
	failed      error // the first upload's failure, as the error of Write and Close
	err         error // sticky, for Write and Close
	done        bool
	abortWait   time.Duration
	aborting    sync.Mutex // held while an abort is sent, so that every Abort waits for it
	creating    sync.Mutex // held while the upload is begun, so that Abort waits for its ID

	// The parts being uploaded: slots holds one token per upload that may
	// run, uploads the ones running; cancel ends them (an error, Abort).
	slots   chan struct{}
	uploads sync.WaitGroup
	upCtx   context.Context
	cancel  context.CancelFunc
	next    int32 // the number of the next part
	bufs    sync.Pool
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
	w := &Writer{ctx: ctx, client: c, bucket: bucket, key: key, name: name, buf: make([]byte, 0, part), abortWait: wait,
		slots: make(chan struct{}, o.concurrency()), next: 1}
	w.upCtx, w.cancel = context.WithCancel(ctx)
	w.bufs.New = func() any { b := make([]byte, 0, part); return &b }
	return w, nil
}

// Write adds p to the object, uploading each part as it fills. On an
// error the upload is aborted and every later call fails.
func (w *Writer) Write(p []byte) (int, error) {
	if w.client == nil {
		return 0, errNotCreated
	}
	if err := w.check("UploadPart"); err != nil {
		return 0, err
	}
	if w.done {
		return 0, fmt.Errorf("remote: %s: write after Close", w.name)
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

// check returns the error that ends the upload, if one has: an earlier
// one, a part's upload that failed (the upload is then aborted), or Abort.
func (w *Writer) check(op string) error {
	if w.err != nil {
		return w.err
	}
	w.mu.Lock()
	failed, aborted := w.failed, w.aborted
	w.mu.Unlock()
	switch {
	case failed != nil:
		w.err = failed
		if err := w.abortErr(); err != nil {
			w.err = err
		}
		return w.err
	case aborted:
		return w.fail(op, errAborted)
	}
	return nil
}

// flush starts uploading the buffered part, once one of the Concurrency
// uploads is free, and gives the Writer a new buffer to fill.
func (w *Writer) flush() error {
	if err := w.ctx.Err(); err != nil {
		return w.fail("UploadPart", err)
	}
	id := w.id()
	if id == nil {
		// Abort waits for this, so that an upload begun as it is called
		// is aborted too.
		w.creating.Lock()
		out, err := w.client.CreateMultipartUpload(w.ctx, &s3.CreateMultipartUploadInput{Bucket: &w.bucket, Key: &w.key})
		if err == nil {
			w.mu.Lock()
			w.uploadID, id = out.UploadId, out.UploadId
			w.mu.Unlock()
		}
		w.creating.Unlock()
		if err != nil {
			return w.fail("CreateMultipartUpload", err)
		}
		if w.isAborted() {
			return w.fail("UploadPart", errAborted)
		}
	}
	num := w.next
	if num > 10000 {
		return w.fail("UploadPart", errors.New("more than S3's 10,000 parts: raise the part size"))
	}
	select {
	case w.slots <- struct{}{}:
	case <-w.upCtx.Done():
		return w.check("UploadPart")
	}
	// Once aborted, no upload starts: Abort waits for those that did.
	w.mu.Lock()
	stopped := w.aborted || w.failed != nil
	if !stopped {
		w.uploads.Add(1)
	}
	w.mu.Unlock()
	if stopped {
		<-w.slots
		return w.check("UploadPart")
	}
	w.next++
	part := w.buf
	nb := w.bufs.Get().(*[]byte)
	w.buf = (*nb)[:0]
	go w.upload(id, num, part)
	return nil
}

// upload sends one part; its failure fails the Writer and ends the other
// uploads.
func (w *Writer) upload(id *string, num int32, part []byte) {
	defer w.uploads.Done()
	defer func() { <-w.slots }()
	out, err := w.client.UploadPart(w.upCtx, &s3.UploadPartInput{
		Bucket: &w.bucket, Key: &w.key, UploadId: id,
		PartNumber: aws.Int32(num), Body: bytes.NewReader(part),
		ContentLength: aws.Int64(int64(len(part))),
	})
	part = part[:0]
	w.bufs.Put(&part)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		if w.failed == nil && !w.aborted {
			w.failed = s3Error("UploadPart", w.name, err)
			w.cancel()
		}
		return
	}
	w.parts = append(w.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
}

// fail records err and aborts the upload; an abort that fails too is
// said in the error.
func (w *Writer) fail(op string, err error) error {
	w.err = s3Error(op, w.name, err)
	if aerr := w.abortErr(); aerr != nil {
		w.err = aerr
	}
	return w.err
}

// abortErr aborts the upload once the parts being uploaded have ended,
// and returns w.err with the abort's failure said too, or nil if the abort
// went well.
func (w *Writer) abortErr() error {
	w.cancel()
	w.uploads.Wait()
	var af *abortFailure
	if errors.As(w.abort(), &af) {
		return fmt.Errorf("%w (and the upload could not be aborted: upload ID %s: %v; %s)", w.err, af.id, af.cause, partsStay)
	}
	return nil
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
	// One abort at a time, the others waiting for it: a signal's Abort
	// must not return, and let the process exit, while a failing Write's
	// abort is still on its way.
	w.aborting.Lock()
	defer w.aborting.Unlock()
	w.mu.Lock()
	id := w.uploadID
	w.uploadID, w.aborted = nil, true
	w.mu.Unlock()
	if id == nil {
		// The abort was sent by another call, which reported its failure:
		// said once is enough.
		return nil
	}
	return w.sendAbort(id)
}

// sendAbort asks the store to abort the upload id, within abortWait.
func (w *Writer) sendAbort(id *string) error {
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
	if w.client == nil {
		return errNotCreated
	}
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
	w.uploads.Wait()
	if err := w.check("CompleteMultipartUpload"); err != nil {
		return err
	}
	id := w.id()
	if id == nil {
		return w.fail("CompleteMultipartUpload", errAborted)
	}
	// Parts end in any order; S3 takes them in order of their numbers.
	slices.SortFunc(w.parts, func(a, b types.CompletedPart) int { return int(*a.PartNumber - *b.PartNumber) })
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
	w.cancel()
	return nil
}

// Abort discards what was written: the upload is aborted and nothing
// appears under the key; Write and Close fail after it. It does nothing
// once Close has completed the upload. It may be called while another
// goroutine writes. It waits at most 10 seconds for the store's answer.
// Its error, when the store refuses the abort or gives no answer in time,
// names the upload ID, whose parts then stay in the bucket.
func (w *Writer) Abort() error {
	if w.client == nil {
		return errNotCreated
	}
	w.mu.Lock()
	w.aborted = true // no upload starts after this
	w.mu.Unlock()
	w.cancel()        // and those running end, before the abort that S3 would race
	w.creating.Lock() // an upload being begun has its ID
	w.creating.Unlock()
	w.uploads.Wait()
	return w.abort()
}

// errNotCreated is what the methods of a Writer not made by Create return.
var errNotCreated = errors.New("remote: the Writer writes to nothing: make one with Options.Create")

func (w *Writer) isAborted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.aborted
}
