package install

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"slices"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/client-go/rest"

	"oplab.dev/oplab/charts"
)

// Options tune an Installer. The zero value installs the embedded chart with
// its default values and waits up to DefaultTimeout.
type Options struct {
	// Values override the chart's values.yaml.
	Values map[string]any
	// Chart is the chart to install; charts.PGOperator() by default.
	Chart fs.FS
	// Release is where the chart goes; Reference, the reference
	// operator's, by default.
	Release Release
	// Timeout bounds each install, upgrade or uninstall including the wait
	// for the operator to be ready.
	Timeout time.Duration
	// Logger receives progress and helm's debug messages; discarded by
	// default.
	Logger *slog.Logger
	// Host, when set, runs the operator as a host process (see Host).
	Host *Host
	// Cell, when set, says the operator runs in the cluster's cell (see
	// Cell).
	Cell *Cell
	// Images, when set, are what Preload copies into the nodes instead of
	// the reference operator's and PostgreSQL's: a third-party operator's
	// and its data plane's.
	Images []string
	// Preload, when set, runs first in every Install: ForCluster sets it on
	// providers that load images into their nodes (kind), to copy the
	// operator's and PostgreSQL's images there from the local engine.
	Preload func(ctx context.Context) error
}

// DefaultTimeout bounds an install when Options.Timeout is zero.
const DefaultTimeout = 3 * time.Minute

// Installer installs, upgrades and uninstalls the operator in one cluster.
type Installer struct {
	cfg  *rest.Config
	opts Options
	rel  Release
	log  *slog.Logger
}

// New returns an Installer for the cluster that cfg reaches with admin
// rights.
func New(cfg *rest.Config, opts Options) *Installer {
	if opts.Chart == nil {
		opts.Chart = charts.PGOperator()
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Installer{cfg: rest.CopyConfig(cfg), opts: opts, rel: opts.Release.orReference(), log: log}
}

// Result describes a finished install or upgrade.
type Result struct {
	// Revision is the helm release's revision; 1 after a first install.
	Revision int
	// Upgraded is true when an existing release was upgraded.
	Upgraded bool
	// Host describes the operator's host process, when it runs as one.
	Host *HostStatus
}

// Install installs the chart, or upgrades the release when it exists, and
// returns once the operator is ready: its Deployment has rolled out and is
// available and, in host mode, the process answers its readiness probe;
// and once a PostgresCluster can be created without the API server holding
// it back (see crdCreateDelay).
func (in *Installer) Install(ctx context.Context) (*Result, error) {
	ctx, cancel := context.WithTimeout(ctx, in.opts.Timeout)
	defer cancel()
	c, err := LoadChart(in.opts.Chart)
	if err != nil {
		return nil, err
	}
	if in.opts.Preload != nil {
		if err := in.opts.Preload(ctx); err != nil {
			return nil, fmt.Errorf("load the operator's images: %w", err)
		}
	}
	established, err := in.applyCRDs(ctx, c)
	if err != nil {
		return nil, err
	}
	cfg, err := in.helm()
	if err != nil {
		return nil, err
	}
	rel, upgraded, err := in.installOrUpgrade(ctx, cfg, c)
	if err != nil {
		return nil, err
	}
	res := &Result{Revision: rel.Version, Upgraded: upgraded}
	// In host mode the process follows the pod, so the rollout comes first:
	// then only the new pod is left to follow.
	if err := in.waitDeployment(ctx); err != nil {
		return nil, err
	}
	if in.opts.Host != nil {
		hs, err := in.startHost(ctx, rel)
		if err != nil {
			return nil, err
		}
		res.Host = hs
	}
	if in.opts.Cell != nil {
		if err := in.waitCell(ctx); err != nil {
			return nil, err
		}
	}
	if err := waitCreatable(ctx, established); err != nil {
		return nil, err
	}
	in.log.Info("operator ready", "release", in.rel.Name, "revision", rel.Version, "upgraded", upgraded)
	return res, nil
}

func (in *Installer) helm() (*action.Configuration, error) {
	getter, err := newRESTGetter(in.cfg, in.rel.Namespace)
	if err != nil {
		return nil, fmt.Errorf("helm client: %w", err)
	}
	cfg := new(action.Configuration)
	logf := func(format string, v ...any) { in.log.Debug(fmt.Sprintf(format, v...), "component", "helm") }
	if err := cfg.Init(getter, in.rel.Namespace, "secret", logf); err != nil {
		return nil, fmt.Errorf("helm client: %w", err)
	}
	return cfg, nil
}

// lastRelease returns the newest revision of release name, or nil.
func lastRelease(cfg *action.Configuration, name string) (*release.Release, error) {
	hist, err := action.NewHistory(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) || err == nil && len(hist) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read release history: %w", err)
	}
	return slices.MaxFunc(hist, func(a, b *release.Release) int { return a.Version - b.Version }), nil
}

