package controller

import (
	"context"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// log writes the pass's one line: what it read, what differed from the
// spec, what it did and how long it took, for a learner watching live. An
// error is not logged here: controller-runtime logs the returned error.
func (p *pass) log(ctx context.Context, took time.Duration, res reconcile.Result, err error) {
	msg := "in sync, nothing to do"
	switch {
	case err != nil:
		msg = "reconcile failed; will retry with backoff"
	case len(p.did) > 0:
		msg = "changed the cluster"
	case len(p.differs) > 0 || (res.RequeueAfter > 0 && res.RequeueAfter < Resync):
		msg = "waiting"
	}
	kv := []any{
		"read", strings.Join(p.read, "; "),
		"primary", p.pgc.Status.CurrentPrimary,
		"instances", p.r.Instance.Mode(),
	}
	if len(p.differs) > 0 {
		kv = append(kv, "differs", strings.Join(p.differs, "; "))
	}
	if len(p.did) > 0 {
		kv = append(kv, "did", strings.Join(p.did, "; "))
	}
	kv = append(kv, "took", took.Round(time.Microsecond).String())
	if res.RequeueAfter > 0 {
		kv = append(kv, "next", res.RequeueAfter.Round(time.Millisecond).String())
	}
	log.FromContext(ctx).Info(msg, kv...)
}
