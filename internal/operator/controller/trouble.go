package controller

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/operator/specs"
)

// troubleRetry is how often a stuck cluster is looked at again: the
// StatefulSet controller retries pod creation without telling anyone.
const troubleRetry = 2 * time.Second

// eventWindow is how recent a FailedCreate event must be to count.
const eventWindow = 2 * time.Minute

// trouble is why the cluster cannot progress, for the Progressing
// condition.
type trouble struct {
	reason  string
	message string
}

// diagnose looks for the reasons a learner must find when pods are
// missing or not ready: a ResourceQuota rejecting pods (the StatefulSet's
// FailedCreate events) and volume claims Pending on a StorageClass that
// does not exist. It reads only when something is missing.
func (p *pass) diagnose(ctx context.Context, sts *appsv1.StatefulSet, ms members) *trouble {
	want := ptr.Deref(sts.Spec.Replicas, 1)
	if int32(len(ms)) < want || ms.countReady() < want {
		p.after(troubleRetry)
	}
	if int32(len(ms)) < want {
		if t := p.quota(ctx, sts, int32(len(ms)), want); t != nil {
			return t
		}
	}
	if ms.countReady() < want {
		return p.storage(ctx)
	}
	return nil
}

// quota finds a recent FailedCreate event of the StatefulSet that says a
// quota was exceeded.
func (p *pass) quota(ctx context.Context, sts *appsv1.StatefulSet, have, want int32) *trouble {
	var evs corev1.EventList
	sel := fields.SelectorFromSet(fields.Set{
		"involvedObject.kind": "StatefulSet",
		"involvedObject.name": sts.Name,
		"reason":              "FailedCreate",
	})
	if err := p.r.APIReader.List(ctx, &evs, client.InNamespace(sts.Namespace), client.MatchingFieldsSelector{Selector: sel}); err != nil {
		p.observe("could not read events: %v", err)
		return nil
	}
	var latest *corev1.Event
	var at time.Time
	for i := range evs.Items {
		e := &evs.Items[i]
		t := eventTime(e)
		if strings.Contains(e.Message, "exceeded quota") && p.now.Sub(t) < eventWindow && (latest == nil || t.After(at)) {
			latest, at = e, t
		}
	}
	if latest == nil {
		return nil
	}
	p.observe("StatefulSet %s: FailedCreate: %s", sts.Name, latest.Message)
	return &trouble{
		reason:  pgv1.ReasonQuotaExceeded,
		message: fmt.Sprintf("%d of %d pods created; the StatefulSet cannot create more: %s", have, want, latest.Message),
	}
}

func eventTime(e *corev1.Event) time.Time {
	t := e.LastTimestamp.Time
	if e.Series != nil && e.Series.LastObservedTime.After(t) {
		t = e.Series.LastObservedTime.Time
	}
	if e.EventTime.After(t) {
		t = e.EventTime.Time
	}
	return t
}

// storage finds a Pending volume claim whose StorageClass does not exist.
func (p *pass) storage(ctx context.Context) *trouble {
	var pvcs corev1.PersistentVolumeClaimList
	if err := p.r.APIReader.List(ctx, &pvcs, client.InNamespace(p.pgc.Namespace), client.MatchingLabels(specs.SelectorLabels(p.pgc))); err != nil {
		p.observe("could not read volume claims: %v", err)
		return nil
	}
	for _, pvc := range pvcs.Items {
		class := ptr.Deref(pvc.Spec.StorageClassName, "")
		if pvc.Status.Phase != corev1.ClaimPending || class == "" {
			continue
		}
		err := p.r.APIReader.Get(ctx, client.ObjectKey{Name: class}, &storagev1.StorageClass{})
		if !apierrors.IsNotFound(err) {
			continue
		}
		p.observe("PersistentVolumeClaim %s Pending: StorageClass %q not found", pvc.Name, class)
		return &trouble{
			reason:  pgv1.ReasonStorageClassNotFound,
			message: fmt.Sprintf("PersistentVolumeClaim %s is Pending: StorageClass %q does not exist (set spec.storage.storageClassName to an existing class)", pvc.Name, class),
		}
	}
	return nil
}
