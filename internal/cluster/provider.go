// Package cluster is oplab's façade over Kubernetes cluster providers.
//
// A Provider makes, lists and deletes clusters through one backend. The
// backends live in internal packages and declare what they can do (see
// Capabilities); callers choose one with a ProviderOption:
//
//	p, err := cluster.NewProvider(cluster.ProviderWithEmbedded(binDir, dataDir))
//	err = p.Create(ctx, "alice", cluster.CreateWithProgress(printStep))
//	cfg, err := p.RESTConfig("alice")
package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster/internal/providers"
	"oplab.dev/oplab/internal/cluster/internal/providers/embedded"
	"oplab.dev/oplab/internal/cluster/internal/providers/kind"
	"oplab.dev/oplab/internal/cluster/internal/providers/pods"
	"oplab.dev/oplab/internal/room"
)

// Types shared with the backends.
type (
	Info            = providers.Info
	Capabilities    = providers.Capabilities
	Status          = providers.Status
	ComponentStatus = providers.ComponentStatus
	State           = providers.State
	Step            = providers.Step
	HostProcess     = providers.HostProcess
	Command         = providers.Command
	Sandbox         = providers.Sandbox
	Usage           = providers.Usage
)

// Cluster states.
const (
	StateRunning   = providers.StateRunning
	StateDegraded  = providers.StateDegraded
	StateStopped   = providers.StateStopped
	StateCreating  = providers.StateCreating
	StateAbandoned = providers.StateAbandoned
)

// Errors a caller can test for with errors.Is.
var (
	ErrNotFound      = providers.ErrNotFound
	ErrAlreadyExists = providers.ErrAlreadyExists
	ErrInvalidName   = providers.ErrInvalidName
	ErrUnsupported   = providers.ErrUnsupported
)

// Provider makes and manages clusters through one backend.
type Provider struct {
	backend providers.Provider
	logger  *slog.Logger
	budget  budget.Budget
	// profiling: new clusters serve profiles (ProviderWithProfiling).
	profiling bool
}

// ProviderOption configures a Provider.
type ProviderOption func(*Provider) error

// ProviderWithEmbedded selects the embedded backend: real control-plane
// processes (built into binDir by `make controlplane`) with state kept under
// dataDir, and cluster seeds in the user's cache directory.
func ProviderWithEmbedded(binDir, dataDir string) ProviderOption {
	return ProviderWithEmbeddedOptions(EmbeddedOptions{BinDir: binDir, DataDir: dataDir})
}

// EmbeddedOptions configure the embedded backend; see ProviderWithEmbedded.
type EmbeddedOptions struct {
	BinDir, DataDir string
	// CacheDir holds the cluster seeds, the etcd data every new cluster
	// starts from; the user's cache directory by default.
	CacheDir string
	// Confine says whether each cluster runs in a cell of its own (see
	// package cell); ConfineAuto by default.
	Confine Confinement
}

// Confinement says whether embedded clusters run in cells.
type Confinement = embedded.Confinement

// Confinement modes.
const (
	// ConfineAuto makes cells where the machine can, and otherwise runs
	// clusters unconfined, saying why.
	ConfineAuto = embedded.ConfineAuto
	// ConfineRequired refuses to make a provider that cannot make cells.
	ConfineRequired = embedded.ConfineRequired
	// ConfineOff never makes cells.
	ConfineOff = embedded.ConfineOff
)

// ErrNoCell is returned (wrapped) with ConfineRequired where cells cannot
// be made; its message says what to install.
var ErrNoCell = embedded.ErrNoCell

// ProviderWithEmbeddedOptions selects the embedded backend configured by o.
func ProviderWithEmbeddedOptions(o EmbeddedOptions) ProviderOption {
	return func(p *Provider) error {
		b, err := embedded.New(embedded.Options{BinDir: o.BinDir, DataDir: o.DataDir, CacheDir: o.CacheDir, Logger: p.logger, Confine: o.Confine, Budget: p.budget, Profiling: p.profiling})
		if err != nil {
			return err
		}
		p.backend = b
		return nil
	}
}

