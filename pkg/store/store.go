package store

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"k8s.io/apimachinery/pkg/util/wait"
)

// MetaSHA256 is the user-metadata key (x-amz-meta-dbbench-sha256) under which
// every object's SHA-256 (hex) is stored. It is how a re-upload recognises an
// identical object and how a reader checks integrity.
const MetaSHA256 = "Dbbench-Sha256"

// Config is what New needs. The controller fills it from the BenchmarkRun's
// spec.output.s3 and the credentials Secret (keys accessKeyID and
// secretAccessKey).
type Config struct {
	// Endpoint is the store's URL: "https://s3.eu-west-1.amazonaws.com",
	// "http://minio.storage:9000". The scheme selects TLS; no path.
	Endpoint string
	Bucket   string
	// Prefix is prepended to every key (see Layout).
	Prefix string
	// Region is optional; when empty the client asks the store.
	Region          string
	AccessKeyID     string
	SecretAccessKey string
	// VirtualHostStyle addresses buckets as <bucket>.<host>; the default is
	// path-style (<host>/<bucket>), which every S3-compatible server serves.
	VirtualHostStyle bool
	// Backoff bounds the retries of each request; zero fields take
	// DefaultBackoff's values.
	Backoff Backoff
	// RequestTimeout bounds one request (attempt); 0 means 30 s.
	RequestTimeout time.Duration
	// Transport is the HTTP transport (custom CA bundles, proxies); nil
	// means a default one.
	Transport http.RoundTripper
	// OnRetry, if set, is called before each wait between attempts.
	OnRetry func(RetryEvent)
}

// RetryEvent describes a failed attempt that will be retried.
type RetryEvent struct {
	Op      string
	Key     string
	Attempt int           // the attempt that failed, from 1
	Wait    time.Duration // before the next attempt
	Err     error
}

// Object is one object as stored and confirmed.
type Object struct {
	Key    string
	Size   int64
	SHA256 string // hex
	MD5    string // hex; sent as Content-MD5, checked by the server
	// Unchanged is true when an identical object was already there and no
	// write was made.
	Unchanged bool
}

// Store reads and writes dbbench results in one bucket of an S3-compatible
// object store. It is safe for concurrent use.
type Store struct {
	client  *minio.Client
	bucket  string
	layout  Layout
	backoff Backoff
	timeout time.Duration
	onRetry func(RetryEvent)
	// rand returns the jitter's random number in [0, 1); tests replace it.
	rand func() float64
	// afterPut, if set, is called after each confirmed object (tests).
	afterPut func(key string)
}

// New checks cfg and makes a Store. It sends no request.
func New(cfg Config) (*Store, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", cfg.Endpoint, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("endpoint %q: scheme must be http or https", cfg.Endpoint)
	}
	if u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("endpoint %q: want scheme://host[:port] with no path, query or user", cfg.Endpoint)
	}
	if cfg.Bucket == "" {
		return nil, errors.New("bucket: required")
	}
	if cfg.AccessKeyID == "" || cfg.SecretAccessKey == "" {
		return nil, errors.New("credentials: accessKeyID and secretAccessKey are required")
	}
	lookup := minio.BucketLookupPath
	if cfg.VirtualHostStyle {
		lookup = minio.BucketLookupDNS
	}
	client, err := minio.New(u.Host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, ""),
		Secure:       u.Scheme == "https",
		Region:       cfg.Region,
		BucketLookup: lookup,
		Transport:    cfg.Transport,
		// Retries are ours (Backoff), with jitter, classified and bounded.
		MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", cfg.Endpoint, err)
	}
	s := &Store{
		client: client, bucket: cfg.Bucket, layout: Layout{Prefix: cfg.Prefix},
		backoff: cfg.Backoff.withDefaults(), timeout: cfg.RequestTimeout, onRetry: cfg.OnRetry,
		rand: rand.Float64,
	}
	if s.timeout <= 0 {
		s.timeout = 30 * time.Second
	}
	return s, nil
}

// Bucket is the store's bucket.
func (s *Store) Bucket() string { return s.bucket }

// Layout is the store's key layout.
func (s *Store) Layout() Layout { return s.layout }

