package embedded

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// Options configure the provider.
type Options struct {
	// BinDir holds the control-plane binaries built by `make controlplane`.
	BinDir string
	// DataDir holds one directory per cluster under clusters/.
	DataDir string
	// CacheDir holds what Create makes once and reuses (cluster seeds);
	// by default oplab/ in the user's cache directory (os.UserCacheDir), or
	// cache/ in DataDir when there is none.
	CacheDir string
	Logger   *slog.Logger
	// Confine says whether clusters run in cells; ConfineAuto by default.
	Confine Confinement
	// Budget is what each cell may take of the machine (package budget);
	// budget.Default when zero.
	Budget budget.Budget
	// Profiling makes new clusters serve profiles (see withProfiling).
	Profiling bool
}

// Provider is the embedded backend.
type Provider struct {
	binDir   string
	dataDir  string
	cacheDir string
	logger   *slog.Logger
	reaper   *reaper
	tune     tuning
	// confined: new clusters run in cells; cellErr says why they do not,
	// or why their cells have no budget (tree nil).
	confined bool
	cellErr  error
	// sandbox is bubblewrap, which every new cell binds so that a
	// learner's program runs confined inside it (Confine).
	sandbox string
	// tree makes the cells' control groups; budget is each one's.
	tree   *budget.Tree
	budget budget.Budget
}

var (
	_ providers.Provider          = (*Provider)(nil)
	_ providers.HostProcessRunner = (*Provider)(nil)
)

// Binaries the provider runs, all from BinDir.
var binaries = []string{etcdBinary, controlPlaneBinary}

// Start-up budgets per component. Generous: a loaded 2-core machine starts
// the API server in about 2 s.
const (
	etcdTimeout      = 30 * time.Second
	apiserverTimeout = 90 * time.Second
	componentTimeout = 60 * time.Second
)

// New returns the embedded provider.
func New(o Options) (*Provider, error) {
	if o.BinDir == "" || o.DataDir == "" {
		return nil, errors.New("embedded provider needs a bin directory and a data directory")
	}
	bin, err := filepath.Abs(o.BinDir)
	if err != nil {
		return nil, err
	}
	data, err := filepath.Abs(o.DataDir)
	if err != nil {
		return nil, err
	}
	cache := o.CacheDir
	if cache == "" {
		if user, err := os.UserCacheDir(); err == nil {
			cache = filepath.Join(user, "oplab")
		} else {
			cache = filepath.Join(data, "cache") // no $HOME: kept per data directory
		}
	}
	if cache, err = filepath.Abs(cache); err != nil {
		return nil, err
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Provider{binDir: bin, dataDir: data, cacheDir: cache, logger: logger, reaper: newReaper(), tune: withProfiling(defaultTuning(), o.Profiling), budget: o.Budget}
	p.budget = p.budget.WithDefaults()
	if err := p.budget.Validate(); err != nil {
		return nil, err
	}
	if err := p.setupConfinement(o.Confine); err != nil {
		return nil, err
	}
	return p, nil
}

// Name is the backend's name: its Info's, its clusters' Status.Provider,
// and what oplab's --provider and the store call it.
const Name = "embedded"

// Info declares what embedded clusters can do.
func (p *Provider) Info() providers.Info {
	return providers.Info{
		Name: Name,
		Capabilities: providers.Capabilities{
			RealContainers: false,
			LoadImages:     false,
			Disposable:     true,
			HostProcesses:  true,
			Builds:         true,
			Sleeps:         p.tree != nil,
		},
	}
}

func (p *Provider) clusterDir(name string) string {
	return filepath.Join(p.dataDir, "clusters", name)
}

// KubeconfigPath returns the admin kubeconfig of the cluster.
func (p *Provider) KubeconfigPath(name string) (string, error) {
	if err := checkName(name); err != nil {
		return "", err
	}
	l := layout{p.clusterDir(name)}
	if _, err := os.Stat(filepath.Join(l.dir, stateFile)); err != nil {
		return "", fmt.Errorf("%w: %q", providers.ErrNotFound, name)
	}
	return l.kubeconfig(), nil
}

// checkBinaries fails, naming the first missing one, before anything is made.
func (p *Provider) checkBinaries() error {
	need := binaries
	if p.confined {
		need = append(slices.Clone(need), cellBinary)
	}
	for _, b := range need {
		path := filepath.Join(p.binDir, b)
		fi, err := os.Stat(path)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("binary %s is missing or not executable: run `make controlplane build`", path)
		}
	}
	return nil
}