// KindOptions configure the kind backend; see ProviderWithKind.
type KindOptions struct {
	// DataDir holds each cluster's kubeconfig under kind/<name>/.
	DataDir string
	// NodeImage is the node image of every cluster. When empty, each
	// create takes the image `make images` builds (KindOfflineNodeImage)
	// if the engine has it, else DefaultKindNodeImage (upstream, pinned by
	// digest), pulled when missing; a node image that is missing and
	// cannot be pulled is ErrNoKindNodeImage.
	NodeImage string
	// ConfigPath, when set, names a kind cluster config that is the base
	// of every cluster's config (machine-specific kubeadm and containerd
	// patches; see hack/kind/env.sh).
	ConfigPath string
	// Engine is "docker" or "podman"; detected when empty.
	Engine string
	// Shared are directories every node binds read-only at the same path:
	// oplab's bin directory, whose build kit a learner's build uses.
	Shared []string
}

// DefaultKindNodeImage is the upstream kind node image of oplab's
// Kubernetes line, pinned by digest.
const DefaultKindNodeImage = kind.DefaultNodeImage

// KindOfflineNodeImage is the node image `make images` builds without a
// registry.
const KindOfflineNodeImage = kind.OfflineNodeImage

// KindNodeImageEnv names the variable that chooses the kind node image:
// oplab's CLI reads it into Options.KindNodeImage, and ErrNoKindNodeImage's
// message names it.
const KindNodeImageEnv = kind.NodeImageEnv

// ErrNoKindNodeImage is returned (wrapped) by a kind create when the engine
// has no node image and cannot pull one; its message says to run `make
// images` or set KindNodeImageEnv.
var ErrNoKindNodeImage = kind.ErrNoNodeImage

// ErrNoEngine is returned (wrapped) by the kind backend when neither Docker
// nor Podman runs; its message says what to install.
var ErrNoEngine = kind.ErrNoEngine

// ProviderWithKind selects the kind backend: clusters are kind clusters
// named "oplab-<name>" on the local Docker or Podman engine, made through
// kind's library. The engine is detected on first use.
func ProviderWithKind(o KindOptions) ProviderOption {
	return func(p *Provider) error {
		b, err := kind.New(kind.Options{DataDir: o.DataDir, NodeImage: o.NodeImage, ConfigPath: o.ConfigPath, Engine: o.Engine, Logger: p.logger,
			Shared: o.Shared, Budget: p.budget.Or(budget.Kind)})
		if err != nil {
			return err
		}
		p.backend = b
		return nil
	}
}

// PodsOptions configure the pods backend; see ProviderWithPods.
type PodsOptions = pods.Options

// PodsReach says how oplab reaches the learners' API servers on the pods
// backend.
type PodsReach = pods.Reach

// Ways to reach a cell.
const (
	PodsReachService     = pods.ReachService
	PodsReachPortForward = pods.ReachPortForward
)

// PodsServerLabels are the labels of oplab's server pods that the cells'
// NetworkPolicy lets in by default (PodsOptions.ServerLabels).
func PodsServerLabels() map[string]string {
	return pods.DefaultOptions(pods.Options{}).ServerLabels
}

// PodsCell returns the cell's pod (the StatefulSet's template, in o's
// namespace) and the NetworkPolicy that the pods backend with o makes for
// cluster name, without a host: for tests that evaluate the network wall
// where the host's CNI does not enforce it (package netpolicy).
func PodsCell(o PodsOptions, name string) (corev1.Pod, *networkingv1.NetworkPolicy) {
	sts, np := pods.CellObjects(o, name)
	return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: sts.Namespace, Labels: sts.Spec.Template.Labels}, Spec: sts.Spec.Template.Spec}, np
}

// PodsCellLabels select every cell of the pods backend: what a
// ResourceQuota's scope or a person's kubectl picks them by.
func PodsCellLabels() map[string]string { return pods.CellLabels() }

