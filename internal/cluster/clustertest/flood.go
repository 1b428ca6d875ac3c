package clustertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// A learner doing their worst: thousands of objects in their cluster.

// Flood creates pods of about 900 KiB each (a large environment variable:
// the API server bounds a request, not a container's environment) in
// cfg's cluster, 8 at a time, until done says so; it fails after 3,000
// pods, or when ctx ends. Every pod is held by the API server's cache and
// by each of kube-controlplane's informers (controllers, scheduler,
// KWOK), so memory grows several times faster than etcd's database.
func Flood(ctx context.Context, cfg *rest.Config, done func() bool) error {
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = 200, 400
	cs, err := kubernetes.NewForConfig(fast)
	if err != nil {
		return err
	}
	big := strings.Repeat("y", 900<<10)
	var (
		next    atomic.Int64
		stopped atomic.Bool
		wg      sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for !stopped.Load() && ctx.Err() == nil {
				i := next.Add(1)
				if i > 3000 {
					return
				}
				cs.CoreV1().Pods("default").Create(ctx, &corev1.Pod{
					ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("flood-%d", i)},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "none", Env: []corev1.EnvVar{{Name: "BIG", Value: big}}}}},
				}, metav1.CreateOptions{})
			}
		})
	}
	defer func() { stopped.Store(true); wg.Wait() }()
	for {
		if done() {
			return nil
		}
		if next.Load() > 3000 {
			return fmt.Errorf("3,000 pods of 900 KiB did not take the cell over its budget")
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the cell did not reach its budget after %d pods: %w", next.Load(), ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
