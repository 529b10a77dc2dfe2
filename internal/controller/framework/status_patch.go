package framework

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// redoOnConflict runs pass on obj and, each time the pass's status write
// conflicts, redoes it at once on a copy read past the cache through reader:
// a conflict means the pass worked from a stale copy, so the whole pass is the
// transaction (CloudNativePG's PatchWithOptimisticLock shape). kind names the
// object in the log and in errors.
func redoOnConflict[T any, PT interface {
	*T
	client.Object
}](ctx context.Context, reader client.Reader, key client.ObjectKey, obj PT, kind string, pass func(PT) error) error {
	passes := 0
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if passes++; passes > 1 {
			log.FromContext(ctx).V(1).Info(fmt.Sprintf("Redoing the pass on the %s read again: its status write conflicted", kind), "pass", passes)
			obj = PT(new(T))
			if err := reader.Get(ctx, key, obj); err != nil {
				return fmt.Errorf("reading the %s again after a conflict: %w", kind, err)
			}
		}
		return pass(obj)
	})
}

// passOutcome is the error a reconcile returns after redoOnConflict: the
// object being deleted meanwhile ends the reconcile quietly; otherwise the
// pass's error and the write's are both kept.
func passOutcome(passErr, writeErr error) error {
	if apierrors.IsNotFound(writeErr) {
		return nil
	}
	return errors.Join(passErr, writeErr)
}

// PatchStatus writes obj's status as a merge patch against original under an
// optimistic lock: a pass computed from a stale copy gets a conflict instead
// of overwriting a newer status. what names the status in the error.
func PatchStatus(ctx context.Context, c client.StatusClient, original, obj client.Object, what string) error {
	patch := client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{})
	if err := c.Status().Patch(ctx, obj, patch); err != nil {
		return fmt.Errorf("writing %s: %w", what, err)
	}
	return nil
}