// CellOperatorDir is the reference operator's directory inside a cell of
// the pods backend (see Capabilities.CellOperator).
const CellOperatorDir = pods.OperatorDir

// DefaultPodsImage is the image `make images` builds (oplab.dev/oplab at
// the reference chart's appVersion): it carries cellpod and the control
// plane.
const DefaultPodsImage = "oplab.dev/oplab:0.1.0"

// ProviderWithPods selects the pods backend: each cluster is a
// StatefulSet of one pod on a host Kubernetes cluster (see package
// cellpod), reached through its Service or a port forward.
func ProviderWithPods(o PodsOptions) ProviderOption {
	return func(p *Provider) error {
		if o.Logger == nil {
			o.Logger = p.logger
		}
		if o.MemoryLimit.IsZero() && p.budget.Memory > 0 {
			o.MemoryLimit = *resource.NewQuantity(p.budget.Memory, resource.BinarySI)
		}
		b, err := pods.New(o)
		if err != nil {
			return err
		}
		p.backend = b
		return nil
	}
}

// DefaultPodsNamespace holds the cells when PodsHost names no namespace
// and oplab does not run in a pod.
const DefaultPodsNamespace = "oplab-cells"

// PodsHost says where the pods backend makes its cells: the host cluster,
// the namespace, the image and the claims' class, and how oplab reaches
// the cells. A front end fills it from its configuration; empty fields take
// the defaults PodsFrom names.
type PodsHost struct {
	// Kubeconfig is the host cluster's kubeconfig; when empty, the pod's own
	// ServiceAccount where oplab runs in the host cluster, else client-go's
	// default ($KUBECONFIG, ~/.kube/config).
	Kubeconfig string
	// Namespace holds the cells; the pod's own namespace when empty, else
	// DefaultPodsNamespace.
	Namespace string
	// Image is the cells' image; DefaultPodsImage when empty.
	Image string
	// StorageClass is the cells' claims' class; the host's default when
	// empty.
	StorageClass string
	// Reach is how oplab reaches the cells' API servers; see PodsOptions.
	Reach PodsReach
}

// PodsKubeconfigEnv names the variable that gives PodsHost.Kubeconfig:
// oplab's CLI reads it, and PodsFrom's error names it.
const PodsKubeconfigEnv = "OPLAB_PODS_KUBECONFIG"

// PodsFrom configures the pods backend on the host cluster h names, with
// each cluster's kubeconfig under dataDir.
func PodsFrom(h PodsHost, dataDir string) (PodsOptions, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if h.Kubeconfig != "" {
		rules.ExplicitPath = h.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return PodsOptions{}, fmt.Errorf("pods provider: the host cluster: %w (set %s)", err, PodsKubeconfigEnv)
	}
	ns := h.Namespace
	if ns == "" {
		if own, ok, _ := cc.Namespace(); ok && own != "" {
			ns = own
		} else {
			ns = DefaultPodsNamespace
		}
	}
	// A server that reaches the cells by their Services runs in the host
	// cluster, in a pod of its own namespace (client-go reads it in the
	// pod): the cells' NetworkPolicy must name that namespace where it is
	// not the cells' (the chart puts the cells in a namespace of their
	// own), or a CNI that enforces it keeps the server out.
	server := ""
	if h.Reach == PodsReachService {
		if own, _, err := cc.Namespace(); err == nil {
			server = own
		}
	}
	image := h.Image
	if image == "" {
		image = DefaultPodsImage
	}
	return PodsOptions{
		Config: cfg, Namespace: ns, Image: image, DataDir: dataDir,
		StorageClass: h.StorageClass, Reach: h.Reach, ServerNamespace: server,
	}, nil
}

// Room returns the room the backend's host has for more clusters, as
// admission measures it, when that is not this machine's: on the pods
// backend, the host cluster's (see pods.Room). ok is false for the
// backends whose clusters run on this machine, which /proc measures.
func (p *Provider) Room() (room room.Source, ok bool) {
	if b, isPods := p.backend.(*pods.Provider); isPods {
		return b.Room(), true
	}
	return nil, false
}

