package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// s3Source is an object in S3.
type s3Source struct {
	client      *s3.Client
	bucket, key string
	name        string
}

// splitS3 splits s3://BUCKET/KEY.
func splitS3(u *url.URL, name string) (bucket, key string, err error) {
	bucket, key = u.Host, strings.TrimPrefix(u.Path, "/")
	if bucket == "" || key == "" {
		return "", "", fmt.Errorf("%w: %s: an S3 URL is s3://BUCKET/KEY", ErrUnsupported, name)
	}
	return bucket, key, nil
}

// newS3Client makes a client with the SDK's standard configuration,
// addressing buckets by path when an endpoint is given.
func newS3Client(ctx context.Context, name string) (*s3.Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("remote: %s: the AWS configuration: %w", name, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1" // what S3-compatible stores accept, and S3 redirects from
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		// Stores other than AWS often send no checksum; saying so on
		// standard error for every read is noise, not a fault.
		o.DisableLogOutputChecksumValidationSkipped = true
		if o.BaseEndpoint != nil && *o.BaseEndpoint != "" {
			o.UsePathStyle = true
		}
	}), nil
}

func newS3Source(ctx context.Context, u *url.URL, name string) (*s3Source, error) {
	bucket, key, err := splitS3(u, name)
	if err != nil {
		return nil, err
	}
	c, err := newS3Client(ctx, name)
	if err != nil {
		return nil, err
	}
	return &s3Source{client: c, bucket: bucket, key: key, name: name}, nil
}

// s3Error names the object and the status of a failed S3 call, and the
// service's error code, but not the SDK's whole message.
func s3Error(op, name string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("remote: %s %s: %w", op, name, contextOf(err))
	}
	var ue *url.Error
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == 0 {
		// No answer: the request failed (a connection refused, a name not
		// found, TLS). The cause says which; the url.Error around it
		// would quote the request's URL.
		cause := errors.Unwrap(re)
		if errors.As(err, &ue) {
			cause = ue.Err
		}
		if cause == nil {
			cause = errors.New("no answer")
		}
		return &transportError{op: op + " " + name, cause: cause}
	}
	if errors.As(err, &re) {
		detail := ""
		var ae smithy.APIError
		if errors.As(err, &ae) {
			detail = ae.ErrorCode()
		}
		return &statusError{op: op, url: name, status: re.HTTPStatusCode(), detail: detail}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return fmt.Errorf("remote: %s %s: %s", op, name, ae.ErrorCode())
	}
	return fmt.Errorf("remote: %s %s: %w", op, name, err)
}

// contextOf returns the context error err holds, for context.Cause.
func contextOf(err error) error {
	if errors.Is(err, context.Canceled) {
		return context.Canceled
	}
	return context.DeadlineExceeded
}

func s3Version(etag *string, lm *time.Time) version {
	v := version{etag: aws.ToString(etag)}
	if lm != nil {
		v.lastModified = lm.UTC().Format(http.TimeFormat)
	}
	return v
}

func (s *s3Source) host() string { return "s3://" + s.bucket }

func (s *s3Source) head(ctx context.Context) (int64, version, io.ReadCloser, error) {
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &s.key})
	if err != nil {
		return 0, version{}, nil, s3Error("HeadObject", s.name, err)
	}
	if out.ContentLength == nil {
		return 0, version{}, nil, fmt.Errorf("remote: HeadObject %s: no Content-Length", s.name)
	}
	return *out.ContentLength, s3Version(out.ETag, out.LastModified), nil, nil
}

func (s *s3Source) get(ctx context.Context, off, n int64, v version) (io.ReadCloser, bool, error) {
	in := &s3.GetObjectInput{
		Bucket: &s.bucket,
		Key:    &s.key,
		Range:  aws.String("bytes=" + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10)),
	}
	if v.etag != "" {
		in.IfMatch = aws.String(v.etag)
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		err = s3Error("GetObject", s.name, err)
		if errors.Is(err, ErrChanged) {
			return nil, false, fmt.Errorf("%w: %s: it is no longer %s", ErrChanged, s.name, v)
		}
		return nil, false, err
	}
	if now := s3Version(out.ETag, out.LastModified); v.differs(now) {
		out.Body.Close()
		return nil, false, changed(s.name, v, now)
	}
	cr := aws.ToString(out.ContentRange)
	if cr == "" {
		return out.Body, true, nil // the whole object: the store ignores Range
	}
	if start, err := contentRangeStart(cr); err != nil || start != off {
		out.Body.Close()
		return nil, false, fmt.Errorf("remote: GetObject %s: asked for bytes from %d, the store answered Content-Range %q", s.name, off, cr)
	}
	return out.Body, false, nil
}
