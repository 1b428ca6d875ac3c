package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/klog/v2"

	"oplab.dev/oplab/internal/budget"
	"oplab.dev/oplab/internal/class"
	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/course"
	"oplab.dev/oplab/internal/keyrate"
	"oplab.dev/oplab/internal/room"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/store"
)

// LocalLearner is the learner of a single-user oplab: the person at this
// machine, whether at the terminal or in the browser of a server on
// 127.0.0.1, so that both front ends act on the same sessions.
const LocalLearner = "local"

// Provider names.
const (
	// Embedded runs a real control plane per cluster as local processes.
	Embedded = cluster.ProviderEmbedded
	// Kind runs a kind cluster per session in Docker or Podman.
	Kind = cluster.ProviderKind
	// Pods runs each cluster as a pod of a host Kubernetes cluster.
	Pods = cluster.ProviderPods
)

// DefaultRecoverAfter is how long a session may show no progress while
// provisioning before Recover records it as failed: longer than any
// step of a start takes.
const DefaultRecoverAfter = 5 * time.Minute

// Config says where oplab's files are and what to build.
type Config struct {
	// DataDir holds the store (oplab.db), the clusters and the session
	// locks; required.
	DataDir string
	// BinDir holds the control-plane binaries, pg-operator and hostpod.
	BinDir string
	// Provider names the cluster provider; Embedded when empty.
	Provider string
	// KindNodeImage is the kind provider's node image, and KindConfig its
	// base kind config; see cluster.KindOptions.
	KindNodeImage, KindConfig string
	// Pods says where the pods provider makes its cells.
	Pods PodsHost
	// Profiling makes new clusters and their operators serve profiles
	// (embedded; see cluster.ProviderWithProfiling).
	Profiling bool
	// Store is a postgres:// URL of a PostgreSQL database that several
	// oplab servers can share; when empty, the SQLite file in DataDir.
	Store string
	// Course is the course to run; the one built into oplab when its
	// folders are nil.
	Course course.Sources
	// CheckTimeout caps a goal check's time budget in a session's Check;
	// session.DefaultCheckTimeout when zero.
	CheckTimeout time.Duration
	// Admission says when the machine has room for one more cluster.
	Admission Admission
	// BuildBursts is how many learners' builds of their controller may run
	// beyond their cell's CPU cap at once (session.Options.BuildBursts):
	// session.DefaultBuildBursts when zero, none when negative.
	BuildBursts int
	// Budget is each new cluster's share of the machine (package budget):
	// its cell's memory ceiling, task bound and etcd quota; fields left
	// zero take the provider's defaults. See ParseBudget.
	Budget budget.Budget
	// Logger receives debug messages; discarded when nil.
	Logger *slog.Logger
}

// App is oplab's application layer, composed once.
type App struct {
	// course is the course, loaded and validated once.
	course *course.Course
	// sessions runs learners' sessions.
	sessions *session.Manager
	// clusters is the cluster provider new sessions' clusters are made on.
	clusters *cluster.Provider
	// classes runs instructors, classes and the learners who join them.
	classes *class.Service

	store *store.DB
	gate  *room.Gate
	// formats bounds each session's gofmt requests (Format).
	formats *keyrate.Limiter
	dataDir string
	log     *slog.Logger
	cfg     Config

	mu        sync.Mutex
	providers map[string]*cluster.Provider // by name, besides Clusters
	// watched says whether a page follows a session (the serving
	// Runtime's), so that making room never stops one being looked at.
	watched atomic.Pointer[func(id string) bool]
}

// Open builds the application layer from c.
func Open(ctx context.Context, c Config) (*App, error) {
	if c.DataDir == "" {
		return nil, errors.New("open oplab: no data directory")
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	// client-go logs through klog, to stderr by default: a watch that ends
	// because a session's cluster was deleted would print warnings between
	// the lines of a command or the server. Its messages go where oplab's
	// own go (klog is the process's, so the last Open sets it).
	klog.SetSlogLogger(c.Logger)
	src := c.Course
	if src.Labs == nil && src.Content == nil && src.Quizzes == nil {
		src = course.Embedded()
	}
	crs, err := course.Load(src)
	if err != nil {
		return nil, err
	}
	p, err := NewProvider(c)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, c)
	if err != nil {
		return nil, err
	}
	a := &App{course: crs, clusters: p, store: st, dataDir: c.DataDir, log: c.Logger, cfg: c, providers: map[string]*cluster.Provider{},
		formats: keyrate.New(FormatPerSecond, FormatBurst, 1024)}
	m, err := session.New(session.Options{
		Store: st, Provider: p, ProviderNamed: a.providerNamed, Course: crs, BinDir: c.BinDir, CheckTimeout: c.CheckTimeout, Logger: c.Logger,
		BuildBursts: c.BuildBursts,
		// Two oplab processes (a server and a command in a terminal, or
		// two terminals) take turns on a session.
		LockDir: filepath.Join(c.DataDir, "locks"),
		// The operator's log lives in the cluster: keep it for the debrief.
		BeforeDelete: a.keepOperatorLog,
		// A wake from disk starts a cluster: it waits its turn with the
		// starts (a.gate is set below, before any call).
		WakeAdmit: func(ctx context.Context, progress session.Progress) (func(bool), error) {
			return a.admitWait(ctx, progress)
		},
	})
	if err != nil {
		st.Close()
		return nil, err
	}
	classes, err := class.New(class.Options{Store: st, Labs: src.Labs, Logger: c.Logger})
	if err != nil {
		st.Close()
		return nil, err
	}
	a.sessions, a.classes = m, classes
	if a.gate, err = newGate(c, p, a.liveClusters, a.makeRoom); err != nil {
		st.Close()
		return nil, err
	}
	return a, nil
}

