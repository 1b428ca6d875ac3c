package kind

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/kind/pkg/apis/config/v1alpha4"
	kindcluster "sigs.k8s.io/kind/pkg/cluster"
	kindexec "sigs.k8s.io/kind/pkg/exec"
	"sigs.k8s.io/yaml"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// Create makes the kind cluster "oplab-<name>" and returns once a node is
// Ready and the default ServiceAccount exists. kind's own steps are
// reported through opts.Progress as they happen. On error, or when ctx ends
// first, nothing of the cluster is left.
func (p *Provider) Create(ctx context.Context, name string, opts providers.CreateOptions) (err error) {
	if err := checkName(name); err != nil {
		return err
	}
	cfg, err := p.clusterConfig(name, opts)
	if err != nil {
		return err
	}
	e, err := p.engine(ctx)
	if err != nil {
		return err
	}
	if ok, err := e.exists(name); err != nil {
		return err
	} else if ok {
		return fmt.Errorf("%w: %q (delete it first, or choose another name)", providers.ErrAlreadyExists, name)
	}
	r := &reporter{progress: opts.Progress}
	image, err := nodeImage(ctx, pullSteps{e, r}, e.bin, p.o.NodeImage)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(p.clusterDir(name), 0o700); err != nil {
		return err
	}
	if err := os.MkdirAll(p.workspace(name), 0o755); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			p.logger.Info("create failed, removing the cluster", "cluster", name, "error", err)
			if derr := p.Delete(context.WithoutCancel(ctx), name); derr != nil && !errors.Is(derr, providers.ErrNotFound) {
				err = errors.Join(err, fmt.Errorf("clean up: %w", derr))
			}
		}
	}()
	kp := kindcluster.NewProvider(providerOption(e.bin), kindcluster.ProviderWithLogger(&stepLogger{next: kindLogger{p.logger}, onStep: r.kindStep}))
	if err := p.runKind(ctx, func() error {
		return kp.Create(kindName(name),
			kindcluster.CreateWithV1Alpha4Config(cfg),
			kindcluster.CreateWithNodeImage(image),
			kindcluster.CreateWithKubeconfigPath(p.kubeconfig(name)),
			kindcluster.CreateWithWaitForReady(readyTimeout),
			kindcluster.CreateWithDisplayUsage(false),
			kindcluster.CreateWithDisplaySalutation(false),
		)
	}); err != nil {
		r.fail(err)
		return fmt.Errorf("create kind cluster %q with node image %s: %w%s", kindName(name), image, err, commandOutput(err))
	}
	r.finish()
	if err := r.step("Bounding the node to its budget", func() error { return p.bound(ctx, e, name, opts.Unsettled) }); err != nil {
		return err
	}
	if err := r.step("Walling the nodes off from the machine's networks", func() error { return p.wall(ctx, e, name, cfg) }); err != nil {
		return err
	}
	return r.step("Waiting for the default ServiceAccount", func() error {
		return waitServiceAccount(ctx, p.kubeconfig(name))
	})
}

// commandOutput is the end of the output of the command behind a kind
// error (kubeadm's, for instance), which kind keeps out of Error(): without
// it a failed create says only "exit status 1".
func commandOutput(err error) string {
	var re *kindexec.RunError
	if !errors.As(err, &re) || len(re.Output) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(re.Output)), "\n")
	if len(lines) > outputLines {
		lines = lines[len(lines)-outputLines:]
	}
	return "; its output ends:\n" + strings.Join(lines, "\n")
}

// outputLines is how much of a failed command's output an error carries.
const outputLines = 25

func providerOption(bin string) kindcluster.ProviderOption {
	if bin == "podman" {
		return kindcluster.ProviderWithPodman()
	}
	return kindcluster.ProviderWithDocker()
}

// runKind runs fn, which cannot be cancelled (kind's library takes no
// context), and returns early with ctx's error when ctx ends; fn then
// finishes in the background and the caller's cleanup deletes what it made.
func (p *Provider) runKind(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		<-done // the cluster must exist to be deleted
		return ctx.Err()
	}
}

// clusterConfig is the base config (Options.ConfigPath) or an empty one,
// with the API server on loopback at the requested port, and every node
// binding the cluster's workspace and the shared directories (see
// Workshop).
func (p *Provider) clusterConfig(name string, opts providers.CreateOptions) (*v1alpha4.Cluster, error) {
	cfg := &v1alpha4.Cluster{}
	if p.o.ConfigPath != "" {
		var err error
		if cfg, err = readBaseConfig(p.o.ConfigPath); err != nil {
			return nil, err
		}
	}
	cfg.Kind, cfg.APIVersion = "Cluster", "kind.x-k8s.io/v1alpha4"
	cfg.KubeadmConfigPatches = append([]string{kubeadmTimeouts}, cfg.KubeadmConfigPatches...)
	cfg.Networking.APIServerAddress = "127.0.0.1"
	if opts.APIServerPort != 0 {
		cfg.Networking.APIServerPort = int32(opts.APIServerPort)
	}
	if len(cfg.Nodes) == 0 {
		cfg.Nodes = []v1alpha4.Node{{Role: v1alpha4.ControlPlaneRole}}
	}
	ws := p.workspace(name)
	for i := range cfg.Nodes {
		n := &cfg.Nodes[i]
		n.ExtraMounts = append(n.ExtraMounts, v1alpha4.Mount{HostPath: ws, ContainerPath: ws})
		for _, d := range p.o.Shared {
			n.ExtraMounts = append(n.ExtraMounts, v1alpha4.Mount{HostPath: d, ContainerPath: d, Readonly: true})
		}
	}
	return cfg, nil
}

