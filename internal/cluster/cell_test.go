package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/cluster/clustertest"
	"oplab.dev/oplab/internal/walltest"
)

// The escape suite of the embedded provider's cells. A learner is admin of
// their cluster, so each attempt is made with the cluster's admin
// credentials: the walls are the cell's, not RBAC's. Canaries on the host —
// a file in the data directory, a file and a directory under /tmp, a port on
// loopback that records every connection — must be untouched and unread at
// the end. The same attempts against an unconfined cluster must escape, or
// the suite proves nothing: TestCellWallsHoldOnlyWithCells checks that.

// attempt is one thing a learner's admin rights let them try.
type attempt struct {
	name string
	// try makes the attempt and reports whether it reached the host: read
	// a canary, removed one, or connected to the canary port.
	try func(ctx context.Context, t *testing.T, c *clustertest.Cluster, can *clustertest.Canaries) (escaped bool, detail string)
}

var attempts = []attempt{
	{"KWOK ClusterLogs serves a host file as a pod's log", tryClusterLogs},
	{"a hostPath PersistentVolume deleted with its claim removes a host directory", tryHostPathDelete},
	{"an admission webhook calls a port on the host's loopback", tryWebhook},
	{"an APIService served by an ExternalName service named localhost", tryAPIService},
}

// runAttempts creates a cluster with p and makes every attempt; it returns
// the attempts that escaped.
func runAttempts(t *testing.T, p *cluster.Provider, data string, can *clustertest.Canaries) map[string]string {
	c := clustertest.Create(t, p, data, clustertest.UniqueName("cell"))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	escaped := map[string]string{}
	for _, a := range attempts {
		before := can.Connections()
		ok, detail := a.try(ctx, t, c, can)
		if can.Connections() > before {
			ok, detail = true, detail+fmt.Sprintf(" (%d connection(s) to the canary port)", can.Connections()-before)
		}
		t.Logf("%s: escaped=%v %s", a.name, ok, detail)
		if ok {
			escaped[a.name] = detail
		}
	}
	return escaped
}

// TestCellWalls makes every attempt against a cluster in a cell: each is
// refused or harmless, and the canaries are untouched — also after the
// cluster is deleted.
func TestCellWalls(t *testing.T) {
	p, data := clustertest.NewProvider(t)
	requireContained(t, p, walltest.Cell)
	can := clustertest.PlantCanaries(t, data)
	for name, detail := range runAttempts(t, p, data, can) {
		t.Errorf("%s: the cell let it reach the host: %s", name, detail)
	}
	if touched := can.Touched(); len(touched) > 0 {
		t.Errorf("canaries touched: %s", strings.Join(touched, "; "))
	}
}