// installOrUpgrade installs the chart, or upgrades the release to it.
//
// Neither validates the manifest against the cluster's OpenAPI documents
// first (helm's DisableOpenAPIValidation): that check reads the OpenAPI v3
// document of every group version the chart writes, the whole core v1 one
// among them, which the learner's API server builds and keeps for the
// rest of its life and this process decodes, on every start. The API
// server still refuses an object it cannot decode; the charts oplab
// installs are its own or pinned, and tested as they are.
func (in *Installer) installOrUpgrade(ctx context.Context, cfg *action.Configuration, c *chart.Chart) (*release.Release, bool, error) {
	last, err := lastRelease(cfg, in.rel.Name)
	if err != nil {
		return nil, false, err
	}
	vals := maps.Clone(in.opts.Values)
	if last != nil && last.Info.Status.IsPending() {
		// An install or upgrade was interrupted (oplab was killed): helm
		// refuses to go on while the release looks busy.
		in.log.Info("release left pending by an interrupted run; marking it failed", "status", last.Info.Status)
		last.SetStatus(release.StatusFailed, "interrupted; superseded by oplab operator install")
		if err := cfg.Releases.Update(last); err != nil {
			return nil, false, fmt.Errorf("recover pending release: %w", err)
		}
		if last.Version == 1 {
			if _, err := in.uninstallRelease(cfg); err != nil {
				return nil, false, err
			}
			last = nil
		}
	}
	deadline, _ := ctx.Deadline()
	timeout := time.Until(deadline)
	if last == nil {
		in.log.Info("installing chart", "chart", c.Name(), "version", c.Metadata.Version, "namespace", in.rel.Namespace)
		i := action.NewInstall(cfg)
		i.ReleaseName = in.rel.Name
		i.Namespace = in.rel.Namespace
		i.CreateNamespace = true
		i.SkipCRDs = true                 // applied by applyCRDs, which also upgrades them
		i.DisableOpenAPIValidation = true // see above
		// Not helm's wait, which polls every 2 s: waitDeployment polls
		// faster.
		i.Wait = false
		i.Timeout = timeout
		rel, err := i.RunWithContext(ctx, c, vals)
		if err != nil {
			return nil, false, fmt.Errorf("install chart %s: %w", c.Name(), err)
		}
		return rel, false, nil
	}
	in.log.Info("upgrading release", "from", last.Version, "chart", c.Name(), "version", c.Metadata.Version)
	u := action.NewUpgrade(cfg)
	u.Namespace = in.rel.Namespace
	u.SkipCRDs = true
	u.DisableOpenAPIValidation = true
	u.Wait = false // see Install
	u.Timeout = timeout
	u.ResetValues = true // the values are exactly Options.Values over the chart's
	u.MaxHistory = 5
	rel, err := u.RunWithContext(ctx, in.rel.Name, c, vals)
	if err != nil {
		return nil, false, fmt.Errorf("upgrade release %s: %w", in.rel.Name, err)
	}
	return rel, true, nil
}

// Uninstall stops the operator, removes the release and the namespace, and
// returns once the namespace is gone. The CRD and every PostgresCluster are
// kept, as helm keeps a chart's CRDs. Uninstalling what is not installed is
// not an error.
func (in *Installer) Uninstall(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, in.opts.Timeout)
	defer cancel()
	if in.opts.Host != nil {
		if err := in.stopHost(ctx); err != nil {
			return err
		}
	}
	if in.opts.Cell != nil {
		// The pod goes with the release, and the operator with the pod.
		if err := in.deleteClusterLogs(ctx); err != nil {
			return err
		}
	}
	cfg, err := in.helm()
	if err != nil {
		return err
	}
	if _, err := in.uninstallRelease(cfg); err != nil {
		return err
	}
	if !in.rel.OwnsNamespace {
		return nil
	}
	return in.deleteNamespace(ctx)
}

func (in *Installer) uninstallRelease(cfg *action.Configuration) (bool, error) {
	u := action.NewUninstall(cfg)
	u.Wait = false // Uninstall waits for the namespace, and so for its objects
	u.Timeout = in.opts.Timeout
	u.IgnoreNotFound = true
	res, err := u.Run(in.rel.Name)
	if err != nil {
		return false, fmt.Errorf("uninstall release %s: %w", in.rel.Name, err)
	}
	return res != nil && res.Release != nil, nil
}
