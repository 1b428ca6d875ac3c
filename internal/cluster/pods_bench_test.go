package cluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/operator/install"
)

// BenchmarkKindPodsCell measures one learner's cell on a kind host: create
// to usable (s/ready), the reference operator installed and running in it
// (s/operator), a deleted control-plane pod back and answering (s/back), and
// once idle with the operator running the pod's working set (MiB-ws, the
// cgroup's figure the kubelet's summary reports, which requests and limits
// are measured against; per container too) and CPU (%cpu-idle of one core).
// Gated like the kind tests; each run makes its own host.
func BenchmarkKindPodsCell(b *testing.B) {
	for range b.N {
		p, host, _ := clustertest.NewPodsProvider(b)
		ctx, cancel := context.WithTimeout(b.Context(), 15*time.Minute)
		defer cancel()
		name := clustertest.UniqueName("b")
		start := time.Now()
		if err := p.Create(ctx, name); err != nil {
			b.Fatal(err)
		}
		ready := time.Since(start)
		defer p.Delete(context.WithoutCancel(ctx), name)
		in, err := install.ForCluster(p, name, clustertest.BinDir(b), install.Options{})
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if _, err := in.Install(ctx); err != nil {
			b.Fatal(err)
		}
		operator := time.Since(start)

		cfg, err := p.RESTConfig(name)
		if err != nil {
			b.Fatal(err)
		}
		learner, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		pod := "cell-" + name + "-0"
		old, err := host.Client.CoreV1().Pods(clustertest.PodsNamespace).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if err := host.Client.CoreV1().Pods(clustertest.PodsNamespace).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 5*time.Minute, false, func(ctx context.Context) (bool, error) {
			cur, err := host.Client.CoreV1().Pods(clustertest.PodsNamespace).Get(ctx, pod, metav1.GetOptions{})
			if err != nil || cur.UID == old.UID {
				return false, nil
			}
			_, err = learner.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err == nil, nil
		}); err != nil {
			b.Fatal(err)
		}
		back := time.Since(start)

		// Idle: the kubelet's CPU figure is a rate over its last sampling
		// interval; give the start-up time to leave it.
		time.Sleep(45 * time.Second)
		st, err := podStats(ctx, host, pod)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ready.Seconds(), "s/ready")
		b.ReportMetric(operator.Seconds(), "s/operator")
		b.ReportMetric(back.Seconds(), "s/back")
		b.ReportMetric(st.Memory.WorkingSetBytes/(1<<20), "MiB-ws")
		b.ReportMetric(st.CPU.UsageNanoCores/1e7, "%cpu-idle")
		for _, c := range st.Containers {
			b.ReportMetric(c.Memory.WorkingSetBytes/(1<<20), "MiB-ws-"+c.Name)
		}
	}
}

// usage is the part of the kubelet's summary (stats/v1alpha1) read here.
type usage struct {
	CPU struct {
		UsageNanoCores float64 `json:"usageNanoCores"`
	} `json:"cpu"`
	Memory struct {
		WorkingSetBytes float64 `json:"workingSetBytes"`
	} `json:"memory"`
}

type podUsage struct {
	PodRef struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"podRef"`
	usage
	Containers []struct {
		Name string `json:"name"`
		usage
	} `json:"containers"`
}

// podStats reads the pod's usage from its node's kubelet summary, through
// the host API server's node proxy.
func podStats(ctx context.Context, host *clustertest.Cluster, pod string) (podUsage, error) {
	nodes, err := host.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return podUsage{}, err
	}
	for _, n := range nodes.Items {
		raw, err := host.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", n.Name, "proxy/stats/summary").DoRaw(ctx)
		if err != nil {
			return podUsage{}, err
		}
		var sum struct {
			Pods []podUsage `json:"pods"`
		}
		if err := json.Unmarshal(raw, &sum); err != nil {
			return podUsage{}, err
		}
		for _, p := range sum.Pods {
			if p.PodRef.Name == pod && p.PodRef.Namespace == clustertest.PodsNamespace {
				return p, nil
			}
		}
	}
	return podUsage{}, fmt.Errorf("no kubelet reports pod %s", pod)
}

// BenchmarkKindPodsDensity puts a class of cells on one kind host node, all
// idle once made, and reads the node's kubelet summary: the node's CPU and
// working set with the class (core-node, MiB-node), what each cell adds on
// average (%cpu-cell, MiB-cell, over the node without cells), and the
// learners a node of this machine's size holds at that use, counting CPU
// and memory both (learners-node; the host's own control plane stays).
// Gated like the kind tests; each run makes its own host.
func BenchmarkKindPodsDensity(b *testing.B) {
	const cells = 10
	for range b.N {
		p, host, _ := clustertest.NewPodsProvider(b)
		ctx, cancel := context.WithTimeout(b.Context(), 30*time.Minute)
		defer cancel()
		time.Sleep(45 * time.Second) // the host idle, for the baseline
		base, err := nodeStats(ctx, host)
		if err != nil {
			b.Fatal(err)
		}
		// Three at a time, as a class arriving does on two cores.
		sem := make(chan struct{}, 3)
		errs := make(chan error, cells)
		for i := range cells {
			name := fmt.Sprintf("learner-%d", i)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				errs <- p.Create(ctx, name)
			}()
			defer p.Delete(context.WithoutCancel(ctx), name)
		}
		for range cells {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(60 * time.Second) // idle
		full, err := nodeStats(ctx, host)
		if err != nil {
			b.Fatal(err)
		}
		cpuCell := (full.cpu - base.cpu) / cells // cores
		memCell := (full.mem - base.mem) / cells // MiB
		free := func(total, used, per float64) float64 { return (total - used) / per }
		// This machine: 2 cores, 24 GiB; the host's own use stays.
		learners := min(free(2, base.cpu, cpuCell), free(24*1024, base.mem, memCell))
		b.ReportMetric(full.cpu, "core-node")
		b.ReportMetric(full.mem, "MiB-node")
		b.ReportMetric(cpuCell*100, "%cpu-cell")
		b.ReportMetric(memCell, "MiB-cell")
		b.ReportMetric(learners, "learners-node")
	}
}

type nodeUse struct{ cpu, mem float64 } // cores, MiB

// nodeStats reads the first node's CPU and working set from its kubelet.
func nodeStats(ctx context.Context, host *clustertest.Cluster) (nodeUse, error) {
	nodes, err := host.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil || len(nodes.Items) == 0 {
		return nodeUse{}, fmt.Errorf("nodes: %v", err)
	}
	raw, err := host.Client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", nodes.Items[0].Name, "proxy/stats/summary").DoRaw(ctx)
	if err != nil {
		return nodeUse{}, err
	}
	var sum struct {
		Node usage `json:"node"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil {
		return nodeUse{}, err
	}
	return nodeUse{cpu: sum.Node.CPU.UsageNanoCores / 1e9, mem: sum.Node.Memory.WorkingSetBytes / (1 << 20)}, nil
}
