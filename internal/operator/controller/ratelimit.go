package controller

import (
	"time"

	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Backoff bounds for a cluster whose reconcile fails. The cap is low so
// that once a learner fixes the cause (a permission, a quota) the cluster
// recovers within seconds; controller-runtime's default waits up to 16
// minutes.
const (
	BackoffBase = 100 * time.Millisecond
	BackoffMax  = 5 * time.Second
)

// RateLimiter retries a failing cluster after 100 ms, doubling up to
// BackoffMax, with an overall limit of 20 retries per second.
func RateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedMaxOfRateLimiter(
		workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](BackoffBase, BackoffMax),
		&workqueue.TypedBucketRateLimiter[reconcile.Request]{Limiter: rate.NewLimiter(rate.Limit(20), 100)},
	)
}