// NewProvider returns the cluster provider c names, without the rest of
// the App (the cluster commands need no store and no course).
func NewProvider(c Config) (*cluster.Provider, error) {
	log := c.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	name := c.Provider
	if name == "" {
		name = Embedded
	}
	return cluster.NewProvider(cluster.ProviderWithLogger(log), cluster.ProviderWithBudget(c.Budget), cluster.ProviderByName(name, cluster.Options{
		BinDir: c.BinDir, DataDir: c.DataDir,
		KindNodeImage: c.KindNodeImage, KindConfig: c.KindConfig,
		Pods: c.Pods, Profiling: c.Profiling,
	}))
}

// Defaults of a cell's budget, for a front end's help.
const (
	DefaultCellTasks = budget.DefaultTasks
	DefaultCellCPU   = budget.DefaultCPU
	KindNodeTasks    = budget.KindTasks
)

// ParseBudget reads a cell's budget as an operator writes it: memory and
// etcd's quota as Kubernetes quantities ("1Gi", "768Mi"), the CPU cap as
// one of cores ("500m", "1"; "none" for no cap), tasks as a number. An
// empty string or zero keeps the provider's default.
func ParseBudget(memory string, tasks int64, etcd, cpu string) (budget.Budget, error) {
	var b budget.Budget
	switch cpu {
	case "":
	case "none":
		b.CPU = -1
	default:
		q, err := resource.ParseQuantity(cpu)
		if err != nil || q.Sign() <= 0 {
			return budget.Budget{}, fmt.Errorf("cell CPU %q: want a share of cores such as 500m or 1, or none", cpu)
		}
		b.CPU = q.MilliValue()
	}
	for _, f := range []struct {
		flag, value string
		to          *int64
	}{{"cell memory", memory, &b.Memory}, {"etcd quota", etcd, &b.Etcd}} {
		if f.value == "" {
			continue
		}
		q, err := resource.ParseQuantity(f.value)
		if err != nil || q.Sign() <= 0 {
			return budget.Budget{}, fmt.Errorf("%s %q: want a size such as 1Gi or 768Mi", f.flag, f.value)
		}
		*f.to = q.Value()
	}
	if tasks < 0 {
		return budget.Budget{}, fmt.Errorf("cell tasks %d: want a positive number", tasks)
	}
	b.Tasks = tasks
	if err := b.WithDefaults().Validate(); err != nil {
		return budget.Budget{}, err
	}
	return b, nil
}

// providerNamed returns the cluster provider called name, made once: the
// sessions started on another provider than this process's (a kind
// session started from the page, met by a command in a terminal) are
// worked on where their clusters are.
func (a *App) providerNamed(name string) (*cluster.Provider, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.providers[name]; ok {
		return p, nil
	}
	c := a.cfg
	c.Provider = name
	p, err := NewProvider(c)
	if err != nil {
		return nil, err
	}
	a.providers[name] = p
	return p, nil
}

// Recover tidies up after an oplab that stopped uncleanly (see
// session.Manager.Recover): a server calls it at start-up. Sessions left
// provisioning with no progress for DefaultRecoverAfter are failed.
func (a *App) Recover(ctx context.Context) (session.RecoverReport, error) {
	return a.sessions.Recover(ctx, DefaultRecoverAfter)
}

// Ready reports whether oplab can serve: its store answers and its
// cluster provider can list its clusters (the embedded provider reads its
// data directory; kind asks the container engine).
func (a *App) Ready(ctx context.Context) error {
	if err := a.store.Ping(ctx); err != nil {
		return err
	}
	if _, err := a.clusters.List(ctx); err != nil {
		return fmt.Errorf("%s cluster provider: %w", a.clusters.Info().Name, err)
	}
	return nil
}

// CountSessions returns how many sessions are in each state, as stored
// (for the oplab_sessions metric).
func (a *App) CountSessions(ctx context.Context) (map[string]int, error) {
	return a.store.CountSessions(ctx)
}

// openStore opens the store c names: a PostgreSQL database, or the SQLite
// file in the data directory.
func openStore(ctx context.Context, c Config) (*store.DB, error) {
	url := c.Store
	switch {
	case url == "":
		return store.OpenDir(ctx, c.DataDir)
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		// The URL may hold a password: it is never logged or repeated.
		return store.OpenPostgres(ctx, url)
	default:
		return nil, errors.New("store: use a postgres:// or postgresql:// URL, or none for the SQLite file in the data directory")
	}
}

// Close releases the store. Clusters keep running: they belong to their
// sessions, which outlive the process.
func (a *App) Close() error {
	// The providers hold what this process made to reach clusters (the
	// pods provider's port forwards); the clusters keep running.
	errs := []error{a.clusters.Close()}
	a.mu.Lock()
	for _, p := range a.providers {
		errs = append(errs, p.Close())
	}
	a.mu.Unlock()
	return errors.Join(append(errs, a.store.Close())...)
}