// Close releases what the backend holds for this process (the pods
// backend's port forwards); clusters keep running.
func (p *Provider) Close() error {
	if c, ok := p.backend.(interface{ Close() error }); ok {
		return c.Close()
	}
	return nil
}

// Provider names for ProviderByName: each backend's own.
const (
	ProviderEmbedded = embedded.Name
	ProviderKind     = kind.Name
	ProviderPods     = pods.Name
)

// Options configure whichever backend ProviderByName chooses: each takes
// its part. A front end fills them from its configuration (oplab's CLI,
// from its flags and environment); nothing here reads the environment.
type Options struct {
	// BinDir holds the control-plane binaries (embedded) and the build kit
	// (embedded and kind, whose nodes bind it).
	BinDir string
	// DataDir holds the clusters' state and kubeconfigs (every backend).
	DataDir string
	// KindNodeImage and KindConfig are the kind backend's
	// KindOptions.NodeImage and KindOptions.ConfigPath.
	KindNodeImage, KindConfig string
	// Pods says where the pods backend makes its cells.
	Pods PodsHost
	// Profiling makes new clusters and the operator's host process serve
	// profiles (embedded; see ProviderWithProfiling).
	Profiling bool
}

// ProviderByName selects the backend called name ("embedded", "kind" or
// "pods"), configured by o.
func ProviderByName(name string, o Options) ProviderOption {
	switch name {
	case ProviderEmbedded:
		return func(p *Provider) error {
			p.profiling = o.Profiling
			return ProviderWithEmbedded(o.BinDir, o.DataDir)(p)
		}
	case ProviderKind:
		var shared []string
		if o.BinDir != "" {
			shared = []string{o.BinDir}
		}
		return ProviderWithKind(KindOptions{DataDir: o.DataDir, NodeImage: o.KindNodeImage, ConfigPath: o.KindConfig, Shared: shared})
	case ProviderPods:
		return func(p *Provider) error {
			po, err := PodsFrom(o.Pods, o.DataDir)
			if err != nil {
				return err
			}
			return ProviderWithPods(po)(p)
		}
	default:
		return func(*Provider) error {
			return fmt.Errorf("unknown cluster provider %q: use %s, %s or %s", name, ProviderEmbedded, ProviderKind, ProviderPods)
		}
	}
}

// ProviderWithProfiling makes new clusters serve CPU and heap profiles
// (the embedded backend's API server and etcd, on their /debug/pprof/,
// behind the cluster's admin credentials), and the operator's host process
// beside them (see Profiling). Give it before the backend option. Off by
// default: it is for finding where an idle cluster's CPU goes.
func ProviderWithProfiling(on bool) ProviderOption {
	return func(p *Provider) error {
		p.profiling = on
		return nil
	}
}

// Profiling reports whether new clusters serve profiles, so that what runs
// beside them (the operator's host process) serves its own too.
func (p *Provider) Profiling() bool { return p.profiling }

// ProviderWithLogger sets the logger for provider-level messages. Give it
// before the backend option so the backend logs there too.
func ProviderWithLogger(l *slog.Logger) ProviderOption {
	return func(p *Provider) error {
		p.logger = l
		return nil
	}
}

// ProviderWithBudget sets each cluster's share of the machine (package
// budget): its cell's control group on the embedded backend, its node
// container's limits on kind. Give it before the backend option; fields
// left zero take the backend's defaults (budget.Default, budget.Kind).
func ProviderWithBudget(b budget.Budget) ProviderOption {
	return func(p *Provider) error {
		if err := b.WithDefaults().Validate(); err != nil {
			return err
		}
		p.budget = b
		return nil
	}
}

