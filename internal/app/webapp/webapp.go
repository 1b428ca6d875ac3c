package webapp

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"oplab.dev/oplab/internal/app"
	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/lesson"
	"oplab.dev/oplab/internal/metrics"
	"oplab.dev/oplab/internal/server"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/stream"
)

// Options are what the adapter needs beside the App.
type Options struct {
	// BinDir holds kubectl for the console; the console is off when empty
	// or when kubectl cannot be run from it.
	BinDir string
	// ConsoleLimits caps each learner's console commands at once (the
	// console's defaults when zero).
	ConsoleLimits console.Limits
	// Logger receives the console's and the streams' trouble; discarded
	// when nil.
	Logger *slog.Logger
	// WatchInterval is how often the goals of the sessions in exercise are
	// polled for their time to recovery; session.DefaultWatchInterval
	// when zero.
	WatchInterval time.Duration
	// Expire ends live sessions idle or old past its limits; none when zero.
	Expire session.ExpireOptions
	// Warm keeps warm sessions of labs ready (see app.PoolOptions); none
	// when its Sizes is empty.
	Warm app.PoolOptions
	// HousekeepingEvery is how often sessions are expired and the clusters
	// of ended sessions found and deleted; DefaultHousekeepingEvery when
	// zero.
	HousekeepingEvery time.Duration
	// Serving says whether classes are served and whether the console may
	// run unsandboxed (see app.CheckServe); App.DefaultServing when nil.
	Serving *app.Serving
}

// DefaultHousekeepingEvery is how often the server expires sessions and
// removes left-over clusters.
const DefaultHousekeepingEvery = time.Minute

// Web is an App as the web server uses it.
type Web struct {
	a      *app.App
	log    *slog.Logger
	render *lesson.Renderer

	mu    sync.Mutex
	views map[string]*server.LabView // by lab and language

	runner  *console.Runner
	serving app.Serving
	hub     *stream.Hub
	watcher *session.Watcher
	metrics *metrics.Metrics

	keeper *app.Keeper // nil without a warm pool
	pools  *app.ClassPools

	stopHousekeeping context.CancelFunc
	housekeepingDone chan struct{}
}

var (
	_ server.Application = (*Web)(nil)
	_ server.Console     = (*Web)(nil)
	_ server.Streams     = (*Web)(nil)
)

// New builds the adapter on a; Close stops its console and streams.
func New(ctx context.Context, a *app.App, o Options) (*Web, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	w := &Web{a: a, log: o.Logger, render: lesson.New(), views: map[string]*server.LabView{}}
	if o.Serving != nil {
		w.serving = *o.Serving
	} else {
		w.serving = a.DefaultServing()
	}
	// The console's kubectl runs in a sandbox that cannot read the
	// server's files; without one it runs only where the operator said
	// --insecure-clusters.
	sandbox := console.SandboxRequired
	if w.serving.Insecure {
		sandbox = console.SandboxAuto
	}
	w.metrics = metrics.New(metrics.Options{Sessions: a, States: sessionStates(), Queued: a.Queued, Logger: o.Logger})
	if o.BinDir != "" {
		r, err := console.New(ctx, console.Options{
			Kubectl: filepath.Join(o.BinDir, "kubectl"), Logger: o.Logger, Limits: o.ConsoleLimits,
			// exec and debug only mean something where containers run.
			Policy:  console.Policy{Containers: a.Clusters.Info().Capabilities.RealContainers},
			Sandbox: sandbox,
		})
		if err != nil {
			// The rest of the page works without a console; it says so.
			o.Logger.Warn("web console off", "err", err)
		} else {
			w.runner = r
		}
	}
	w.hub = stream.New(w.open, stream.Options{})
	// While the server runs, the goals of every session in exercise are
	// watched after T0, so a time to recovery is when the cluster
	// recovered, not when its learner pressed Check. The watcher outlives
	// the request that built the server: Close stops it.
	w.watcher = a.Sessions.Watcher(session.WatchOptions{Interval: o.WatchInterval})
	w.watcher.Start(context.WithoutCancel(ctx))
	w.housekeep(context.WithoutCancel(ctx), o)
	// Each class's own warm sessions (oplab class edit --warm) follow the
	// classes as housekeeping reads them, and at once after a change here.
	w.pools = a.ClassPools(app.PoolOptions{Logger: o.Logger})
	w.pools.Start(context.WithoutCancel(ctx), o.HousekeepingEvery)
	if len(o.Warm.Sizes) > 0 {
		wo := o.Warm
		provider := a.Clusters.Info().Name
		wo.Report = func(lab string, ready int) { w.metrics.SetWarmPool(provider, lab, ready) }
		wo.Logger = o.Logger
		w.keeper = a.KeepWarm(wo)
		w.keeper.Start(context.WithoutCancel(ctx))
	}
	return w, nil
}

// housekeep starts the loop that ends expired sessions and deletes the
// clusters that ended sessions left (a stop killed half-way, a session
// failed while its creator was gone), so that a long-running server holds
// no cluster nobody uses.
func (w *Web) housekeep(ctx context.Context, o Options) {
	every := o.HousekeepingEvery
	if every <= 0 {
		every = DefaultHousekeepingEvery
	}
	ctx, w.stopHousekeeping = context.WithCancel(ctx)
	w.housekeepingDone = make(chan struct{})
	go func() {
		defer close(w.housekeepingDone)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if ended, err := w.a.Sessions.Expire(ctx, o.Expire); err != nil {
				w.log.Warn("expire sessions", "err", err)
			} else if len(ended) > 0 {
				w.log.Info("sessions expired", "sessions", ended)
			}
			if rep, err := w.a.Recover(ctx); err != nil {
				w.log.Warn("recover sessions", "err", err)
			} else if n := len(rep.Failed) + len(rep.Deleted); n > 0 {
				w.log.Info("recovered sessions", "failed", rep.Failed, "clusters deleted", rep.Deleted)
			}
		}
	}()
}

// Metrics returns the registry the adapter records in, for /metrics.
func (w *Web) Metrics() *metrics.Metrics { return w.metrics }

func sessionStates() []string {
	var out []string
	for _, s := range session.States() {
		out = append(out, string(s))
	}
	return out
}

// Console returns w as the server's console, or nil when it has none.
func (w *Web) Console() server.Console {
	if w.runner == nil {
		return nil
	}
	return w
}

// Close stops the watcher, every stream's upstream and the console.
func (w *Web) Close() error {
	if w.keeper != nil {
		w.keeper.Stop()
	}
	w.pools.Stop()
	w.stopHousekeeping()
	<-w.housekeepingDone
	w.watcher.Stop()
	w.hub.Close()
	if w.runner != nil {
		return w.runner.Close()
	}
	return nil
}
