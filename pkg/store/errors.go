package store

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Kind classifies a store error by what the caller should do about it.
type Kind int

// opEncode is the Op of an Error from marshalling an object before its put.
const opEncode = "encode"

const (
	// KindTransient: the store could not be reached or was briefly unable
	// to serve (connection refused or reset, timeouts, 5xx, throttling).
	// Retried; if the retries run out, try again later.
	KindTransient Kind = iota + 1
	// KindAuth: the credentials were refused (403, InvalidAccessKeyId,
	// SignatureDoesNotMatch, AccessDenied). Not retried: fix the Secret.
	KindAuth
	// KindNotFound: the key (or, for reads, the run) does not exist.
	KindNotFound
	// KindIntegrity: the stored object does not have the content just
	// written (size or SHA-256 differ). Retried like a transient error.
	KindIntegrity
	// KindConflict: the run directory belongs to another run object (same
	// name, different UID or namespace). Not retried.
	KindConflict
	// KindPermanent: anything else the retries cannot fix: a missing
	// bucket, a bad endpoint or TLS configuration, an invalid document, a
	// key over 1024 bytes.
	KindPermanent
)

func (k Kind) String() string {
	switch k {
	case KindTransient:
		return "transient"
	case KindAuth:
		return "auth"
	case KindNotFound:
		return "not found"
	case KindIntegrity:
		return "integrity"
	case KindConflict:
		return "conflict"
	case KindPermanent:
		return "permanent"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Sentinels for errors.Is: errors.Is(err, store.ErrTransient) is true for
// every *Error of KindTransient, and so on.
var (
	ErrTransient = &Error{Kind: KindTransient}
	ErrAuth      = &Error{Kind: KindAuth}
	ErrNotFound  = &Error{Kind: KindNotFound}
	ErrIntegrity = &Error{Kind: KindIntegrity}
	ErrConflict  = &Error{Kind: KindConflict}
	ErrPermanent = &Error{Kind: KindPermanent}
)

// Error is every error the store returns from an operation on the object
// store. Its message names the bucket and key, the kind, and how many
// attempts were made.
type Error struct {
	Op       string // "put", "head", "get", "list", "create bucket", ...
	Bucket   string
	Key      string // empty for bucket-level operations
	Kind     Kind
	Attempts int   // requests made, retries included; 0 when none was sent
	Err      error // the cause (a minio.ErrorResponse, a net error, ...)
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s s3://%s/%s: ", e.Op, e.Bucket, e.Key)
	switch e.Kind {
	case KindAuth:
		b.WriteString("credentials refused (not retried; check the credentials Secret and the bucket policy)")
	case KindTransient:
		fmt.Fprintf(&b, "store unavailable after %d attempt(s) (transient; retry later)", e.Attempts)
	case KindIntegrity:
		fmt.Fprintf(&b, "stored object does not match what was written after %d attempt(s)", e.Attempts)
	case KindNotFound:
		b.WriteString("not found")
	case KindConflict:
		b.WriteString("conflict (not retried)")
	default:
		b.WriteString("failed (not retried)")
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(describe(e.Err))
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Is matches the Kind sentinels (ErrTransient, ErrAuth, ...).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Err == nil && t.Kind == e.Kind
}

// Retryable reports whether err is worth retrying later: a transient or
// integrity error. The controller keeps its in-cluster copy of the results
// and tries again; for any other error it should surface the message.
func Retryable(err error) bool {
	return errors.Is(err, ErrTransient) || errors.Is(err, ErrIntegrity)
}

// describe gives the cause without minio-go's noise.
func describe(err error) string {
	var er minio.ErrorResponse
	if errors.As(err, &er) && (er.Code != "" || er.StatusCode != 0) {
		msg := er.Message
		if msg == "" {
			msg = http.StatusText(er.StatusCode)
		}
		if er.StatusCode != 0 {
			return fmt.Sprintf("%s (HTTP %d %s)", msg, er.StatusCode, er.Code)
		}
		return fmt.Sprintf("%s (%s)", msg, er.Code)
	}
	return err.Error()
}

var authCodes = map[string]bool{
	"AccessDenied": true, "InvalidAccessKeyId": true, "SignatureDoesNotMatch": true,
	"InvalidToken": true, "ExpiredToken": true, "TokenRefreshRequired": true,
	"AuthorizationHeaderMalformed": true, "AllAccessDisabled": true, "AccountProblem": true,
	// versitygw answers an unknown access key with 404 XAdminUserNotFound
	// (AWS: 403 InvalidAccessKeyId).
	"XAdminUserNotFound": true,
}

var transientCodes = map[string]bool{
	"RequestTimeout": true, "Throttling": true, "ThrottlingException": true,
	"RequestLimitExceeded": true, "RequestThrottled": true, "InternalError": true, "SlowDown": true,
	"SlowDownWrite": true, "SlowDownRead": true, "ServiceUnavailable": true, "OperationAborted": true,
}

// classify decides an error's kind. A done context counts as transient (the
// caller gave up, the store did not refuse); the retry loop stops on it
// anyway.
func classify(err error) Kind {
	var er minio.ErrorResponse
	if errors.As(err, &er) && (er.StatusCode != 0 || er.Code != "") {
		switch {
		case authCodes[er.Code] || er.StatusCode == http.StatusUnauthorized || er.StatusCode == http.StatusForbidden:
			return KindAuth
		case er.Code == minio.NoSuchKey:
			// minio-go's name for any 404 to a body-less HEAD as well.
			return KindNotFound
		case transientCodes[er.Code]:
			return KindTransient
		case er.StatusCode == http.StatusRequestTimeout || er.StatusCode == http.StatusTooManyRequests ||
			er.StatusCode == 499 || er.StatusCode >= 500:
			return KindTransient
		case er.StatusCode == 0 && er.Code == "RequestError":
			return KindTransient
		}
		// Other 4xx and minio-go's own argument checks (StatusCode 0).
		return KindPermanent
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return KindTransient
	}
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	if errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) ||
		strings.Contains(err.Error(), "server gave HTTP response to HTTPS client") {
		return KindPermanent
	}
	// Connection refused or reset, EOF, DNS, timeouts: the network or the
	// server is down, which is what retries are for.
	return KindTransient
}

// errEmptySummary refuses a bisection upload without its summary.
var errEmptySummary = errors.New("a bisection upload needs its summary document")