// NewProvider returns a Provider configured by opts. A backend option is
// required.
func NewProvider(opts ...ProviderOption) (*Provider, error) {
	p := &Provider{logger: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		if err := o(p); err != nil {
			return nil, err
		}
	}
	if p.backend == nil {
		return nil, errors.New("no cluster provider chosen")
	}
	return p, nil
}

// Info names the backend and declares its capabilities.
func (p *Provider) Info() Info { return p.backend.Info() }

// Contained reports whether what a learner makes a new cluster do stays
// inside it — the walls of package cell on the embedded provider — and,
// when not, why. Backends whose walls are the cluster's own (kind's
// containers, the learner's identity and admission policy) are contained.
func (p *Provider) Contained() (bool, error) {
	if c, ok := p.backend.(interface{ Contained() (bool, error) }); ok {
		return c.Contained()
	}
	return true, nil
}

// Usage reports what cluster name takes of its budget; ErrUnsupported
// where clusters have no budget of oplab's (kind, pods: the container's
// and the pod's limits are the engine's and the host cluster's).
func (p *Provider) Usage(ctx context.Context, name string) (Usage, error) {
	if b, ok := p.backend.(providers.Budgeted); ok {
		return b.Usage(ctx, name)
	}
	return Usage{}, ErrUnsupported
}

// Maintain keeps cluster name inside its bounds where it can (see
// providers.Capped); it does nothing on a backend without a CPU cap.
func (p *Provider) Maintain(ctx context.Context, name string) error {
	if b, ok := p.backend.(providers.Capped); ok {
		return b.Maintain(ctx, name)
	}
	return nil
}

// Settle holds cluster name, made with CreateUnsettled, to its share of the
// CPU from now on (see providers.Capped); it does nothing on a backend
// without a CPU cap, or for a settled cluster.
func (p *Provider) Settle(ctx context.Context, name string) error {
	if b, ok := p.backend.(providers.Capped); ok {
		return b.Settle(ctx, name)
	}
	return nil
}

// Unsettle lets cluster name run without its CPU cap until Settle, and
// says whether it had one to lift (see providers.Capped); it does
// nothing on a backend without a CPU cap.
func (p *Provider) Unsettle(ctx context.Context, name string) (bool, error) {
	if b, ok := p.backend.(providers.Capped); ok {
		return b.Unsettle(ctx, name)
	}
	return false, nil
}

// Budget returns the budget each new cluster gets from the kernel, and
// whether it gets one: only the embedded backend's cells have one of
// oplab's (kind's nodes and the pods backend's pods are bounded by their
// engine and host cluster).
func (p *Provider) Budget() (budget.Budget, bool) {
	if b, ok := p.backend.(interface{ Budget() (budget.Budget, bool) }); ok {
		return b.Budget()
	}
	return budget.Budget{}, false
}

// ConsoleGroup returns the cgroup.procs files a web console command of
// cluster name's learner joins, so it counts against the cell's budget
// under a ceiling of its own; nil where the cluster has none.
func (p *Provider) ConsoleGroup(name string) []string {
	if b, ok := p.backend.(providers.Budgeted); ok {
		return b.ConsoleGroup(name)
	}
	return nil
}

// CreateOption tunes Create.
type CreateOption func(*providers.CreateOptions) error

// CreateUnsettled leaves a cluster with a budget of its own without its CPU
// cap when Create returns, for its maker's setup, until Settle (at the
// latest, Maintain caps it a few minutes after its start).
func CreateUnsettled() CreateOption {
	return func(o *providers.CreateOptions) error {
		o.Unsettled = true
		return nil
	}
}

// CreateWithProgress reports each step of Create to fn as it starts and ends.
func CreateWithProgress(fn func(Step)) CreateOption {
	return func(o *providers.CreateOptions) error {
		o.Progress = fn
		return nil
	}
}

// CreateWithAPIServerPort pins the API server to port on 127.0.0.1.
func CreateWithAPIServerPort(port int) CreateOption {
	return func(o *providers.CreateOptions) error {
		if port < 1 || port > 65535 {
			return fmt.Errorf("API server port %d is out of range 1-65535", port)
		}
		o.APIServerPort = port
		return nil
	}
}

