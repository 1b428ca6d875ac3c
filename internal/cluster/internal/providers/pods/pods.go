package pods

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster/internal/providers"
	"oplab.dev/oplab/internal/podexec"
)

// Reach says how oplab's server connects to learners' API servers.
type Reach string

const (
	// ReachService connects to the cell's Service by its DNS name: the
	// server runs in the host cluster.
	ReachService Reach = "service"
	// ReachPortForward connects through a port forward of the host API
	// server, from a port on 127.0.0.1: the server runs outside.
	ReachPortForward Reach = "port-forward"
)

// Options configure the backend.
type Options struct {
	// Config reaches the host cluster's API server.
	Config *rest.Config
	// Namespace holds the learners' cells; oplab needs rights only there.
	Namespace string
	// Image is oplab's image (it carries cellpod and the control plane).
	Image string
	// StorageClass of the cells' claims; the host's default when empty.
	StorageClass string
	// StorageSize, CPURequest, MemoryRequest and MemoryLimit size a cell's
	// control plane, the Operator… fields its operator container; see
	// DefaultOptions.
	StorageSize, CPURequest, MemoryRequest, MemoryLimit            resource.Quantity
	OperatorCPURequest, OperatorMemoryRequest, OperatorMemoryLimit resource.Quantity
	ConsoleCPURequest, ConsoleMemoryRequest, ConsoleMemoryLimit    resource.Quantity
	// ServerLabels select oplab's server pods, the only pods the cells'
	// NetworkPolicy lets in; ServerNamespace is their namespace when it is
	// not Namespace.
	ServerLabels    map[string]string
	ServerNamespace string
	// Reach; ReachPortForward when empty. A front end that runs in the host
	// cluster chooses ReachService (oplab's CLI does in a pod).
	Reach Reach
	// DataDir receives each cluster's kubeconfig, as oplab's server
	// reaches it, under pods/<name>/.
	DataDir string
	Logger  *slog.Logger
}

