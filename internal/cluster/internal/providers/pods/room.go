package pods

import (
	"context"
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"oplab.dev/oplab/internal/room"
)

// Room is the host cluster's room for more cells, as admission measures it
// (an room.Source): not one machine's /proc but what the scheduler
// goes by, requests.
//
//   - A cell costs its containers' requests.
//   - The room is the least of what the namespace's ResourceQuotas leave
//     (hard minus used, for requests.cpu and requests.memory) and what the
//     schedulable nodes' allocatable leaves once the running cells'
//     requests are taken off. Nodes are read when oplab may list them (the
//     chart's optional ClusterRole); other tenants' pods are not seen, so
//     a namespace on a shared cluster should carry a quota.
//   - A cell pod the scheduler could not place means there is no room,
//     whatever the figures say: starts wait until it runs or is gone.
//
// With neither a quota nor nodes to read, only that last rule holds.
type Room struct{ p *Provider }

// Room returns the host cluster's room as admission measures it.
func (p *Provider) Room() *Room { return &Room{p: p} }

var _ room.Source = (*Room)(nil)

// unbounded stands for a room nothing measured.
const unbounded = 1 << 50

// Cost is a cell's requests: the control plane's, the operator's and the
// console's.
func (r *Room) Cost(context.Context) (room.Cost, error) {
	o := r.p.opts
	cpu := o.CPURequest.DeepCopy()
	cpu.Add(o.OperatorCPURequest)
	cpu.Add(o.ConsoleCPURequest)
	mem := o.MemoryRequest.DeepCopy()
	mem.Add(o.OperatorMemoryRequest)
	mem.Add(o.ConsoleMemoryRequest)
	return room.Cost{Memory: uint64(mem.Value()), CPU: cpu.AsApproximateFloat64()}, nil
}

// Headroom is what is left for cells: Cores is the CPU cells may request
// in all, IdleCores and MemAvailable what is not requested yet.
func (r *Room) Headroom(ctx context.Context) (room.Headroom, error) {
	ns := r.p.opts.Namespace
	cells, err := r.p.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(CellLabels()).String(),
	})
	if err != nil {
		return room.Headroom{}, fmt.Errorf("the host's room: list the cells: %w", err)
	}
	var cellCPU, cellMem resource.Quantity
	for _, pod := range cells.Items {
		if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
			continue
		}
		if unschedulable(&pod) {
			r.p.opts.Logger.Info("no room on the host cluster: a cell waits for a node", "pod", pod.Name)
			return room.Headroom{Cores: 1}, nil
		}
		cpu, mem := podRequests(&pod)
		cellCPU.Add(cpu)
		cellMem.Add(mem)
	}
	total, freeCPU, freeMem := float64(unbounded), float64(unbounded), float64(unbounded)
	quotas, err := r.p.cs.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return room.Headroom{}, fmt.Errorf("the host's room: list the quotas of %s: %w", ns, err)
	}
	for _, q := range quotas.Items {
		for _, names := range [][2]corev1.ResourceName{
			{corev1.ResourceRequestsCPU, corev1.ResourceCPU},
			{corev1.ResourceRequestsMemory, corev1.ResourceMemory},
		} {
			for _, name := range names {
				hard, ok := q.Status.Hard[name]
				if !ok {
					continue
				}
				used := q.Status.Used[name]
				left := hard.AsApproximateFloat64() - used.AsApproximateFloat64()
				if names[0] == corev1.ResourceRequestsCPU {
					total, freeCPU = min(total, hard.AsApproximateFloat64()), min(freeCPU, left)
				} else {
					freeMem = min(freeMem, left)
				}
			}
		}
	}
	nodes, err := r.p.cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	switch {
	case apierrors.IsForbidden(err):
		// No right to read nodes: the quota and the pending rule alone.
	case err != nil:
		return room.Headroom{}, fmt.Errorf("the host's room: list the nodes: %w", err)
	default:
		var cpu, mem float64
		for _, n := range nodes.Items {
			if schedulable(&n) {
				cpu += n.Status.Allocatable.Cpu().AsApproximateFloat64()
				mem += n.Status.Allocatable.Memory().AsApproximateFloat64()
			}
		}
		total = min(total, cpu)
		freeCPU = min(freeCPU, cpu-cellCPU.AsApproximateFloat64())
		freeMem = min(freeMem, mem-cellMem.AsApproximateFloat64())
	}
	return room.Headroom{
		MemAvailable: uint64(max(freeMem, 0)),
		IdleCores:    max(freeCPU, 0),
		Cores:        int(math.Ceil(max(total, 0))),
	}, nil
}

// unschedulable reports whether the scheduler found no node for pod.
func unschedulable(pod *corev1.Pod) bool {
	if pod.Spec.NodeName != "" || pod.DeletionTimestamp != nil {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return true
		}
	}
	return false
}

// schedulable reports whether a cell may be placed on n: it is ready,
// not cordoned, and has no taint that keeps pods without tolerations
// off (cells have none).
func schedulable(n *corev1.Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// podRequests sums the requests of pod's containers.
func podRequests(pod *corev1.Pod) (cpu, mem resource.Quantity) {
	for _, c := range pod.Spec.Containers {
		cpu.Add(c.Resources.Requests[corev1.ResourceCPU])
		mem.Add(c.Resources.Requests[corev1.ResourceMemory])
	}
	return cpu, mem
}