// Create makes the cluster name and returns once it is usable: the API server
// is ready, a node is Ready and the default ServiceAccount exists.
func (p *Provider) Create(ctx context.Context, name string, opts ...CreateOption) error {
	var o providers.CreateOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return err
		}
	}
	return p.backend.Create(ctx, name, o)
}

// Delete stops the cluster's processes and removes its state.
func (p *Provider) Delete(ctx context.Context, name string) error {
	return p.backend.Delete(ctx, name)
}

// List reports every cluster of the backend.
func (p *Provider) List(ctx context.Context) ([]Status, error) {
	return p.backend.List(ctx)
}

// Status reports one cluster.
func (p *Provider) Status(ctx context.Context, name string) (Status, error) {
	return p.backend.Status(ctx, name)
}

// KubeconfigPath returns the path of the cluster's admin kubeconfig.
func (p *Provider) KubeconfigPath(name string) (string, error) {
	return p.backend.KubeconfigPath(name)
}

// RESTConfig returns an admin client configuration for the cluster.
func (p *Provider) RESTConfig(name string) (*rest.Config, error) {
	path, err := p.backend.KubeconfigPath(name)
	if err != nil {
		return nil, err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig of cluster %q: %w", name, err)
	}
	return cfg, nil
}

// Stop stops the cluster's processes and keeps everything it needs to start
// again: certificates, configuration and etcd's data. Only backends whose
// clusters are processes (embedded) support it.
func (p *Provider) Stop(ctx context.Context, name string) error {
	r, ok := p.backend.(providers.Restarter)
	if !ok {
		return fmt.Errorf("stop %s: %w", name, ErrUnsupported)
	}
	return r.Stop(ctx, name)
}

// Start starts a stopped cluster again, as it was: every object in it is
// kept. It fails when the cluster runs, and on backends without Stop.
func (p *Provider) Start(ctx context.Context, name string, opts ...CreateOption) error {
	r, ok := p.backend.(providers.Restarter)
	if !ok {
		return fmt.Errorf("start %s: %w", name, ErrUnsupported)
	}
	var o providers.CreateOptions
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return err
		}
	}
	return r.Start(ctx, name, o)
}

// Freeze stops every process of the cluster from running, keeping its
// memory, until Thaw: a cluster nobody uses costs no CPU. Backends with
// the Sleeps capability support it.
func (p *Provider) Freeze(ctx context.Context, name string) error {
	s, ok := p.backend.(providers.Sleeper)
	if !ok {
		return fmt.Errorf("freeze %s: %w", name, ErrUnsupported)
	}
	return s.Freeze(ctx, name)
}

// Thaw lets a frozen cluster run again, where it stopped.
func (p *Provider) Thaw(ctx context.Context, name string) error {
	s, ok := p.backend.(providers.Sleeper)
	if !ok {
		return fmt.Errorf("thaw %s: %w", name, ErrUnsupported)
	}
	return s.Thaw(ctx, name)
}

// LoadImages copies images from the local container engine into every node
// of the cluster. Only backends with the LoadImages capability support it.
func (p *Provider) LoadImages(ctx context.Context, cluster string, images ...string) error {
	l, ok := p.backend.(providers.ImageLoader)
	if !ok {
		return fmt.Errorf("load images: %w", ErrUnsupported)
	}
	return l.LoadImages(ctx, cluster, images...)
}

// StartHostProcess runs spec beside the cluster and stops it with the
// cluster. Only backends with the HostProcesses capability support it.
func (p *Provider) StartHostProcess(ctx context.Context, cluster string, spec HostProcess) error {
	r, ok := p.backend.(providers.HostProcessRunner)
	if !ok {
		return fmt.Errorf("start %s: %w", spec.Name, ErrUnsupported)
	}
	return r.StartHostProcess(ctx, cluster, spec)
}

