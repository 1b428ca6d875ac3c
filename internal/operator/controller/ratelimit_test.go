package controller

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

func TestRateLimiterCapped(t *testing.T) {
	t.Parallel()
	rl := RateLimiter()
	req := reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: "db"}}
	var last time.Duration
	for i := range 40 {
		last = rl.When(req)
		if i == 0 && last != BackoffBase {
			t.Fatalf("first retry: got %s, want %s", last, BackoffBase)
		}
		if last > 30*time.Second {
			t.Fatalf("retry %d waits %s, want at most 30s", i, last)
		}
	}
	if last != BackoffMax {
		t.Errorf("after 40 failures: got %s, want the cap %s", last, BackoffMax)
	}
	rl.Forget(req)
	if got := rl.When(req); got != BackoffBase {
		t.Errorf("after success: got %s, want %s", got, BackoffBase)
	}
}