// DefaultOptions fills what o leaves empty.
func DefaultOptions(o Options) Options {
	def := func(q *resource.Quantity, s string) {
		if q.IsZero() {
			*q = resource.MustParse(s)
		}
	}
	// The cell's share is package budget's, as the embedded provider's
	// cells have it: the control plane's memory limit is a cell's ceiling,
	// the console's a console's, the claim the cell's disk (its etcd's
	// quota is the embedded provider's default, inside the pod).
	defBytes := func(q *resource.Quantity, n int64) {
		if q.IsZero() {
			*q = *resource.NewQuantity(n, resource.BinarySI)
		}
	}
	defBytes(&o.StorageSize, budget.DefaultDisk)
	def(&o.CPURequest, "50m")
	// From BenchmarkKindPodsCell (docs/figures.md): an idle cell's control
	// plane works in 203-217 MiB at 4.5-4.8 % of a core with its operator,
	// which works in 18 MiB.
	def(&o.MemoryRequest, "256Mi")
	defBytes(&o.MemoryLimit, budget.DefaultMemory)
	def(&o.OperatorCPURequest, "10m")
	def(&o.OperatorMemoryRequest, "32Mi")
	def(&o.OperatorMemoryLimit, "256Mi")
	// The console container idles (a few MiB) between commands; a
	// command's kubectl works in its limit.
	def(&o.ConsoleCPURequest, "1m")
	def(&o.ConsoleMemoryRequest, "16Mi")
	defBytes(&o.ConsoleMemoryLimit, budget.ConsoleMemory)
	if o.ServerLabels == nil {
		o.ServerLabels = map[string]string{LabelName: "oplab", "app.kubernetes.io/component": "server"}
	}
	if o.Reach == "" {
		o.Reach = ReachPortForward
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Provider makes clusters as pods.
type Provider struct {
	opts Options
	cs   kubernetes.Interface

	mu      sync.Mutex
	tunnels map[string]*tunnel
	written map[string]string // kubeconfig written this process: name → server
}

// New returns the backend; it talks to the host cluster only when used.
func New(o Options) (*Provider, error) {
	o = DefaultOptions(o)
	switch {
	case o.Config == nil:
		return nil, errors.New("pods provider: no host cluster configured")
	case o.Namespace == "":
		return nil, errors.New("pods provider: no namespace for the learners' cells")
	case o.Image == "":
		return nil, errors.New("pods provider: no image for the learners' cells")
	case o.DataDir == "":
		return nil, errors.New("pods provider: no data directory")
	case o.Reach != ReachService && o.Reach != ReachPortForward:
		return nil, fmt.Errorf("pods provider: reach %q: use %s or %s", o.Reach, ReachService, ReachPortForward)
	}
	cfg := rest.CopyConfig(o.Config)
	cfg.QPS, cfg.Burst = 50, 100
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Provider{opts: o, cs: cs, tunnels: map[string]*tunnel{}, written: map[string]string{}}, nil
}

// Name is the backend's name: its Info's, its clusters' Status.Provider,
// its directory under the data directory, and what oplab's --provider and
// the store call it.
const Name = "pods"

// Info names the backend. Its clusters' pods are simulated by KWOK, as on
// embedded; the reference operator runs in the cell's second container.
func (p *Provider) Info() providers.Info {
	return providers.Info{Name: Name, Capabilities: providers.Capabilities{Disposable: true, CellOperator: true, CellConsole: true}}
}

// ExecConsole runs one web console command in the cell's console container
// (see providers.CellConsole): the learner's kubectl runs there, beside
// their API server on the pod's loopback, behind the cell's walls — no
// token of the host cluster, no way out through the network.
func (p *Provider) ExecConsole(ctx context.Context, name string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if err := checkName(name); err != nil {
		return err
	}
	cmd := append([]string{"/usr/local/bin/cellpod", "console", "-name", name, "-data", dataMount, "--"}, argv...)
	return podexec.Stream(ctx, p.opts.Config, p.opts.Namespace, podName(name), consoleName, cmd, stdin, stdout, stderr)
}

var validName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w %q: use 1-40 lower-case letters, digits and '-', starting and ending with a letter or digit", providers.ErrInvalidName, name)
	}
	return nil
}

// Create makes the cell's objects, waits for its pod to serve the control
// plane and keeps the admin kubeconfig; see providers.Provider.
func (p *Provider) Create(ctx context.Context, name string, opts providers.CreateOptions) (err error) {
	if err := checkName(name); err != nil {
		return err
	}
	if opts.APIServerPort != 0 {
		return fmt.Errorf("pods provider: the API server's port is the cell's (%d), not chosen", apiPort)
	}
	step := func(what string, fn func() error) error {
		if opts.Progress != nil {
			opts.Progress(providers.Step{Name: what})
		}
		start := time.Now()
		err := fn()
		if opts.Progress != nil {
			opts.Progress(providers.Step{Name: what, Done: true, Err: err, Duration: time.Since(start)})
		}
		return err
	}
	ns := p.opts.Namespace
	if _, err := p.cs.AppsV1().StatefulSets(ns).Get(ctx, objectName(name), metav1.GetOptions{}); err == nil {
		return fmt.Errorf("%w: %q (delete it first, or choose another name)", providers.ErrAlreadyExists, name)
	} else if !apierrors.IsNotFound(err) {
		return fmt.Errorf("host cluster: %w", err)
	}
	defer func() {
		if err != nil {
			p.opts.Logger.Info("create failed, removing the cell", "cluster", name, "error", err)
			if rerr := p.remove(context.WithoutCancel(ctx), name); rerr != nil {
				err = errors.Join(err, fmt.Errorf("clean up: %w", rerr))
			}
		}
	}()
	if err := step("Creating the cell's Service, NetworkPolicy and StatefulSet", func() error {
		if _, err := p.cs.CoreV1().Services(ns).Create(ctx, p.service(name), metav1.CreateOptions{}); err != nil {
			return err
		}
		if _, err := p.cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, p.networkPolicy(name), metav1.CreateOptions{}); err != nil {
			return err
		}
		_, err := p.cs.AppsV1().StatefulSets(ns).Create(ctx, p.statefulSet(name), metav1.CreateOptions{})
		return err
	}); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%w: %q: %w", providers.ErrAlreadyExists, name, err)
		}
		return err
	}
	if err := step("Scheduling the control-plane pod and binding its volume", func() error {
		return p.waitPod(ctx, name, 5*time.Minute, scheduled)
	}); err != nil {
		return err
	}
	if err := step("Starting the control plane in the pod", func() error {
		return p.waitPod(ctx, name, 5*time.Minute, ready)
	}); err != nil {
		return err
	}
	if err := step("Keeping the admin kubeconfig", func() error { return p.keepKubeconfig(ctx, name) }); err != nil {
		return err
	}
	return step("Waiting for the API server through "+string(p.opts.Reach), func() error {
		return p.waitAPI(ctx, name, 2*time.Minute)
	})
}