// env is the whole environment of a cluster process: nothing of oplab's own
// environment (and its secrets) is passed on.
func (p *Provider) env(dir string, extra []string) []string {
	return append([]string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, markerVar + "=" + dir}, extra...)
}

// Create makes a cluster; see providers.Provider.
func (p *Provider) Create(ctx context.Context, name string, opts providers.CreateOptions) error {
	if err := checkName(name); err != nil {
		return err
	}
	if err := p.checkBinaries(); err != nil {
		return err
	}
	// Another process may bind one of the free ports before the component
	// does; the cluster is then removed and made again on other ports.
	const attempts = 3
	for i := 1; ; i++ {
		err := p.create(ctx, name, opts)
		if !errors.Is(err, errPortTaken) || opts.APIServerPort != 0 || i == attempts {
			return err
		}
		p.logger.Info("a port was taken during start-up, retrying on other ports", "cluster", name, "attempt", i)
	}
}

func (p *Provider) create(ctx context.Context, name string, opts providers.CreateOptions) (err error) {
	pt, err := p.newPorts(opts.APIServerPort)
	if err != nil {
		return err
	}
	dir := p.clusterDir(name)
	if err := os.MkdirAll(filepath.Dir(dir), 0o700); err != nil {
		return err
	}
	if _, err := p.removeAbandoned(ctx, name); err != nil {
		return err
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%w: %q (delete it first, or choose another name)", providers.ErrAlreadyExists, name)
		}
		return err
	}
	// Held until Create returns, after the clean-up of a failure: while it
	// is held, the cluster is being created; once its holder is gone and
	// the cluster is not ready, it was abandoned.
	release, err := holdCreating(dir)
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	defer release()
	b := p.budget
	st := &clusterState{Name: name, Created: time.Now().UTC(), Ports: pt, Budget: &b}
	defer func() {
		if err != nil {
			p.logger.Info("create failed, removing the cluster", "cluster", name, "error", err)
			if cerr := p.teardown(context.WithoutCancel(ctx), dir, st); cerr != nil {
				err = errors.Join(err, fmt.Errorf("clean up: %w", cerr))
			}
		}
	}()
	c := &creation{p: p, st: st, l: layout{dir}, progress: opts.Progress, unsettled: opts.Unsettled}
	return c.run(ctx)
}

// creation is one run of Create.
type creation struct {
	p        *Provider
	st       *clusterState
	l        layout
	progress func(providers.Step)
	pki      *pki
	// unsettled leaves a new cluster without its CPU cap (Settle).
	unsettled bool
}

func (c *creation) step(name string, fn func() error) error {
	if c.progress != nil {
		c.progress(providers.Step{Name: name})
	}
	start := time.Now()
	err := fn()
	if c.progress != nil {
		c.progress(providers.Step{Name: name, Done: true, Err: err, Duration: time.Since(start)})
	}
	return err
}

func (c *creation) run(ctx context.Context) error {
	if err := c.step("Preparing certificates and configuration", c.prepare); err != nil {
		return err
	}
	seed, err := c.seed(ctx)
	if err != nil {
		return err
	}
	return c.startProcesses(ctx, seed)
}