// HostProgram returns the path by which the cluster's host processes run
// the program at path (see providers.HostProcessRunner).
func (p *Provider) HostProgram(ctx context.Context, cluster, path string) (string, error) {
	r, ok := p.backend.(providers.HostProcessRunner)
	if !ok {
		return "", fmt.Errorf("host program %s: %w", path, ErrUnsupported)
	}
	return r.HostProgram(ctx, cluster, path)
}

// Workspace returns a directory the cluster's processes may read and
// write, and oplab writes to (see providers.Workshop).
func (p *Provider) Workspace(ctx context.Context, cluster string) (string, error) {
	w, ok := p.backend.(providers.Workshop)
	if !ok {
		return "", fmt.Errorf("workspace: %w", ErrUnsupported)
	}
	return w.Workspace(ctx, cluster)
}

// Share makes the files under src readable, not writable, by the cluster's
// processes at dst, in its workspace.
func (p *Provider) Share(ctx context.Context, cluster, src, dst string) error {
	w, ok := p.backend.(providers.Workshop)
	if !ok {
		return fmt.Errorf("share %s: %w", src, ErrUnsupported)
	}
	return w.Share(ctx, cluster, src, dst)
}

// Run runs c among the cluster's processes, under its walls and budget,
// and waits for it; a non-zero exit is an *exec.ExitError. The state, when
// it ran, tells what it used.
func (p *Provider) Run(ctx context.Context, cluster string, c Command) (*os.ProcessState, error) {
	w, ok := p.backend.(providers.Workshop)
	if !ok {
		return nil, fmt.Errorf("run %s: %w", c.Path, ErrUnsupported)
	}
	return w.Run(ctx, cluster, c)
}

// Confine returns the command line that runs prog with args among the
// cluster's processes, in a sandbox that sees only what c lists (see
// providers.Workshop): a learner's own program.
func (p *Provider) Confine(ctx context.Context, cluster string, c Sandbox, prog string, args []string) (string, []string, error) {
	w, ok := p.backend.(providers.Workshop)
	if !ok {
		return "", nil, fmt.Errorf("confine %s: %w", prog, ErrUnsupported)
	}
	return w.Confine(ctx, cluster, c, prog, args)
}

// ConfinedPod returns the spec of a pod of the cluster that runs prog with
// args confined, seeing only what c lists (see providers.PodWorkshop): a
// learner's controller, where the cluster's pods run real containers.
func (p *Provider) ConfinedPod(ctx context.Context, cluster string, c Sandbox, prog string, args []string) (corev1.PodSpec, error) {
	w, ok := p.backend.(providers.PodWorkshop)
	if !ok {
		return corev1.PodSpec{}, fmt.Errorf("confine %s in a pod: %w", prog, ErrUnsupported)
	}
	return w.ConfinedPod(ctx, cluster, c, prog, args)
}

// CellExec runs the far end of a web console command (console.Remote) in a
// cluster's cell, given its arguments.
type CellExec interface {
	Run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// ConsoleIn returns how web console commands run in the cell of cluster:
// nil on backends without the CellConsole capability, whose console runs
// them on this machine.
func (p *Provider) ConsoleIn(cluster string) CellExec {
	c, ok := p.backend.(providers.CellConsole)
	if !ok || !p.Info().Capabilities.CellConsole {
		return nil
	}
	return cellExec{c: c, cluster: cluster}
}

type cellExec struct {
	c       providers.CellConsole
	cluster string
}

func (c cellExec) Run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return c.c.ExecConsole(ctx, c.cluster, argv, stdin, stdout, stderr)
}

// StopHostProcess stops a process started with StartHostProcess.
func (p *Provider) StopHostProcess(ctx context.Context, cluster, name string) error {
	r, ok := p.backend.(providers.HostProcessRunner)
	if !ok {
		return fmt.Errorf("stop %s: %w", name, ErrUnsupported)
	}
	return r.StopHostProcess(ctx, cluster, name)
}