type podCheck func(*corev1.Pod) (bool, error)

func scheduled(pod *corev1.Pod) (bool, error) {
	return condition(pod, corev1.PodScheduled), nil
}

// ready fails at once on a container that ended: its log tail says why.
func ready(pod *corev1.Pod) (bool, error) {
	for _, s := range pod.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil && (w.Reason == "CrashLoopBackOff" || w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "CreateContainerConfigError") {
			return false, fmt.Errorf("container %s: %s: %s", s.Name, w.Reason, w.Message)
		}
	}
	return condition(pod, corev1.PodReady), nil
}

func condition(pod *corev1.Pod, t corev1.PodConditionType) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == t {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitPod waits until the cell's pod passes check; a timeout says what the
// pod waits for.
func (p *Provider) waitPod(ctx context.Context, name string, timeout time.Duration, check podCheck) error {
	var last *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pod, err := p.cs.CoreV1().Pods(p.opts.Namespace).Get(ctx, podName(name), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, nil // the host API server may blink; the timeout bounds it
		}
		last = pod
		return check(pod)
	})
	if err != nil && last != nil {
		err = fmt.Errorf("%w; pod %s: %s%s", err, last.Name, podSummary(last), p.logTail(context.WithoutCancel(ctx), name))
	}
	return err
}

// podSummary names the pod's phase and what its conditions and containers
// wait for.
func podSummary(pod *corev1.Pod) string {
	parts := []string{string(pod.Status.Phase)}
	for _, c := range pod.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			parts = append(parts, fmt.Sprintf("%s: %s", c.Type, c.Message))
		}
	}
	for _, s := range pod.Status.ContainerStatuses {
		switch {
		case s.State.Waiting != nil:
			parts = append(parts, fmt.Sprintf("%s waiting: %s %s", s.Name, s.State.Waiting.Reason, s.State.Waiting.Message))
		case s.State.Terminated != nil:
			parts = append(parts, fmt.Sprintf("%s ended: %s (exit %d)", s.Name, s.State.Terminated.Reason, s.State.Terminated.ExitCode))
		}
	}
	return strings.Join(parts, "; ")
}

// logTail is the end of the control-plane container's log, for errors.
func (p *Provider) logTail(ctx context.Context, name string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	data, err := p.cs.CoreV1().Pods(p.opts.Namespace).GetLogs(podName(name), &corev1.PodLogOptions{
		Container: containerName, TailLines: ptr.To[int64](10),
	}).DoRaw(ctx)
	if err != nil || len(data) == 0 {
		return ""
	}
	return "; its log ends:\n" + strings.TrimRight(string(data), "\n")
}

