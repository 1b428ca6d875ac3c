package app

import (
	"context"
	"io"
	"log/slog"
	"time"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/operator/thirdparty"
	"oplab.dev/oplab/internal/oplog"
)

// Views of clusters, for the cluster commands.
type (
	// ClusterStep is a step of a cluster's creation, as it starts and ends.
	ClusterStep = cluster.Step
	// ClusterStatus is a cluster as listed: state, server, components.
	ClusterStatus = cluster.Status
	// OperatorInstall is what installing the operator did.
	OperatorInstall = install.Result
)

// DefaultOperatorTimeout is how long an install or uninstall of the
// operator waits for it.
const DefaultOperatorTimeout = install.DefaultTimeout

// What a front end's configuration names, with the providers' own
// defaults, for its help.
type (
	// PodsHost says where the pods provider makes its cells.
	PodsHost = cluster.PodsHost
	// PodsReach is how oplab reaches the cells' API servers.
	PodsReach = cluster.PodsReach
)

// Names and defaults of the providers' settings.
const (
	// PodsReachService and PodsReachPortForward are the ways in.
	PodsReachService     = cluster.PodsReachService
	PodsReachPortForward = cluster.PodsReachPortForward
	// DefaultPodsImage and DefaultPodsNamespace are the pods provider's.
	DefaultPodsImage     = cluster.DefaultPodsImage
	DefaultPodsNamespace = cluster.DefaultPodsNamespace
	// PodsKubeconfigEnv and KindNodeImageEnv are the variables the
	// providers' errors tell a person to set.
	PodsKubeconfigEnv = cluster.PodsKubeconfigEnv
	KindNodeImageEnv  = cluster.KindNodeImageEnv
	// KindOfflineNodeImage is the node image `make images` builds.
	KindOfflineNodeImage = cluster.KindOfflineNodeImage
)

// Clusters is the application layer of the cluster and operator commands:
// clusters by name on one provider, without sessions, a store or a
// course.
type Clusters struct {
	p      *cluster.Provider
	binDir string
	log    *slog.Logger
}

// OpenClusters returns the cluster commands' layer on the provider c names.
func OpenClusters(c Config) (*Clusters, error) {
	p, err := NewProvider(c)
	if err != nil {
		return nil, err
	}
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Clusters{p: p, binDir: c.BinDir, log: log}, nil
}

// Provider names the provider.
func (c *Clusters) Provider() string { return c.p.Info().Name }

// Contained reports whether new clusters are contained, and why not.
func (c *Clusters) Contained() (bool, error) { return c.p.Contained() }

// Create makes cluster name and waits until it is usable; apiPort picks
// its API server's port (0: a free one); progress, when set, hears each
// step.
func (c *Clusters) Create(ctx context.Context, name string, apiPort int, progress func(ClusterStep)) error {
	var opts []cluster.CreateOption
	if progress != nil {
		opts = append(opts, cluster.CreateWithProgress(progress))
	}
	if apiPort != 0 {
		opts = append(opts, cluster.CreateWithAPIServerPort(apiPort))
	}
	return c.p.Create(ctx, name, opts...)
}

// List lists the provider's clusters.
func (c *Clusters) List(ctx context.Context) ([]ClusterStatus, error) { return c.p.List(ctx) }

// Delete deletes cluster name.
func (c *Clusters) Delete(ctx context.Context, name string) error { return c.p.Delete(ctx, name) }

// KubeconfigPath returns where cluster name's admin kubeconfig is.
func (c *Clusters) KubeconfigPath(name string) (string, error) { return c.p.KubeconfigPath(name) }

// ReferenceOperator is how the operator commands name the reference
// operator; the others are package thirdparty's (postgres-operator,
// redis-operator).
const ReferenceOperator = "pg-operator"

// installer returns the installer of operator ("" or ReferenceOperator:
// the reference one) into cluster name.
func (c *Clusters) installer(name, operator string, timeout time.Duration) (*install.Installer, error) {
	if operator == "" || operator == ReferenceOperator {
		return install.ForCluster(c.p, name, c.binDir, install.Options{Logger: c.log, Timeout: timeout})
	}
	o, err := thirdparty.Find(operator)
	if err != nil {
		return nil, err
	}
	return o.Installer(c.p, name, c.binDir, timeout, c.log)
}

// release names where operator runs.
func release(operator string) (install.Release, error) {
	if operator == "" || operator == ReferenceOperator {
		return install.Reference, nil
	}
	o, err := thirdparty.Find(operator)
	return o.Release, err
}

// InstallOperator installs operator (the reference one when "") into
// cluster name, or upgrades it, and waits until it is ready.
func (c *Clusters) InstallOperator(ctx context.Context, name, operator string, timeout time.Duration) (*OperatorInstall, error) {
	in, err := c.installer(name, operator, timeout)
	if err != nil {
		return nil, err
	}
	return in.Install(ctx)
}

// UninstallOperator removes operator from cluster name.
func (c *Clusters) UninstallOperator(ctx context.Context, name, operator string, timeout time.Duration) error {
	in, err := c.installer(name, operator, timeout)
	if err != nil {
		return err
	}
	return in.Uninstall(ctx)
}

// OperatorLog copies operator's log in cluster name to w (its pod's
// log); with follow it goes on until ctx ends.
func (c *Clusters) OperatorLog(ctx context.Context, name, operator string, w io.Writer, follow bool) error {
	rel, err := release(operator)
	if err != nil {
		return err
	}
	cfg, err := c.p.RESTConfig(name)
	if err != nil {
		return err
	}
	return install.PodLog{Config: cfg, Release: rel}.Lines(ctx, follow, func(l oplog.Line) error {
		_, err := io.WriteString(w, l.Text+"\n")
		return err
	})
}

// OperatorNames are the operators the operator commands install: the
// reference one first, then the course's third-party ones (on kind).
func OperatorNames() []string {
	names := []string{ReferenceOperator}
	for _, o := range thirdparty.All {
		names = append(names, o.Name)
	}
	return names
}