// TestCellWallsHoldOnlyWithCells runs the attempts against an unconfined
// cluster: they must escape there, or TestCellWalls could pass with no
// walls at all.
func TestCellWallsHoldOnlyWithCells(t *testing.T) {
	data := t.TempDir()
	p, err := cluster.NewProvider(cluster.ProviderWithEmbeddedOptions(cluster.EmbeddedOptions{
		BinDir: clustertest.BinDir(t), DataDir: data, Confine: cluster.ConfineOff,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := p.Contained(); ok {
		t.Fatal("a provider with ConfineOff says its clusters are contained")
	}
	can := clustertest.PlantCanaries(t, data)
	escaped := runAttempts(t, p, data, can)
	for _, a := range attempts {
		if _, ok := escaped[a.name]; !ok {
			t.Errorf("%s: did not reach the host even without a cell: the attempt tests nothing", a.name)
		}
	}
}

// TestCellProcesses checks the cell's processes themselves: their own
// namespaces, no capabilities, no_new_privs, limits, and a file system in
// which the data directory is not there.
func TestCellProcesses(t *testing.T) {
	p, data := clustertest.NewProvider(t)
	requireContained(t, p, walltest.Cell)
	can := clustertest.PlantCanaries(t, data)
	c := clustertest.Create(t, p, data, clustertest.UniqueName("proc"))
	st, err := p.Status(context.Background(), c.Name)
	if err != nil {
		t.Fatal(err)
	}
	self := namespaces(t, os.Getpid())
	seen := 0
	for _, comp := range st.Components {
		if comp.Process == "cell" || comp.Name == "cell" {
			continue
		}
		pid := comp.PID // the program itself, not the nsenter that runs it
		seen++
		ns := namespaces(t, pid)
		for _, kind := range []string{"user", "mnt", "net", "pid", "ipc", "uts"} {
			if ns[kind] == self[kind] {
				t.Errorf("%s (pid %d) shares the host's %s namespace", comp.Name, pid, kind)
			}
		}
		status := readProc(t, pid, "status")
		if os.Geteuid() == 0 && strings.Contains(status, "\nUid:\t0\t") {
			t.Errorf("%s (pid %d) runs as the host's root: a cell of oplab run as root must run as a user of its own", comp.Name, pid)
		}
		for _, want := range []string{"CapEff:\t0000000000000000", "CapPrm:\t0000000000000000", "NoNewPrivs:\t1"} {
			if !strings.Contains(status, want) {
				t.Errorf("%s (pid %d): /proc/%d/status lacks %q", comp.Name, pid, pid, want)
			}
		}
		limits := readProc(t, pid, "limits")
		for _, want := range []string{"Max data size", "Max open files"} {
			line := lineWith(limits, want)
			if line == "" || strings.Contains(line, "unlimited") {
				t.Errorf("%s (pid %d): %s is not bounded: %q", comp.Name, pid, want, line)
			}
		}
		// The process's view of the file system: its cluster's directory
		// is there, the rest of the data directory is not, nor is /root.
		root := "/proc/" + strconv.Itoa(pid) + "/root"
		if _, err := os.Stat(root + filepath.Dir(c.Kubeconfig)); err != nil {
			t.Errorf("%s (pid %d) does not see its own directory: %v", comp.Name, pid, err)
		}
		for _, hidden := range []string{can.File, can.TmpFile, "/root", "/home", filepath.Join(data, "clusters")} {
			if hidden == filepath.Join(data, "clusters") {
				// Its own cluster is in there, and nothing else.
				entries, _ := os.ReadDir(root + hidden)
				if len(entries) != 1 {
					t.Errorf("%s (pid %d) sees %d entries in %s, want its own cluster only", comp.Name, pid, len(entries), hidden)
				}
				continue
			}
			if _, err := os.Stat(root + hidden); err == nil {
				t.Errorf("%s (pid %d) sees %s", comp.Name, pid, hidden)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no process of the cluster to check")
	}
}

// requireContained fails the test of wall where p's clusters cannot be
// contained (skips it where walltest's rule lets a wall go untested).
func requireContained(t *testing.T, p *cluster.Provider, wall string) {
	t.Helper()
	walltest.Require(t, wall, walltest.Contained(p.Contained()))
}

func namespaces(t *testing.T, pid int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, kind := range []string{"user", "mnt", "net", "pid", "ipc", "uts"} {
		link, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/%s", pid, kind))
		if err != nil {
			t.Fatal(err)
		}
		out[kind] = link
	}
	return out
}

func readProc(t *testing.T, pid int, file string) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func lineWith(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

var clusterLogsGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "clusterlogs"}

// tryClusterLogs points KWOK's log of a pod at the canary files and reads
// the pod's log.
func tryClusterLogs(ctx context.Context, t *testing.T, c *clustertest.Cluster, can *clustertest.Canaries) (bool, string) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := "escape-logs"
	c.Namespace(t, ns)
	var out []string
	for i, file := range []string{can.File, can.Kubeconfig, can.TmpFile} {
		name := fmt.Sprintf("reader-%d", i)
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs",
			"metadata": map[string]any{"name": name},
			"spec": map[string]any{
				"selector": map[string]any{"matchNamespaces": []any{ns}},
				"logs":     []any{map[string]any{"containers": []any{name}, "logsFile": file}},
			},
		}}
		if _, err := dyn.Resource(clusterLogsGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return false, "ClusterLogs refused: " + err.Error()
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "busybox"}}},
		}
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var last string
		wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.Status.Phase != corev1.PodRunning {
				return false, nil
			}
			// A file that is not a log answers an error that quotes it.
			b, err := c.Client.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{Container: name}).DoRaw(ctx)
			last = string(b)
			if err != nil {
				last += " " + err.Error()
			}
			// KWOK answers "no logs found" until its informer has seen
			// the ClusterLogs: ask again until it has, or time runs out.
			return !strings.Contains(last, "no logs found for container"), nil
		})
		if strings.Contains(last, can.Secret) {
			return true, "the pod's log showed " + file
		}
		out = append(out, fmt.Sprintf("%s: %.120s", filepath.Base(file), last))
	}
	return false, strings.Join(out, "; ")
}