// keepKubeconfig reads the admin kubeconfig from the pod and keeps it in a
// Secret owned by the StatefulSet, so it goes with the cluster.
func (p *Provider) keepKubeconfig(ctx context.Context, name string) error {
	out, err := podexec.Run(ctx, p.opts.Config, p.opts.Namespace, podName(name), containerName,
		"/usr/local/bin/cellpod", "kubeconfig", "-name", name, "-data", dataMount)
	if err != nil {
		return err
	}
	if _, err := clientcmd.Load([]byte(out)); err != nil {
		return fmt.Errorf("the pod's kubeconfig: %w", err)
	}
	sts, err := p.cs.AppsV1().StatefulSets(p.opts.Namespace).Get(ctx, objectName(name), metav1.GetOptions{})
	if err != nil {
		return err
	}
	sec := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: adminSecret(name), Namespace: p.opts.Namespace, Labels: cellLabels(name),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID,
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"kubeconfig": []byte(out)},
	}
	_, err = p.cs.CoreV1().Secrets(p.opts.Namespace).Create(ctx, sec, metav1.CreateOptions{})
	return err
}

// waitAPI waits until the learner's API server answers through Reach and
// its default ServiceAccount exists.
func (p *Provider) waitAPI(ctx context.Context, name string, timeout time.Duration) error {
	path, err := p.KubeconfigPath(name)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return err
	}
	cfg.Timeout = 5 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		_, last = cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w: %w", err, last)
	}
	return err
}

// Delete removes the cell — StatefulSet, pod, claim, Service, NetworkPolicy,
// Secret — and returns once the pod and its claim are gone.
func (p *Provider) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	if _, err := p.cs.AppsV1().StatefulSets(p.opts.Namespace).Get(ctx, objectName(name), metav1.GetOptions{}); apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %q", providers.ErrNotFound, name)
	} else if err != nil {
		return fmt.Errorf("host cluster: %w", err)
	}
	return p.remove(ctx, name)
}

// remove deletes whatever of the cell exists and waits for the pod and
// claim to be gone.
func (p *Provider) remove(ctx context.Context, name string) error {
	ns, obj := p.opts.Namespace, objectName(name)
	p.closeTunnel(name)
	bg := metav1.DeletePropagationBackground
	del := metav1.DeleteOptions{PropagationPolicy: &bg}
	var errs []error
	ignore := func(err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	ignore(p.cs.AppsV1().StatefulSets(ns).Delete(ctx, obj, del))
	ignore(p.cs.CoreV1().Services(ns).Delete(ctx, obj, del))
	ignore(p.cs.NetworkingV1().NetworkPolicies(ns).Delete(ctx, obj, del))
	ignore(p.cs.CoreV1().Secrets(ns).Delete(ctx, adminSecret(name), del))
	// The retention policy deletes the claim with the StatefulSet; this
	// covers a StatefulSet that never made its pod.
	claim := "data-" + podName(name)
	ignore(p.cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, claim, del))
	if len(errs) > 0 {
		return fmt.Errorf("delete cell %s: %w", name, errors.Join(errs...))
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, perr := p.cs.CoreV1().Pods(ns).Get(ctx, podName(name), metav1.GetOptions{})
		_, cerr := p.cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
		return apierrors.IsNotFound(perr) && apierrors.IsNotFound(cerr), nil
	})
	if err != nil {
		return fmt.Errorf("delete cell %s: its pod or claim is still there: %w", name, err)
	}
	_ = os.RemoveAll(p.clusterDir(name))
	p.opts.Logger.Info("cluster deleted", "cluster", name)
	return nil
}

