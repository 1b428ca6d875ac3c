// Package kind is the cluster provider whose clusters are kind clusters:
// Kubernetes nodes as containers of a local Docker or Podman engine, made
// through sigs.k8s.io/kind's library (not the kind binary). Pods run real
// container images, so a lab can run a real PostgreSQL data plane.
//
// oplab's clusters are the kind clusters named "oplab-<name>": `kind get
// clusters` shows them and `kind export logs --name oplab-<name>` works on
// them. Each has a kubeconfig of its own under the data directory, so
// oplab never edits the user's ~/.kube/config.
//
// The node image is the one configured or, when none is, the one `make
// images` builds offline (OfflineNodeImage) if the engine has it, else the
// upstream DefaultNodeImage, pinned by digest, where a registry is
// reachable. A kind cluster config may be given as the base of every
// cluster's config: that is how a machine adds the kubeadm and containerd
// patches it needs (see hack/kind/env.sh) without the provider knowing
// about them.
package kind

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// DefaultNodeImage is the upstream kind node image of oplab's Kubernetes
// line, pinned by digest, used where a registry is reachable.
const DefaultNodeImage = "kindest/node:v1.36.1@sha256:3489c7674813ba5d8b1a9977baea8a6e553784dab7b84759d1014dbd78f7ebd5"

// Prefix starts the kind name of every oplab cluster; List reports only
// kind clusters with it.
const Prefix = "oplab-"

// Budgets: kind's own wait for the control plane, and the wait after it
// for the default ServiceAccount.
const (
	readyTimeout          = 5 * time.Minute
	serviceAccountTimeout = 2 * time.Minute
)

// Options configure the provider.
type Options struct {
	// DataDir holds one directory per cluster under kind/, with its
	// kubeconfig.
	DataDir string
	// NodeImage is the node image of every cluster. When empty, each
	// create takes OfflineNodeImage if the engine has it, else
	// DefaultNodeImage.
	NodeImage string
	// ConfigPath, when set, names a kind cluster config (kind.x-k8s.io/
	// v1alpha4) that is the base of every cluster's config; the provider
	// sets the name, the node image and the API server's address on it.
	ConfigPath string
	// Engine is "docker" or "podman"; detected when empty.
	Engine string
	Logger *slog.Logger
	// Shared are directories of this machine that every node binds
	// read-only at the same path (oplab's programs and its build kit), for
	// the pods of a learner's build and controller (see Workshop).
	Shared []string
	// Budget bounds each node container (its memory, swap included, and
	// tasks; an equal CPU weight): package budget's share, kept by the
	// container engine. No bound when zero.
	Budget budget.Budget
}

// Provider is the kind backend.
type Provider struct {
	o      Options
	dir    string
	logger *slog.Logger

	mu  sync.Mutex
	eng *engine // detected on first use

	settleMu sync.Mutex // one Settle or Unsettle at a time (settle.go)
}

var (
	_ providers.Provider    = (*Provider)(nil)
	_ providers.ImageLoader = (*Provider)(nil)
)

// New returns the kind provider. It does not touch the engine: that is
// detected on the first operation, so a machine without Docker can still
// build and describe the provider.
func New(o Options) (*Provider, error) {
	if o.DataDir == "" {
		return nil, errors.New("kind provider needs a data directory")
	}
	data, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, err
	}
	switch o.Engine {
	case "", "docker", "podman":
	default:
		return nil, fmt.Errorf("unknown container engine %q: use docker or podman", o.Engine)
	}
	if o.ConfigPath != "" {
		if _, err := readBaseConfig(o.ConfigPath); err != nil {
			return nil, err
		}
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	o.Shared = slices.Clone(o.Shared)
	for i, d := range o.Shared {
		if o.Shared[i], err = filepath.Abs(d); err != nil {
			return nil, err
		}
	}
	return &Provider{o: o, dir: filepath.Join(data, Name), logger: logger}, nil
}

// Name is the backend's name: its Info's, its clusters' Status.Provider,
// its directory under the data directory, and what oplab's --provider and
// the store call it.
const Name = "kind"

// Info declares what kind clusters can do.
func (p *Provider) Info() providers.Info {
	return providers.Info{
		Name: Name,
		Capabilities: providers.Capabilities{
			RealContainers: true,
			LoadImages:     true,
			Disposable:     true,
			HostProcesses:  false,
			Builds:         true,
		},
	}
}

// validName is the same rule as the embedded provider's: short enough for
// kind's container names ("oplab-<name>-control-plane") and DNS labels.
var validName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w %q: use 1-40 lower-case letters, digits and '-', starting and ending with a letter or digit", providers.ErrInvalidName, name)
	}
	return nil
}

func kindName(name string) string { return Prefix + name }

func (p *Provider) clusterDir(name string) string { return filepath.Join(p.dir, name) }

func (p *Provider) kubeconfig(name string) string {
	return filepath.Join(p.clusterDir(name), "kubeconfig")
}

// KubeconfigPath returns the cluster's own kubeconfig, exporting it from
// kind again when the file is gone.
func (p *Provider) KubeconfigPath(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	path := p.kubeconfig(name)
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	e, err := p.engine(context.Background())
	if err != nil {
		return "", err
	}
	if ok, err := e.exists(name); err != nil {
		return "", err
	} else if !ok {
		return "", fmt.Errorf("%w: %q", providers.ErrNotFound, name)
	}
	if err := os.MkdirAll(p.clusterDir(name), 0o700); err != nil {
		return "", err
	}
	if err := e.kind.ExportKubeConfig(kindName(name), path, false); err != nil {
		return "", fmt.Errorf("export the kubeconfig of cluster %q: %w", name, err)
	}
	return path, nil
}

// Delete removes the cluster's node containers and its directory. A node
// that a frozen cgroup holds is thawed and removed again (see removeNodes);
// one that still cannot be removed fails Delete with ErrStuck, saying what
// holds it, and the cluster stays listed, with its kubeconfig.
func (p *Provider) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	e, err := p.engine(ctx)
	if err != nil {
		return err
	}
	ok, err := e.exists(name)
	if err != nil {
		return err
	}
	_, dirErr := os.Stat(p.clusterDir(name))
	if !ok && dirErr != nil {
		return fmt.Errorf("%w: %q", providers.ErrNotFound, name)
	}
	if ok {
		// Not kind's own Delete: it edits the kubeconfig before it removes
		// the nodes, so a removal that fails would leave a cluster running
		// without one. The nodes go first; kind keeps no other state.
		if err := p.removeNodes(ctx, e, name); err != nil {
			return fmt.Errorf("delete kind cluster %q: %w", kindName(name), err)
		}
		if still, err := e.exists(name); err != nil {
			return fmt.Errorf("delete kind cluster %q: %w", kindName(name), err)
		} else if still {
			return fmt.Errorf("delete kind cluster %q: its node containers were removed but kind still lists it", kindName(name))
		}
	}
	return os.RemoveAll(p.clusterDir(name))
}

// List reports every kind cluster named with Prefix.
func (p *Provider) List(ctx context.Context) ([]providers.Status, error) {
	e, err := p.engine(ctx)
	if err != nil {
		return nil, err
	}
	names, err := e.kind.List()
	if err != nil {
		return nil, fmt.Errorf("list kind clusters: %w", err)
	}
	var out []providers.Status
	for _, n := range names {
		name, ok := strings.CutPrefix(n, Prefix)
		if !ok || checkName(name) != nil {
			continue
		}
		st, err := p.Status(ctx, name)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