// startProcesses starts the cluster's cell (when confined), etcd and
// kube-controlplane, and waits until the cluster is usable. A new cluster
// (seed set) gets its etcd data from the seed and its node made; a cluster
// started again (seed empty) has both already.
func (c *creation) startProcesses(ctx context.Context, seed string) error {
	l, st := c.l, c.st
	hc, err := healthClient(c.pki)
	if err != nil {
		return err
	}
	defer hc.CloseIdleConnections()
	etcd, cp := processes(l, c.pki, st.Ports, st.Name, c.p.tune, c.p.budgetOf(st).Etcd)
	if seed != "" {
		// The seed's bootstrap RBAC policy is the binary's own, untouched:
		// the API server need not read it all again to be sure.
		cp.env = append(slices.Clone(cp.env), "KUBE_CONTROLPLANE_SEEDED=1")
	}
	if c.p.confined {
		if err := c.step("Making the cluster's cell", func() error { return c.startCell(ctx) }); err != nil {
			return err
		}
	}
	if err := c.step("Starting etcd", func() error {
		if seed != "" {
			if err := copyTree(seed, l.etcdDir()); err != nil {
				return fmt.Errorf("copy the cluster seed: %w", err)
			}
		}
		recs, err := c.start(etcd)
		if err != nil {
			return err
		}
		return c.wait(ctx, hc, etcdTimeout, recs...)
	}); err != nil {
		return err
	}
	// kube-controlplane starts the API server first and its clients once
	// the API server is ready.
	var cpRecs []processRecord
	if err := c.step("Starting kube-apiserver", func() error {
		if cpRecs, err = c.start(cp); err != nil {
			return err
		}
		return c.wait(ctx, hc, apiserverTimeout, cpRecs[0])
	}); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", l.kubeconfig())
	if err != nil {
		return err
	}
	// client-go's default of 5 requests a second would space the polls
	// below 200 ms apart.
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	if seed != "" {
		if err := c.step("Creating the node", func() error {
			if err := fixKubernetesService(ctx, cs, st.Ports.APIServer); err != nil {
				return err
			}
			return createNode(ctx, cs)
		}); err != nil {
			return err
		}
	}
	if err := c.step("Starting kube-controller-manager, kube-scheduler and kwok", func() error {
		return c.wait(ctx, hc, componentTimeout, cpRecs[1:]...)
	}); err != nil {
		return err
	}
	if err := c.step("Waiting for the node to be Ready", func() error {
		return waitUsable(ctx, cs, componentTimeout)
	}); err != nil {
		return err
	}
	// Made, and from now on held to its share of the CPU, unless a new
	// cluster's maker has work of its own to do first (Settle). A cluster
	// started again has none.
	st.Unsettled = c.unsettled && seed != "" && st.Cell.group() != nil
	if g := st.Cell.group(); g != nil && !st.Unsettled {
		if err := g.SetCPU(c.p.budgetOf(st).CPU); err != nil {
			return fmt.Errorf("cap the cell's CPU: %w", err)
		}
	}
	st.Ready = true
	return writeState(l.dir, st)
}

// prepare writes the PKI, kubeconfigs, KWOK's configuration and the first
// state record.
func (c *creation) prepare() error {
	l, st := c.l, c.st
	if err := os.MkdirAll(l.logDir(), 0o700); err != nil {
		return err
	}
	p, err := newPKI(l.pkiDir())
	if err != nil {
		return err
	}
	c.pki = p
	server := url(st.Ports.APIServer, "")
	if err := writeKubeconfig(l.kubeconfig(), st.Name, server, p, adminName); err != nil {
		return err
	}
	for _, n := range []string{cmName, schedName, kwokName} {
		if err := writeKubeconfig(l.componentConfig(n), st.Name, server, p, n); err != nil {
			return err
		}
	}
	if err := os.WriteFile(l.kwokConfig(), kwokStages, 0o600); err != nil {
		return err
	}
	return writeState(l.dir, st)
}