// List reports every cell in the namespace.
func (p *Provider) List(ctx context.Context) ([]providers.Status, error) {
	sets, err := p.cs.AppsV1().StatefulSets(p.opts.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(map[string]string{LabelName: cellApp, LabelManagedBy: managedBy}).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("host cluster: %w", err)
	}
	var out []providers.Status
	for _, s := range sets.Items {
		name := s.Labels[LabelCluster]
		if checkName(name) != nil {
			continue
		}
		st, err := p.Status(ctx, name)
		if errors.Is(err, providers.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b providers.Status) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Status reports the cell's pod: running when its control plane answers,
// creating until Create kept the kubeconfig, degraded while the pod is
// replaced or not ready, stopped with no pod.
func (p *Provider) Status(ctx context.Context, name string) (providers.Status, error) {
	if err := checkName(name); err != nil {
		return providers.Status{}, err
	}
	ns := p.opts.Namespace
	sts, err := p.cs.AppsV1().StatefulSets(ns).Get(ctx, objectName(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return providers.Status{}, fmt.Errorf("%w: %q", providers.ErrNotFound, name)
	}
	if err != nil {
		return providers.Status{}, fmt.Errorf("host cluster: %w", err)
	}
	st := providers.Status{Name: name, Provider: Name, Created: sts.CreationTimestamp.UTC(), Server: p.server(name)}
	_, serr := p.cs.CoreV1().Secrets(ns).Get(ctx, adminSecret(name), metav1.GetOptions{})
	kept := serr == nil
	if kept {
		st.Kubeconfig = p.kubeconfigPath(name)
	}
	comp := providers.ComponentStatus{Name: "control plane", Process: "cellpod in pod " + podName(name)}
	pod, err := p.cs.CoreV1().Pods(ns).Get(ctx, podName(name), metav1.GetOptions{})
	havePod := err == nil
	switch {
	case apierrors.IsNotFound(err):
		comp.Detail = "no pod"
	case err != nil:
		return providers.Status{}, fmt.Errorf("host cluster: %w", err)
	default:
		for _, c := range pod.Status.ContainerStatuses {
			if c.Name == containerName {
				comp.Alive = c.State.Running != nil
			}
		}
		comp.Healthy = comp.Alive && condition(pod, corev1.PodReady)
		if !comp.Healthy {
			comp.Detail = podSummary(pod)
		}
	}
	st.Components = []providers.ComponentStatus{comp}
	switch {
	case !kept:
		st.State = providers.StateCreating
	case comp.Healthy:
		st.State = providers.StateRunning
	case havePod:
		st.State = providers.StateDegraded
	default:
		st.State = providers.StateStopped
	}
	return st, nil
}

func (p *Provider) clusterDir(name string) string {
	return filepath.Join(p.opts.DataDir, Name, name)
}

func (p *Provider) kubeconfigPath(name string) string {
	return filepath.Join(p.clusterDir(name), "kubeconfig")
}

// server is the learner's API server as oplab reaches it through the
// Service; a port forward's address is known once it runs.
func (p *Provider) server(name string) string {
	return fmt.Sprintf("https://%s.%s.svc:%d", objectName(name), p.opts.Namespace, apiPort)
}

// KubeconfigPath writes the admin kubeconfig for this process's way of
// reaching the cluster (starting its port forward when that is the way) and
// returns its path.
func (p *Provider) KubeconfigPath(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	server := p.server(name)
	if p.opts.Reach == ReachPortForward {
		addr, err := p.tunnelTo(name)
		if err != nil {
			return "", err
		}
		server = "https://" + addr
	}
	path := p.kubeconfigPath(name)
	p.mu.Lock()
	done := p.written[name] == server
	p.mu.Unlock()
	if done {
		if _, err := os.Stat(path); err == nil {
			return path, nil
		}
	}
	// The host API server is asked without the lock, which every cluster
	// of this provider shares.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sec, err := p.cs.CoreV1().Secrets(p.opts.Namespace).Get(ctx, adminSecret(name), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("%w: %q (or its create has not finished)", providers.ErrNotFound, name)
	}
	if err != nil {
		return "", fmt.Errorf("host cluster: %w", err)
	}
	kc, err := clientcmd.Load(sec.Data["kubeconfig"])
	if err != nil {
		return "", fmt.Errorf("the kept kubeconfig of %s: %w", name, err)
	}
	// The certificate names the pod's loopback: it is checked against the
	// name it carries, whatever address reaches it.
	for _, c := range kc.Clusters {
		c.Server = server
		c.TLSServerName = "localhost"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return "", err
	}
	p.written[name] = server
	return path, nil
}

// Close stops the port forwards this process started.
func (p *Provider) Close() error {
	p.mu.Lock()
	names := slices.Collect(maps.Keys(p.tunnels))
	p.mu.Unlock()
	for _, n := range names {
		p.closeTunnel(n)
	}
	return nil
}