// tryHostPathDelete binds a claim to a hostPath volume on the canary
// directory with the Delete reclaim policy, and deletes the claim.
func tryHostPathDelete(ctx context.Context, t *testing.T, c *clustertest.Cluster, can *clustertest.Canaries) (bool, string) {
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "escape-hostpath"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
			StorageClassName:              "escape",
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: can.TmpDir}},
		},
	}
	if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		return false, "PersistentVolume refused: " + err.Error()
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "escape-hostpath", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName: ptr.To("escape"),
			VolumeName:       pv.Name,
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := c.Client.CoreV1().PersistentVolumeClaims("default").Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := c.Client.CoreV1().PersistentVolumeClaims("default").Get(ctx, pvc.Name, metav1.GetOptions{})
		return err == nil && got.Status.Phase == corev1.ClaimBound, nil
	})
	if err != nil {
		t.Fatalf("claim not bound to the hostPath volume: %v", err)
	}
	if err := c.Client.CoreV1().PersistentVolumeClaims("default").Delete(ctx, pvc.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The volume controller deletes the volume's directory, then the
	// volume: wait for the volume to go (or fail).
	var phase corev1.PersistentVolumePhase
	wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := c.Client.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		if err != nil {
			phase = "deleted"
			return true, nil
		}
		phase = got.Status.Phase
		return phase == corev1.VolumeFailed, nil
	})
	if _, err := os.Stat(can.TmpDir); err != nil {
		return true, fmt.Sprintf("the volume went %s and %s is gone", phase, can.TmpDir)
	}
	return false, fmt.Sprintf("the volume went %s; %s is intact", phase, can.TmpDir)
}

// tryWebhook registers a validating webhook at the canary port and makes an
// object it intercepts.
func tryWebhook(ctx context.Context, t *testing.T, c *clustertest.Cluster, can *clustertest.Canaries) (bool, string) {
	url := fmt.Sprintf("https://127.0.0.1:%d/validate", can.Port)
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "escape"},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:                    "escape.example.com",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](2),
		}},
	}
	if _, err := c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, hook, metav1.CreateOptions{}); err != nil {
		return false, "webhook refused: " + err.Error()
	}
	defer c.Client.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, hook.Name, metav1.DeleteOptions{})
	// The API server picks up a new webhook within a second or so: keep
	// making objects for a few seconds.
	before := can.Connections()
	for i := 0; i < 10 && can.Connections() == before; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{GenerateName: "escape-", Namespace: "default"}}
		c.Client.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{})
		time.Sleep(500 * time.Millisecond)
	}
	return false, "configmaps created with the webhook in place"
}

// tryAPIService registers an aggregated API served by a Service of type
// ExternalName that names localhost at the canary port: the API server's
// aggregator dials it to check the API's availability.
func tryAPIService(ctx context.Context, t *testing.T, c *clustertest.Cluster, can *clustertest.Canaries) (bool, string) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "escape", Namespace: "default"},
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
			Ports: []corev1.ServicePort{{Port: int32(can.Port)}},
		},
	}
	if _, err := c.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return false, "service refused: " + err.Error()
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
	api := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": map[string]any{"name": "v1.escape.example.com"},
		"spec": map[string]any{
			"group": "escape.example.com", "version": "v1",
			"service":               map[string]any{"namespace": "default", "name": "escape", "port": int64(can.Port)},
			"insecureSkipTLSVerify": true, "groupPriorityMinimum": int64(1000), "versionPriority": int64(15),
		},
	}}
	if _, err := dyn.Resource(gvr).Create(ctx, api, metav1.CreateOptions{}); err != nil {
		return false, "APIService refused: " + err.Error()
	}
	defer dyn.Resource(gvr).Delete(ctx, "v1.escape.example.com", metav1.DeleteOptions{})
	before := can.Connections()
	for i := 0; i < 20 && can.Connections() == before; i++ {
		c.Client.CoreV1().RESTClient().Get().AbsPath("/apis/escape.example.com/v1").Do(ctx)
		time.Sleep(250 * time.Millisecond)
	}
	return false, "the aggregated API was asked for"
}