// URL is "s3://<bucket>/<key>", for status fields and logs.
func (s *Store) URL(key string) string { return "s3://" + s.bucket + "/" + key }

// do runs op with the store's retries: transient and integrity errors are
// retried with backoff up to MaxAttempts; others return at once. The error
// is always an *Error naming the bucket and key.
func (s *Store) do(ctx context.Context, op, key string, fn func(ctx context.Context) error) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: op, Bucket: s.bucket, Key: key, Kind: KindTransient, Err: err}
	}
	var (
		attempt int
		last    error // the last attempt's error, unwrapped from our own *Error
		kind    Kind
		steps   = s.backoff.steps()
	)
	// wait calls delay after each failed attempt that is to be retried
	// (sliding), so the retry event carries the wait about to start.
	delay := wait.DelayFunc(func() time.Duration {
		d := s.backoff.shorten(steps.Step(), s.rand())
		if s.onRetry != nil {
			s.onRetry(RetryEvent{Op: op, Key: key, Attempt: attempt, Wait: d, Err: last})
		}
		return d
	})
	err := delay.Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		attempt++
		actx, cancel := context.WithTimeout(ctx, s.timeout)
		err := fn(actx)
		cancel()
		if err == nil {
			return true, nil
		}
		last, kind = err, classify(err)
		var se *Error
		if errors.As(err, &se) {
			kind = se.Kind // our own checks (integrity) say what they are
			last = se.Err
		}
		retry := kind == KindTransient || kind == KindIntegrity
		if !retry || attempt >= s.backoff.MaxAttempts || ctx.Err() != nil {
			return true, &Error{Op: op, Bucket: s.bucket, Key: key, Kind: kind, Attempts: attempt, Err: last}
		}
		return false, nil
	})
	var se *Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	// The context ended during a wait.
	return &Error{Op: op, Bucket: s.bucket, Key: key, Kind: kind, Attempts: attempt, Err: errors.Join(ctx.Err(), last)}
}

// CreateBucket makes the bucket if it does not exist (tests, local setups;
// production buckets are usually provisioned separately).
func (s *Store) CreateBucket(ctx context.Context) error {
	return s.do(ctx, "create bucket", "", func(ctx context.Context) error {
		ok, err := s.client.BucketExists(ctx, s.bucket)
		if err != nil || ok {
			return err
		}
		err = s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{})
		if c := minio.ToErrorResponse(err).Code; c == "BucketAlreadyOwnedByYou" || c == "BucketAlreadyExists" {
			return nil
		}
		return err
	})
}

// CheckBucket verifies that the bucket exists and the credentials can read
// it: a cheap pre-flight before a run starts, so a bad Secret or bucket name
// is reported before hours of benchmarking.
func (s *Store) CheckBucket(ctx context.Context) error {
	return s.do(ctx, "check bucket", "", func(ctx context.Context) error {
		ok, err := s.client.BucketExists(ctx, s.bucket)
		if err != nil {
			return err
		}
		if !ok {
			return &Error{Kind: KindPermanent, Err: errors.New("bucket does not exist")}
		}
		return nil
	})
}

// digest is an object's content digests.
type digest struct {
	sha256, md5 string
	md5raw      []byte
}

func digestOf(data []byte) digest {
	sh := sha256.Sum256(data)
	m := md5.Sum(data)
	return digest{sha256: hex.EncodeToString(sh[:]), md5: hex.EncodeToString(m[:]), md5raw: m[:]}
}

