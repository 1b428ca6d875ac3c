package cluster_test

import (
	"context"
	"math"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/room"
)

// TestPodsRoom: admission on the pods backend measures the host cluster,
// on a real API server with its scheduler and quota controller (an
// embedded cluster as the host, its node 32 cores and 128 GiB). A cell
// costs its requests; the room is the schedulable nodes' allocatable less
// the cells' requests, bounded by the namespace's ResourceQuota; a cell the
// scheduler cannot place leaves no room until it is gone.
func TestPodsRoom(t *testing.T) {
	host := clustertest.New(t)
	ctx := t.Context()
	const ns = "cells"
	host.Namespace(t, ns)
	p, err := cluster.NewProvider(cluster.ProviderWithPods(cluster.PodsOptions{
		Config: host.Config, Namespace: ns, Image: cluster.DefaultPodsImage, DataDir: t.TempDir(),
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	src, ok := p.Room()
	if !ok {
		t.Fatal("the pods backend offers no room to admission")
	}
	cost, err := src.Cost(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The control plane's 50m and 256 MiB, the operator's 10m and 32 MiB.
	if cost.Memory != 304*room.MiB || math.Abs(cost.CPU-0.061) > 1e-9 {
		t.Errorf("a cell's cost: got %+v, want 304 MiB and 0.061 cores", cost)
	}
	headroom := func() room.Headroom {
		t.Helper()
		h, err := src.Headroom(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	const gib = 1 << 30
	// A new cluster's node is tainted not-ready until the node lifecycle
	// controller has seen it ready: no room on it before.
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		h := headroom()
		return h.Cores == 32 && h.MemAvailable == 128*gib && h.IdleCores == 32, nil
	})
	if err != nil {
		t.Fatalf("an empty host: got %+v, want its node's 32 cores and 128 GiB once it is schedulable", headroom())
	}

	// A running cell takes its requests off.
	cell(t, host, ns, "ada", "1", "2Gi", nil)
	if h := headroom(); h.Cores != 32 || h.MemAvailable != 126*gib || math.Abs(h.IdleCores-31) > 1e-9 {
		t.Errorf("with a cell of 1 core and 2 GiB: got %+v, want 32 cores, 31 of them free, and 126 GiB", h)
	}

	// A quota bounds the room: hard minus what the namespace uses.
	quota := &corev1.ResourceQuota{
		ObjectMeta: metav1.ObjectMeta{Name: "oplab-cells"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{
			corev1.ResourceRequestsCPU: resource.MustParse("4"), corev1.ResourceRequestsMemory: resource.MustParse("8Gi"),
		}},
	}
	if _, err := host.Client.CoreV1().ResourceQuotas(ns).Create(ctx, quota, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		q, err := host.Client.CoreV1().ResourceQuotas(ns).Get(ctx, quota.Name, metav1.GetOptions{})
		used := q.Status.Used[corev1.ResourceRequestsMemory]
		return err == nil && used.Value() == 2*gib, nil
	})
	if err != nil {
		t.Fatalf("the quota controller did not count the cell: %v", err)
	}
	if h := headroom(); h.Cores != 4 || h.MemAvailable != 6*gib || math.Abs(h.IdleCores-3) > 1e-9 {
		t.Errorf("under a quota of 4 cores and 8 GiB: got %+v, want 4 cores, 3 free, and 6 GiB", h)
	}
	policy := room.Policy{CPUShare: room.DefaultCPUShare}
	if d := policy.Decide(room.Inputs{Live: 1, Headroom: headroom(), Cost: cost}); !d.Admit {
		t.Errorf("one more cell under the quota: %v, want admitted", d)
	}

	// A cell no node can take: no room while it waits.
	cell(t, host, ns, "bob", "100m", "128Mi", map[string]string{"oplab.dev/no-such-node": "true"})
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return headroom().MemAvailable == 0, nil
	})
	if err != nil {
		t.Fatalf("a cell the scheduler cannot place: the room is %+v, want none", headroom())
	}
	if d := policy.Decide(room.Inputs{Live: 2, Headroom: headroom(), Cost: cost}); d.Admit {
		t.Errorf("while a cell waits for a node: %v, want queued", d)
	}
	if err := host.Client.CoreV1().Pods(ns).Delete(ctx, "cell-bob-0", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return headroom().MemAvailable > 0, nil
	})
	if err != nil {
		t.Fatalf("the waiting cell gone: the room is %+v, want some again", headroom())
	}
}

// cell makes a pod labelled as a cell, with requests of cpu and memory,
// placed only on nodes with nodeSelector.
func cell(t *testing.T, host *clustertest.Cluster, ns, name, cpu, memory string, nodeSelector map[string]string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "cell-" + name + "-0", Labels: cluster.PodsCellLabels()},
		Spec: corev1.PodSpec{
			NodeSelector: nodeSelector,
			Containers: []corev1.Container{{
				Name: "controlplane", Image: cluster.DefaultPodsImage,
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
				}},
			}},
		},
	}
	if _, err := host.Client.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
