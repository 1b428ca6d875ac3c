package main

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// releasePredecessorLeases deletes the node leases that the KWOK this
// process replaces held, before this one starts.
//
// KWOK names itself anew in every process (hostname and a random UUID), and
// takes over a node only once the node's lease has expired: a cluster
// started again from its directory soon after it stopped (a session woken
// from its sleep, a server restarted) would see its pods stand still for a
// whole lease (two minutes here) before the new KWOK played their kubelet.
// A cluster has one KWOK, in this process, and it has not started yet: a
// lease of a node it manages is its predecessor's. Each is deleted at the
// version read, so a lease renewed meanwhile by anyone is left alone.
//
// args are KWOK's own: --kubeconfig and
// --manage-nodes-with-annotation-selector say whom to ask and which nodes
// are KWOK's. Without either there is nothing this can know to release.
func releasePredecessorLeases(ctx context.Context, args []string) error {
	kubeconfig, selector := flagValue(args, "kubeconfig"), flagValue(args, "manage-nodes-with-annotation-selector")
	if kubeconfig == "" || selector == "" {
		return nil
	}
	sel, err := labels.Parse(selector)
	if err != nil {
		return fmt.Errorf("--manage-nodes-with-annotation-selector=%q: %w", selector, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list nodes: %w", err)
	}
	leases := cs.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	for _, n := range nodes.Items {
		if !sel.Matches(labels.Set(n.Annotations)) {
			continue
		}
		l, err := leases.Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read node %s's lease: %w", n.Name, err)
		}
		holder := ""
		if l.Spec.HolderIdentity != nil {
			holder = *l.Spec.HolderIdentity
		}
		err = leases.Delete(ctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &l.UID, ResourceVersion: &l.ResourceVersion}})
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			return fmt.Errorf("release node %s's lease: %w", n.Name, err)
		}
		klog.InfoS("Released the node lease a previous KWOK held", "node", n.Name, "holder", holder)
	}
	return nil
}

// flagValue is the value of --name=value or --name value in args, or "".
func flagValue(args []string, name string) string {
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "--"+name+"="):
			return strings.TrimPrefix(a, "--"+name+"=")
		case a == "--"+name && i+1 < len(args):
			return args[i+1]
		}
	}
	return ""
}
