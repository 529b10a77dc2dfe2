package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"
)

const ms = time.Millisecond

func TestBackoffSchedule(t *testing.T) {
	tests := []struct {
		name string
		b    Backoff
		want []time.Duration
	}{
		{"default", DefaultBackoff(), []time.Duration{500 * ms, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}},
		{"capped at Max", Backoff{Initial: 100 * ms, Max: 300 * ms, Multiplier: 2, MaxAttempts: 6},
			[]time.Duration{100 * ms, 200 * ms, 300 * ms, 300 * ms, 300 * ms}},
		{"multiplier 3", Backoff{Initial: 10 * ms, Max: time.Hour, Multiplier: 3, MaxAttempts: 4}, []time.Duration{10 * ms, 30 * ms, 90 * ms}},
		{"no retries", Backoff{Initial: time.Second, MaxAttempts: 1}, []time.Duration{}},
		{"Initial above Max is capped too", Backoff{Initial: time.Minute, Max: time.Second, Multiplier: 2, MaxAttempts: 3}, []time.Duration{time.Second, time.Second}},
		{"multiplier 1 stays put", Backoff{Initial: 70 * ms, Max: time.Second, Multiplier: 1, MaxAttempts: 4}, []time.Duration{70 * ms, 70 * ms, 70 * ms}},
		{"zero value takes the defaults", Backoff{}, DefaultBackoff().Schedule()},
		{"huge attempt count does not overflow", Backoff{Initial: time.Second, Max: time.Minute, Multiplier: 10, MaxAttempts: 400}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.b.Schedule()
			if tt.want == nil {
				for i, d := range got {
					if d <= 0 || d > time.Minute {
						t.Fatalf("retry %d waits %v, want (0, 1m]", i+1, d)
					}
				}
				return
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Schedule() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBackoffJitter(t *testing.T) {
	b := Backoff{Initial: time.Second, Max: time.Minute, Multiplier: 2, Jitter: 0.5, MaxAttempts: 5}
	for _, tt := range []struct {
		n    int
		r    float64
		want time.Duration
	}{
		{1, 0, time.Second},
		{1, 0.5, 750 * ms},
		{1, 1, 500 * ms},
		{3, 0, 4 * time.Second},
		{3, 1, 2 * time.Second},
		{0, 0, time.Second}, // n < 1 is treated as 1
	} {
		got := b.Delay(tt.n, tt.r)
		if d := got - tt.want; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("Delay(%d, %v) = %v, want %v", tt.n, tt.r, got, tt.want)
		}
	}
	full := Backoff{Initial: time.Second, Multiplier: 2, Jitter: 1, MaxAttempts: 3}
	if got := full.Delay(2, 0.75); got != 500*ms {
		t.Errorf("full jitter Delay(2, 0.75) = %v, want 500ms", got)
	}
	over := Backoff{Initial: time.Second, Multiplier: 2, Jitter: 7, MaxAttempts: 3}
	if got := over.Delay(1, 0.5); got != 500*ms {
		t.Errorf("Jitter above 1 is clamped: Delay(1, 0.5) = %v, want 500ms", got)
	}
}

func TestClassify(t *testing.T) {
	refused := &url.Error{Op: "Put", URL: "http://127.0.0.1:1/b/k", Err: &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}}
	for _, tt := range []struct {
		err  error
		want Kind
	}{
		{minio.ErrorResponse{StatusCode: 403, Code: "InvalidAccessKeyId"}, KindAuth},
		{minio.ErrorResponse{StatusCode: 403, Code: "SignatureDoesNotMatch"}, KindAuth},
		{minio.ErrorResponse{StatusCode: 403, Code: "AccessDenied"}, KindAuth},
		{minio.ErrorResponse{StatusCode: 400, Code: "ExpiredToken"}, KindAuth},
		{minio.ErrorResponse{StatusCode: 404, Code: "NoSuchKey"}, KindNotFound},
		{minio.ErrorResponse{StatusCode: 404, Code: "NoSuchBucket"}, KindPermanent},
		{minio.ErrorResponse{StatusCode: 404, Code: "NoSuchUpload"}, KindPermanent},
		{minio.ErrorResponse{StatusCode: 404, Code: "XAdminUserNotFound"}, KindAuth},
		{minio.ErrorResponse{StatusCode: 503, Code: "SlowDown"}, KindTransient},
		{minio.ErrorResponse{StatusCode: 500, Code: "InternalError"}, KindTransient},
		{minio.ErrorResponse{StatusCode: 502, Code: "502 Bad Gateway"}, KindTransient},
		{minio.ErrorResponse{StatusCode: 429, Code: "TooManyRequests"}, KindTransient},
		{minio.ErrorResponse{StatusCode: 400, Code: "RequestTimeout"}, KindTransient},
		{minio.ErrorResponse{StatusCode: 400, Code: "BadDigest"}, KindPermanent},
		{minio.ErrorResponse{Code: "InvalidBucketName"}, KindPermanent},
		{refused, KindTransient},
		{io.ErrUnexpectedEOF, KindTransient},
		{fmt.Errorf("put: %w", context.DeadlineExceeded), KindTransient},
		{errors.New("http: server gave HTTP response to HTTPS client"), KindPermanent},
	} {
		if got := classify(tt.err); got != tt.want {
			t.Errorf("classify(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestErrorKindsMatchSentinels(t *testing.T) {
	err := fmt.Errorf("uploading cell: %w", &Error{Op: "put", Bucket: "b", Key: "p/s/r/c/result.json", Kind: KindAuth, Attempts: 1,
		Err: minio.ErrorResponse{StatusCode: 403, Code: "InvalidAccessKeyId", Message: "The AWS Access Key Id you provided does not exist in our records."}})
	if !errors.Is(err, ErrAuth) || errors.Is(err, ErrTransient) || Retryable(err) {
		t.Fatalf("an auth error must match ErrAuth only and not be retryable: %v", err)
	}
	want := "uploading cell: put s3://b/p/s/r/c/result.json: credentials refused (not retried; check the credentials Secret and the bucket policy): The AWS Access Key Id you provided does not exist in our records. (HTTP 403 InvalidAccessKeyId)"
	if err.Error() != want {
		t.Errorf("message:\n got %s\nwant %s", err, want)
	}
	tr := &Error{Op: "put", Bucket: "b", Key: "k", Kind: KindTransient, Attempts: 6, Err: io.ErrUnexpectedEOF}
	if !Retryable(tr) || !errors.Is(tr, ErrTransient) || !errors.Is(tr, io.ErrUnexpectedEOF) {
		t.Fatalf("a transient error must be retryable and unwrap to its cause: %v", tr)
	}
}

// The retry loop against a port where nothing listens: bounded attempts,
// the waits of the schedule, a transient error naming the key; and an
// immediate stop when the context ends.
func TestRetriesAreBoundedAndContextAware(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now: connection refused

	var events []RetryEvent
	s, err := New(Config{Endpoint: "http://" + addr, Bucket: "bench", Region: "us-east-1", AccessKeyID: "ak", SecretAccessKey: "sk",
		Backoff: Backoff{Initial: 10 * ms, Max: 40 * ms, Multiplier: 2, Jitter: 0.5, MaxAttempts: 4},
		OnRetry: func(e RetryEvent) { events = append(events, e) }})
	if err != nil {
		t.Fatal(err)
	}
	s.rand = func() float64 { return 0 }
	_, err = s.Put(context.Background(), "p/s/r/c/result.json", []byte("{}"), "application/json")
	var se *Error
	if !errors.As(err, &se) || se.Kind != KindTransient || se.Attempts != 4 || se.Key != "p/s/r/c/result.json" || se.Bucket != "bench" {
		t.Fatalf("Put to a closed port = %#v, want a transient *Error after 4 attempts naming bucket and key", err)
	}
	var waits []time.Duration
	for _, e := range events {
		waits = append(waits, e.Wait)
	}
	if diff := cmp.Diff([]time.Duration{10 * ms, 20 * ms, 40 * ms}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}

	s.backoff = Backoff{Initial: time.Hour, Max: time.Hour, Multiplier: 2, MaxAttempts: 10}
	ctx, cancel := context.WithTimeout(context.Background(), 200*ms)
	defer cancel()
	start := time.Now()
	_, err = s.Put(ctx, "k", []byte("x"), "")
	if !errors.Is(err, context.DeadlineExceeded) || !Retryable(err) {
		t.Errorf("Put with a short context = %v, want a retryable error wrapping context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Put waited %v despite the context's 200ms deadline", el)
	}

	// A context that has already ended makes no request at all.
	done, stop := context.WithCancel(context.Background())
	stop()
	events = nil
	_, err = s.Put(done, "k", []byte("x"), "")
	if !errors.As(err, &se) || se.Attempts != 0 || !errors.Is(err, context.Canceled) || len(events) != 0 {
		t.Errorf("Put with a cancelled context = %#v after %d retries, want a *Error with 0 attempts wrapping context.Canceled", err, len(events))
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	ok := Config{Endpoint: "https://s3.example.com", Bucket: "b", AccessKeyID: "a", SecretAccessKey: "s"}
	for _, tt := range []struct {
		name string
		edit func(*Config)
	}{
		{"no scheme", func(c *Config) { c.Endpoint = "s3.example.com:9000" }},
		{"ftp", func(c *Config) { c.Endpoint = "ftp://s3.example.com" }},
		{"path", func(c *Config) { c.Endpoint = "http://s3.example.com/bucket" }},
		{"user info", func(c *Config) { c.Endpoint = "http://ak:sk@s3.example.com" }},
		{"no bucket", func(c *Config) { c.Bucket = "" }},
		{"no secret", func(c *Config) { c.SecretAccessKey = "" }},
	} {
		c := ok
		tt.edit(&c)
		if _, err := New(c); err == nil {
			t.Errorf("%s: New accepted %+v", tt.name, c)
		}
	}
	for _, ep := range []string{"https://s3.example.com", "http://127.0.0.1:9000", "http://127.0.0.1:9000/"} {
		c := ok
		c.Endpoint = ep
		if _, err := New(c); err != nil {
			t.Errorf("New(%q): %v", ep, err)
		}
	}
}