// kubeadmTimeouts lengthens kubeadm init's waits. Its defaults (4 min for
// the control plane's health, 1 min per API call) fail clusters on a busy
// machine, such as a classroom server running many sessions: measured here,
// `kubeadm init` gave up creating its first ClusterRoleBinding after the
// one minute while the load average was 90. A base config's own patch of
// InitConfiguration comes later and wins.
const kubeadmTimeouts = `kind: InitConfiguration
timeouts:
  controlPlaneComponentHealthCheck: 8m0s
  kubernetesAPICall: 5m0s
`

// readBaseConfig reads a kind cluster config strictly, so a typo is an
// error rather than a silently ignored patch.
func readBaseConfig(path string) (*v1alpha4.Cluster, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kind config: %w", err)
	}
	cfg := &v1alpha4.Cluster{}
	if err := yaml.UnmarshalStrict(data, cfg); err != nil {
		return nil, fmt.Errorf("kind config %s: %w", path, err)
	}
	if cfg.Kind != "" && cfg.Kind != "Cluster" {
		return nil, fmt.Errorf("kind config %s: kind is %q, want Cluster", path, cfg.Kind)
	}
	return cfg, nil
}

func waitServiceAccount(ctx context.Context, kubeconfig string) error {
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, serviceAccountTimeout)
	defer cancel()
	var last error
	err = wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, last = cs.CoreV1().ServiceAccounts(corev1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if last != nil && !apierrors.IsNotFound(last) {
			return false, nil
		}
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the default ServiceAccount did not appear within %s: %w", serviceAccountTimeout, errors.Join(err, last))
	}
	return nil
}

// reporter turns kind's steps and the provider's own into providers.Step.
type reporter struct {
	progress func(providers.Step)
	current  string
	started  time.Time
}

func (r *reporter) emit(s providers.Step) {
	if r.progress != nil {
		r.progress(s)
	}
}

func (r *reporter) kindStep(name string, done, ok bool) {
	if !done {
		r.finish()
		r.current, r.started = name, time.Now()
		r.emit(providers.Step{Name: name})
		return
	}
	if name != r.current {
		return
	}
	var err error
	if !ok {
		err = errors.New("failed")
	}
	r.emit(providers.Step{Name: name, Done: true, Err: err, Duration: time.Since(r.started)})
	r.current = ""
}

// finish ends a step kind left open (its last step has no end line when
// Create returns).
func (r *reporter) finish() {
	if r.current != "" {
		r.emit(providers.Step{Name: r.current, Done: true, Duration: time.Since(r.started)})
		r.current = ""
	}
}

func (r *reporter) fail(err error) {
	if r.current != "" {
		r.emit(providers.Step{Name: r.current, Done: true, Err: err, Duration: time.Since(r.started)})
		r.current = ""
	}
}

func (r *reporter) step(name string, fn func() error) error {
	r.emit(providers.Step{Name: name})
	start := time.Now()
	err := fn()
	r.emit(providers.Step{Name: name, Done: true, Err: err, Duration: time.Since(start)})
	return err
}

// bound gives the cluster's node container its budget: a memory ceiling
// with no swap beyond it, a task bound, a CPU cap, and the CPU weight
// every node has. kind makes the container without limits; the engine changes them
// on the running container. An unsettled node gets its CPU cap from Settle
// (settle.go).
func (p *Provider) bound(ctx context.Context, e *engine, name string, unsettled bool) error {
	b := p.o.Budget
	if b.Memory == 0 {
		return nil
	}
	mem := strconv.FormatInt(b.Memory, 10)
	args := []string{"update", "--memory", mem, "--memory-swap", mem, "--cpu-shares", "1024"}
	if b.Tasks > 0 {
		args = append(args, "--pids-limit", strconv.FormatInt(b.Tasks, 10))
	}
	if b.CPU > 0 && unsettled {
		if err := p.markUnsettled(name); err != nil {
			return err
		}
	} else if b.CPU > 0 {
		args = append(args, "--cpus", strconv.FormatFloat(float64(b.CPU)/1000, 'f', 3, 64))
	}
	args = append(args, kindName(name)+"-control-plane")
	out, err := exec.CommandContext(ctx, e.bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s update: %w: %s", e.bin, err, strings.TrimSpace(string(out)))
	}
	return nil
}