// start starts proc and records one process record per member, written
// as soon as the PID exists, so an interrupted Create leaves nothing that
// cannot be stopped.
func (c *creation) start(proc process) ([]processRecord, error) {
	log := c.l.log(proc.binary)
	path, args, err := c.p.command(c.st, c.l.dir, proc.binary, filepath.Join(c.p.binDir, proc.binary), proc.args)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", proc.binary, err)
	}
	pid, err := c.p.reaper.start(path, args, c.p.env(c.l.dir, proc.env), c.l.dir, log, 0)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", proc.binary, err)
	}
	recs := make([]processRecord, 0, len(proc.members))
	for _, m := range proc.members {
		rec := processRecord{Name: m.name, Process: proc.binary, PID: pid, Log: log, Health: m.health}
		recs = append(recs, rec)
		c.st.Processes = append(c.st.Processes, rec)
	}
	return recs, writeState(c.l.dir, c.st)
}

// wait waits until every one of recs is healthy.
func (c *creation) wait(ctx context.Context, hc *http.Client, timeout time.Duration, recs ...processRecord) error {
	errs := make([]error, len(recs))
	var wg sync.WaitGroup
	for i, rec := range recs {
		wg.Go(func() { errs[i] = waitHealthy(ctx, hc, rec, c.l.dir, timeout, c.p.reaper) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Delete stops the cluster's processes, removes the volumes the host-path
// provisioner made for it, and removes its directory.
func (p *Provider) Delete(ctx context.Context, name string) error {
	if err := checkName(name); err != nil {
		return err
	}
	dir := p.clusterDir(name)
	unlock, err := lockDir(dir)
	if err != nil {
		if isNotExist(err) {
			return fmt.Errorf("%w: %q", providers.ErrNotFound, name)
		}
		return err
	}
	defer unlock()
	st, err := readState(dir)
	if err != nil {
		if isNotExist(err) {
			if !creatorAlive(dir) && p.stopMarked(dir) == nil && os.RemoveAll(dir) == nil {
				// A Create killed before it wrote the state left the
				// directory: nothing else can remove it.
				p.logger.Info("removed the directory of an interrupted create", "cluster", name)
			}
			return fmt.Errorf("%w: %q", providers.ErrNotFound, name)
		}
		return err
	}
	return p.teardown(ctx, dir, st)
}

// teardown stops every process in reverse start order — the API server
// before etcd, so it does not spend a minute retrying a vanished etcd, and
// the cell last — and removes dir. A cluster without a cell had its volume
// directories made on the host's /tmp: they are removed first, while the
// API server still answers. A cell's volumes are in its own /tmp, in dir.
func (p *Provider) teardown(ctx context.Context, dir string, st *clusterState) error {
	if st.Cell == nil {
		p.removeVolumeDirs(ctx, layout{dir})
	}
	if err := p.stopProcesses(st, dir); err != nil {
		// Keep the state so the cluster can still be found and stopped.
		return err
	}
	if err := p.stopMarked(dir); err != nil {
		return err
	}
	if g := st.Cell.group(); g != nil {
		if err := g.Delete(); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	p.logger.Info("cluster deleted", "cluster", st.Name)
	return nil
}

// stopProcesses stops the processes of st, marked with dir, in reverse
// start order, each once.
func (p *Provider) stopProcesses(st *clusterState, dir string) error {
	if err := thawed(st); err != nil {
		return err
	}
	var errs []error
	stopped := map[int]bool{}
	for i := len(st.Processes) - 1; i >= 0; i-- {
		rec := st.Processes[i]
		if stopped[rec.PID] {
			continue // another component of the same process
		}
		stopped[rec.PID] = true
		if err := p.reaper.stop(rec.PID, dir, stopGrace); err != nil {
			errs = append(errs, fmt.Errorf("stop %s: %w", rec.process(), err))
		}
	}
	return errors.Join(errs...)
}

// removeVolumeDirs deletes the host directories of the cluster's
// PersistentVolumes. It is best effort: without an API server the
// directories cannot be told apart from other clusters'.
func (p *Provider) removeVolumeDirs(ctx context.Context, l layout) {
	cfg, err := clientcmd.BuildConfigFromFlags("", l.kubeconfig())
	if err != nil {
		return
	}
	cfg.Timeout = 3 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return
	}
	dirs, err := hostPathDirs(ctx, cs)
	if err != nil {
		p.logger.Info("volume directories not removed: API server unreachable", "dir", l.dir, "error", err)
		return
	}
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			p.logger.Warn("remove volume directory", "path", d, "error", err)
		}
	}
}

// List reports every cluster under the data directory, by name.
func (p *Provider) List(ctx context.Context) ([]providers.Status, error) {
	entries, err := os.ReadDir(filepath.Join(p.dataDir, "clusters"))
	if err != nil {
		if isNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []providers.Status
	for _, e := range entries {
		if !e.IsDir() || checkName(e.Name()) != nil {
			continue
		}
		s, err := p.Status(ctx, e.Name())
		if errors.Is(err, providers.ErrNotFound) {
			continue // not a cluster directory, or deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		if s.State == providers.StateAbandoned {
			// Nothing can finish or use it: remove it, as the Create that
			// was killed would have on failure.
			if removed, err := p.removeAbandoned(ctx, s.Name); err != nil {
				return nil, err
			} else if removed {
				continue
			}
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Status checks every process of the cluster: alive, and answering its
// health endpoint.
func (p *Provider) Status(ctx context.Context, name string) (providers.Status, error) {
	if err := checkName(name); err != nil {
		return providers.Status{}, err
	}
	l := layout{p.clusterDir(name)}
	st, err := readState(l.dir)
	if err != nil {
		if isNotExist(err) {
			return providers.Status{}, fmt.Errorf("%w: %q", providers.ErrNotFound, name)
		}
		return providers.Status{}, err
	}
	s := providers.Status{
		Name:       name,
		Provider:   Name,
		Server:     url(st.Ports.APIServer, ""),
		Kubeconfig: l.kubeconfig(),
		Created:    st.Created,
		Components: make([]providers.ComponentStatus, len(st.Processes)),
	}
	hc, hcErr := healthClient(&pki{dir: l.pkiDir()})
	if hcErr == nil {
		defer hc.CloseIdleConnections()
	}
	var wg sync.WaitGroup
	for i, rec := range st.Processes {
		wg.Go(func() {
			cs := providers.ComponentStatus{Name: rec.Name, Process: cmp.Or(rec.Process, rec.Name), PID: rec.PID, Log: rec.Log}
			cs.Alive = p.reaper.alive(rec.PID, l.dir)
			if st.Cell != nil && cs.Alive {
				// The record is the nsenter (or bwrap) that runs the
				// program in the cell; callers measure the program.
				cs.PID = leaf(rec.PID)
			}
			switch {
			case !cs.Alive:
				cs.Detail = "not running"
			case rec.Health == "":
				cs.Healthy = true
			case hcErr != nil:
				cs.Detail = hcErr.Error()
			default:
				pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				defer cancel()
				if err := probe(pctx, hc, rec.Health); err != nil {
					cs.Detail = err.Error()
				} else {
					cs.Healthy = true
				}
			}
			s.Components[i] = cs
		})
	}
	wg.Wait()
	s.State = overall(st, s.Components)
	if abandoned(l.dir, st) {
		s.State = providers.StateAbandoned
	}
	return s, nil
}

// overall folds component health into the cluster's state.
func overall(st *clusterState, comps []providers.ComponentStatus) providers.State {
	var alive, healthy int
	for _, c := range comps {
		if c.Alive {
			alive++
		}
		if c.Healthy {
			healthy++
		}
	}
	switch {
	case alive == 0:
		return providers.StateStopped
	case !st.Ready:
		return providers.StateCreating
	case healthy == len(comps):
		return providers.StateRunning
	default:
		return providers.StateDegraded
	}
}
