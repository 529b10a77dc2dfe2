package framework

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dbbenchv1alpha1 "github.com/dbbench/dbbench/api/v1alpha1"
	"github.com/dbbench/dbbench/pkg/store"
)

// The manager reads the object store's credentials from the Secret a run
// names in spec.output.s3.credentialsSecret, with the uncached API reader
// (one GET per upload attempt; Secrets are never cached or listed).
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get

// Keys of the credentials Secret.
const (
	SecretKeyAccessKeyID     = "accessKeyID"
	SecretKeySecretAccessKey = "secretAccessKey"
)

var (
	// passBackoff bounds the store's own retries within one reconcile pass:
	// a pass stays short, and requeues (uploadRetry) do the long retrying.
	passBackoff = store.Backoff{Initial: 200 * time.Millisecond, Max: time.Second, Multiplier: 2, Jitter: 0.5, MaxAttempts: 2}
	// uploadRetry is the wait between failed passes: 2 s doubling to 5 min,
	// shortened by up to a fifth (per run, so runs do not retry in step).
	uploadRetry = store.Backoff{Initial: 2 * time.Second, Max: 5 * time.Minute, Multiplier: 2, Jitter: 0.2}
)

const (
	// uploadRequestTimeout bounds one request to the store.
	uploadRequestTimeout = 10 * time.Second
	// UploadPassTimeout bounds the uploads of one pass.
	UploadPassTimeout = 30 * time.Second
)

// RetryPolicy says what follows a failed upload attempt.
type RetryPolicy int

const (
	// RetryWait: waiting can fix it (the store is down, a timeout, a
	// missing Secret that may yet be created): UploadPending, retried with
	// the backoff.
	RetryWait RetryPolicy = iota
	// RetryFixSecret: the credentials were refused or the Secret lacks its
	// keys: UploadFailed, retried with the backoff (up to every 5 minutes)
	// so that fixing the Secret is enough; the annotation retries at once.
	RetryFixSecret
	// RetryNever: a missing bucket, an invalid endpoint, a run directory
	// owned by another run: UploadFailed, retried only when the run is
	// annotated with dbbenchv1alpha1.AnnotationRetryUpload.
	RetryNever
)

// UploadError is an upload attempt's failure and what follows it.
type UploadError struct {
	Err    error
	Policy RetryPolicy
}

// StoreFailure classifies an error of the store.
func StoreFailure(err error) *UploadError {
	switch {
	case store.Retryable(err):
		return &UploadError{Err: err, Policy: RetryWait}
	case errors.Is(err, store.ErrAuth):
		return &UploadError{Err: err, Policy: RetryFixSecret}
	}
	return &UploadError{Err: err, Policy: RetryNever}
}

// UploadRetryDelay is the wait after an object's n-th failed upload
// attempt, with a jitter fixed per object (uid) and attempt.
func UploadRetryDelay(uid types.UID, n int32) time.Duration {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", uid, n)
	return uploadRetry.Delay(int(n), float64(h.Sum64()%1000)/1000)
}

// OpenS3Store makes the store of an output.s3 (a run's, or the one a
// bisection's runs upload to), reading its credentials Secret in namespace
// with the uncached reader.
func OpenS3Store(ctx context.Context, reader client.Reader, namespace string, o *dbbenchv1alpha1.S3Output) (*store.Store, *UploadError) {
	name := o.CredentialsSecret.Name
	if reader == nil {
		return nil, &UploadError{Err: errors.New("the manager has no API reader to read the credentials Secret")}
	}
	var sec corev1.Secret
	if err := reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &sec); err != nil {
		// A missing Secret may yet be created, and an API error may pass;
		// the manager's missing RBAC grant will not fix itself.
		policy := RetryWait
		if apierrors.IsForbidden(err) {
			policy = RetryNever
		}
		return nil, &UploadError{Err: fmt.Errorf("reading the credentials Secret %s: %w", name, err), Policy: policy}
	}
	ak, sk := string(sec.Data[SecretKeyAccessKeyID]), string(sec.Data[SecretKeySecretAccessKey])
	if ak == "" || sk == "" {
		return nil, &UploadError{
			Err:    fmt.Errorf("the credentials Secret %s needs the keys %s and %s", name, SecretKeyAccessKeyID, SecretKeySecretAccessKey),
			Policy: RetryFixSecret,
		}
	}
	s, err := store.New(store.Config{
		Endpoint: o.Endpoint, Bucket: o.Bucket, Prefix: o.Prefix, Region: o.Region,
		AccessKeyID: ak, SecretAccessKey: sk, Backoff: passBackoff, RequestTimeout: uploadRequestTimeout,
	})
	if err != nil {
		return nil, &UploadError{Err: fmt.Errorf("output.s3: %w", err), Policy: RetryNever}
	}
	return s, nil
}
