package fence

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"oplab.dev/oplab/internal/cluster/clustertest"
)

// BenchmarkInstall measures Install on a fresh embedded cluster: applying
// the objects, then waiting until the API server enforces every policy
// (its policy refresh, about once a second, is most of it). engine.Setup
// runs it beside the operator's install, so a session start does not
// wait for it.
func BenchmarkInstall(b *testing.B) {
	var total time.Duration
	for range b.N {
		b.StopTimer()
		c := clustertest.New(b)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		b.StartTimer()
		start := time.Now()
		err := Install(ctx, c.Config)
		total += time.Since(start)
		b.StopTimer()
		cancel()
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/install")
}

// BenchmarkTrustedWrites measures what the fence costs the API server for
// the writes of a trusted caller (the controllers', the server's, the
// operator's), which its policies let through on their first match
// condition: 1,000 updates of a PodTemplate (a pod of three containers,
// which no controller acts on) by the cluster's admin, as fast as the API
// server answers, on a cluster without the fence and on one with it, side
// by side. It reports kube-controlplane's CPU a write in each (its
// process_cpu_seconds_total, read from the API server's /metrics before
// and after) and their ratio. Five of the fence's policies match a
// PodTemplate's update (fence, namespaces, owners, pods, simulated).
//
//	go test -run '^$' -bench '^BenchmarkTrustedWrites$' -benchtime 1x -count 5 ./internal/fence/
func BenchmarkTrustedWrites(b *testing.B) {
	const writes = 1000
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bare, fenced := clustertest.New(b), clustertest.New(b)
	if err := Install(ctx, fenced.Config); err != nil {
		b.Fatal(err)
	}
	var perWrite [2]float64
	for range b.N {
		for i, c := range []*clustertest.Cluster{bare, fenced} {
			cfg := rest.CopyConfig(c.Config)
			cfg.QPS, cfg.Burst = -1, 0 // no client-side limit
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				b.Fatal(err)
			}
			cpu, err := trustedWritesCPU(ctx, cs, writes)
			if err != nil {
				b.Fatal(err)
			}
			perWrite[i] += cpu / writes / float64(b.N)
		}
	}
	b.ReportMetric(perWrite[0]*1000, "CPU-ms/write-bare")
	b.ReportMetric(perWrite[1]*1000, "CPU-ms/write-fenced")
	b.ReportMetric(perWrite[1]/perWrite[0], "fenced/bare")
}

// trustedWritesCPU updates a PodTemplate n times and returns the CPU the
// API server's process spent meanwhile, in seconds.
func trustedWritesCPU(ctx context.Context, cs kubernetes.Interface, n int) (float64, error) {
	pt := &corev1.PodTemplate{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "writes-", Namespace: "default", Labels: map[string]string{"app": "writes"}},
		Template:   corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "writes"}}},
	}
	for n, name := range []string{"app", "sidecar", "exporter"} {
		c := corev1.Container{
			Name:  name,
			Image: "registry.example/" + name + ":1.0",
			Ports: []corev1.ContainerPort{{Name: name[:3] + "-http", ContainerPort: int32(8080 + n)}, {Name: name[:3] + "-metrics", ContainerPort: int32(9090 + n)}},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
			},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ready", Port: intstr.FromString(name[:3] + "-http")}}},
			VolumeMounts:   []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
		}
		for i := range 10 {
			c.Env = append(c.Env, corev1.EnvVar{Name: fmt.Sprintf("SETTING_%d", i), Value: strings.Repeat("v", 32)})
		}
		pt.Template.Spec.Containers = append(pt.Template.Spec.Containers, c)
	}
	pt.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	pts := cs.CoreV1().PodTemplates("default")
	pt, err := pts.Create(ctx, pt, metav1.CreateOptions{})
	if err != nil {
		return 0, err
	}
	defer pts.Delete(context.WithoutCancel(ctx), pt.Name, metav1.DeleteOptions{})
	before, err := processCPU(ctx, cs)
	if err != nil {
		return 0, err
	}
	for i := range n {
		pt.Annotations = map[string]string{"write": strconv.Itoa(i)}
		if pt, err = pts.Update(ctx, pt, metav1.UpdateOptions{}); err != nil {
			return 0, err
		}
	}
	after, err := processCPU(ctx, cs)
	if err != nil {
		return 0, err
	}
	return after - before, nil
}

// processCPU reads process_cpu_seconds_total from the API server's
// /metrics: the CPU of the process it runs in, kube-controlplane.
func processCPU(ctx context.Context, cs kubernetes.Interface) (float64, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(raw)) {
		if v, ok := strings.CutPrefix(line, "process_cpu_seconds_total "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, errors.New("no process_cpu_seconds_total in the API server's /metrics")
}
