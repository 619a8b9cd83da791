package remote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3 is a bucket (and a prefix in it) of any S3-compatible object store.
type S3 struct {
	bucket   string
	prefix   string // "" or ending in "/"
	where    string
	endpoint string

	// The client is made on first use: loading the AWS configuration
	// (files, the system's certificates) costs milliseconds that a warm
	// run, whose every lookup is a local hit, need not pay.
	once    sync.Once
	c       *s3.Client
	openErr error
}

// OpenS3 opens s3://bucket/prefix. Credentials and region come from the
// standard AWS chain (environment, shared config and credentials files, SSO,
// instance roles) when the store is first used: this package never reads,
// stores or logs them. endpoint, when set, is the base URL of an
// S3-compatible service other than AWS (MinIO, Ceph, a test server); it is
// addressed path-style.
func OpenS3(_ context.Context, rawURL, endpoint string) (*S3, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("remote cache %q: want s3://bucket/prefix", rawURL)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &S3{bucket: u.Host, prefix: prefix, where: "s3://" + u.Host + "/" + prefix, endpoint: endpoint}, nil
}

// client makes the SDK client once.
func (s *S3) client(ctx context.Context) (*s3.Client, error) {
	s.once.Do(func() {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			s.openErr = fmt.Errorf("remote cache %s: loading the AWS configuration: %w", s.where, err)
			return
		}
		if cfg.Region == "" {
			cfg.Region = "us-east-1" // S3-compatible services sign with one; AWS itself redirects
		}
		s.c = s3.NewFromConfig(cfg, func(o *s3.Options) {
			if s.endpoint != "" {
				o.BaseEndpoint = aws.String(s.endpoint)
				o.UsePathStyle = true
			}
		})
	})
	return s.c, s.openErr
}

func (s *S3) Where() string { return s.where }

func (s *S3) Get(ctx context.Context, name string) ([]byte, error) {
	c, err := s.client(ctx)
	if err != nil {
		return nil, err
	}
	out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + name)})
	if err != nil {
		var nk *types.NoSuchKey
		if errors.As(err, &nk) || status(err) == http.StatusNotFound {
			return nil, fmt.Errorf("%s%s: %w", s.where, name, ErrMissing)
		}
		return nil, fmt.Errorf("reading %s%s: %w", s.where, name, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, 64<<20))
	if err != nil {
		if checksumMismatch(err) {
			return nil, fmt.Errorf("reading %s%s: %w: %v", s.where, name, ErrIntegrity, err)
		}
		return nil, fmt.Errorf("reading %s%s: %w", s.where, name, err)
	}
	return b, nil
}

// checksumMismatch recognises the SDK's response-checksum failure (the
// body does not match the checksum the store sent): its type is internal
// to the SDK, so only its text names it.
func checksumMismatch(err error) bool { return strings.Contains(err.Error(), "checksum did not match") }

// PutIfAbsent sends If-None-Match: * so that the store, not a race between
// a check and a write, decides who writes a key first.
func (s *S3) PutIfAbsent(ctx context.Context, name string, body []byte) (bool, error) {
	c, err := s.client(ctx)
	if err != nil {
		return false, err
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: aws.String(s.prefix + name),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))), IfNoneMatch: aws.String("*"),
		ContentType: aws.String("application/json")})
	if err == nil {
		return true, nil
	}
	if st := status(err); st == http.StatusPreconditionFailed || st == http.StatusConflict {
		return false, nil // written by another writer first: records are immutable, so it is this one
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict") {
		return false, nil
	}
	return false, fmt.Errorf("writing %s%s: %w", s.where, name, err)
}

// status is the HTTP status of an SDK error, or 0.
func status(err error) int {
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}