// Put stores data at key and confirms it. It is idempotent: if the key
// already holds an object with the same size and SHA-256 it writes nothing
// (Object.Unchanged); otherwise it writes with Content-MD5 (the server
// refuses a corrupted body) and the SHA-256 in the object's metadata, then
// reads the object's metadata back and returns only when size and SHA-256
// match. Transient failures are retried with backoff.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) (Object, error) {
	if len(key) > MaxKeyBytes {
		return Object{}, &Error{Op: "put", Bucket: s.bucket, Key: key, Kind: KindPermanent, Err: fmt.Errorf("key is %d bytes, over S3's %d", len(key), MaxKeyBytes)}
	}
	dg := digestOf(data)
	obj := Object{Key: key, Size: int64(len(data)), SHA256: dg.sha256, MD5: dg.md5}
	err := s.do(ctx, "put", key, func(ctx context.Context) error {
		if st, err := s.stat(ctx, key); err == nil && st.Size == obj.Size && st.SHA256 == obj.SHA256 {
			obj.Unchanged = true
			return nil
		} else if err != nil && classify(err) != KindNotFound {
			return err
		}
		_, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{
			ContentType:      contentType,
			UserMetadata:     map[string]string{MetaSHA256: dg.sha256},
			SendContentMd5:   true,
			DisableMultipart: true,
		})
		if err != nil {
			return err
		}
		st, err := s.stat(ctx, key)
		if err != nil {
			return err
		}
		if st.Size != obj.Size || st.SHA256 != obj.SHA256 {
			return &Error{Kind: KindIntegrity, Err: fmt.Errorf("stored %d bytes with sha256 %q, wrote %d bytes with sha256 %s", st.Size, st.SHA256, obj.Size, obj.SHA256)}
		}
		return nil
	})
	if err != nil {
		return Object{}, err
	}
	if s.afterPut != nil {
		s.afterPut(key)
	}
	return obj, nil
}

// stat is one HEAD request: the object's size and recorded SHA-256 ("" for
// objects written by others).
func (s *Store) stat(ctx context.Context, key string) (Object, error) {
	info, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Object{}, err
	}
	return Object{Key: key, Size: info.Size, SHA256: info.UserMetadata[MetaSHA256]}, nil
}

// Stat returns key's size and recorded SHA-256; the error is KindNotFound
// when there is no such object.
func (s *Store) Stat(ctx context.Context, key string) (Object, error) {
	var o Object
	err := s.do(ctx, "head", key, func(ctx context.Context) (err error) {
		o, err = s.stat(ctx, key)
		return err
	})
	return o, err
}

// Uploaded reports whether key exists (one HEAD, retried like every
// request). An unreachable store or refused credentials are an error, never
// "false" — except on servers that answer an unknown access key with a 404
// (versitygw does), which a body-less HEAD cannot tell from a missing
// object. "false" is the safe answer for an outbox: the next UploadCell
// reports the auth error.
func (s *Store) Uploaded(ctx context.Context, key string) (bool, error) {
	_, err := s.Stat(ctx, key)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Get reads key and, when the object records a SHA-256, checks the content
// against it (KindIntegrity on mismatch).
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	var data []byte
	err := s.do(ctx, "get", key, func(ctx context.Context) error {
		o, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
		if err != nil {
			return err
		}
		defer o.Close()
		b, err := io.ReadAll(o)
		if err != nil {
			return err
		}
		info, err := o.Stat()
		if err != nil {
			return err
		}
		if want := info.UserMetadata[MetaSHA256]; want != "" {
			if got := digestOf(b).sha256; got != want {
				return &Error{Kind: KindIntegrity, Err: fmt.Errorf("content has sha256 %s, object records %s", got, want)}
			}
		}
		data = b
		return nil
	})
	return data, err
}

// Delete removes key; a key that is not there is no error.
func (s *Store) Delete(ctx context.Context, key string) error {
	return s.do(ctx, "delete", key, func(ctx context.Context) error {
		err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
		if err != nil && classify(err) == KindNotFound {
			return nil
		}
		return err
	})
}

// list returns the keys (recursive) or the common prefixes (not recursive)
// under prefix.
func (s *Store) list(ctx context.Context, prefix string, recursive bool) ([]string, error) {
	var keys []string
	err := s.do(ctx, "list", prefix, func(ctx context.Context) error {
		keys = keys[:0]
		for o := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: recursive}) {
			if o.Err != nil {
				return o.Err
			}
			keys = append(keys, o.Key)
		}
		return nil
	})
	return keys, err
}

// List returns every key under prefix, in lexical order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	return s.list(ctx, prefix, true)
}

// isDir reports whether a listed key is a common prefix.
func isDir(key string) bool { return strings.HasSuffix(key, "/") }
