package app

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"oplab.dev/oplab/internal/bwrap"
	"oplab.dev/oplab/internal/clusterview"
	"oplab.dev/oplab/internal/console"
	"oplab.dev/oplab/internal/metrics"
	"oplab.dev/oplab/internal/oplog"
	"oplab.dev/oplab/internal/session"
	"oplab.dev/oplab/internal/stream"
)

// RuntimeOptions configure what a serving App does besides answering
// calls.
type RuntimeOptions struct {
	// BinDir holds kubectl for the console; the console is off when empty
	// or when kubectl cannot be run from it.
	BinDir string
	// ConsoleLimits caps each learner's console commands at once (the
	// console's defaults when zero).
	ConsoleLimits console.Limits
	// WatchInterval is how often the goals of the sessions in exercise are
	// polled for their time to recovery; session.DefaultWatchInterval
	// when zero.
	WatchInterval time.Duration
	// Expire ends live sessions idle or old past its limits; none when zero.
	Expire session.ExpireOptions
	// Sleep puts to sleep the sessions nobody looks at: a page that
	// follows one of a session's live streams is looking (its Watched is
	// set by the runtime). None sleeps when zero.
	Sleep session.SleepOptions
	// Warm keeps warm sessions of labs ready (see PoolOptions); none when
	// its Sizes is empty.
	Warm PoolOptions
	// HousekeepingEvery is how often sessions are expired and the clusters
	// of ended sessions found and deleted; DefaultHousekeepingEvery when
	// zero.
	HousekeepingEvery time.Duration
	// Serving says whether classes are served and whether the console may
	// run unsandboxed (see CheckServe); DefaultServing when nil.
	Serving *Serving
	// Leader, when set, makes this App one replica among several: the
	// background work (start-up repair, housekeeping, the pools, the goal
	// watcher) runs only while it holds the Lease; every replica answers
	// calls. Without it the App does all of it.
	Leader *LeaderOptions
	// Logger receives the runtime's trouble; the App's logger when nil.
	Logger *slog.Logger
}

// DefaultHousekeepingEvery is how often a serving App expires sessions and
// removes left-over clusters.
const DefaultHousekeepingEvery = time.Minute

// Runtime is the work of a serving App, whatever front end hosts it: the
// start-up repair, then housekeeping (expiry, recovery, orphaned
// clusters), the warm and class pools, the goal watcher that times
// recoveries, the live streams' hub, the console's runner and the
// metrics. Serve starts it; Close stops it.
type Runtime struct {
	a       *App
	log     *slog.Logger
	runner  *console.Runner // nil without a console
	serving Serving
	hub     *stream.Hub
	metrics *metrics.Metrics

	// Repaired is what the start-up repair did (without Leader).
	Repaired session.RecoverReport

	mu sync.Mutex
	// bg is the background work, while this App does it: always without
	// Leader, while it leads with.
	bg *background
	// leading ends the leader election (with Leader).
	stopLeading context.CancelFunc
	leadingDone chan struct{}
}

// background is the work one App of several does at a time.
type background struct {
	watcher *session.Watcher
	keeper  *Keeper // nil without a warm pool
	pools   *ClassPools

	stopHousekeeping context.CancelFunc
	housekeepingDone chan struct{}
}

// Serve repairs what an oplab that stopped uncleanly left (Recover), then
// starts the App's background work. The work outlives ctx's deadline:
// Close stops it.
func (a *App) Serve(ctx context.Context, o RuntimeOptions) (*Runtime, error) {
	if o.Logger == nil {
		o.Logger = a.log
	}
	r := &Runtime{a: a, log: o.Logger}
	if o.Serving != nil {
		r.serving = *o.Serving
	} else {
		r.serving = a.DefaultServing()
	}
	if o.Leader == nil {
		rep, err := a.Recover(ctx)
		if err != nil {
			r.log.Warn("recover sessions", "err", err)
		}
		r.Repaired = rep
	}
	// The console's kubectl runs in a sandbox that cannot read the
	// server's files; without one it runs only where the operator said
	// --insecure-clusters.
	sandbox := bwrap.Required
	if r.serving.Insecure {
		sandbox = bwrap.Auto
	}
	r.metrics = metrics.New(metrics.Options{Sessions: a, States: sessionStates(), Queued: a.Queued, Logger: o.Logger})
	caps := a.clusters.Info().Capabilities
	if o.BinDir != "" || caps.CellConsole {
		cr, err := console.New(ctx, console.Options{
			Kubectl: filepath.Join(o.BinDir, "kubectl"), Logger: o.Logger, Limits: o.ConsoleLimits,
			// A command joins its learner's console group through the
			// cell program (budget's console leaf).
			Cell: filepath.Join(o.BinDir, "cell"),
			// exec and debug only mean something where containers run.
			Policy:  console.Policy{Containers: caps.RealContainers},
			Sandbox: sandbox,
			// Where the learners' cells run the console (the pods
			// provider), no command runs on the server's machine.
			RemoteOnly: caps.CellConsole,
		})
		if err != nil {
			// The rest of the page works without a console; it says so.
			o.Logger.Warn("web console off", "err", err)
		} else {
			r.runner = cr
		}
	}
	r.hub = stream.New(r.open, stream.Options{})
	// Room is made by stopping a session nobody looks at, never one a
	// page of this server follows.
	watched := r.watched
	a.watched.Store(&watched)
	bg := context.WithoutCancel(ctx)
	if o.Leader != nil {
		if err := r.lead(bg, o); err != nil {
			r.hub.Close()
			if r.runner != nil {
				r.runner.Close()
			}
			return nil, err
		}
		return r, nil
	}
	r.startBackground(bg, o)
	return r, nil
}

// startBackground starts the background work, stopping a previous run of
// it first, and returns it.
func (r *Runtime) startBackground(ctx context.Context, o RuntimeOptions) *background {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bg != nil {
		r.bg.stop()
	}
	a, b := r.a, &background{}
	// While the App serves, the goals of every session in exercise are
	// watched after T0, so a time to recovery is when the cluster
	// recovered, not when its learner pressed Check.
	b.watcher = a.sessions.Watcher(session.WatchOptions{Interval: o.WatchInterval})
	b.watcher.Start(ctx)
	r.housekeep(ctx, b, o)
	// Each class's own warm sessions (oplab class edit --warm) follow the
	// classes as housekeeping reads them, and at once after a change.
	b.pools = a.ClassPools(PoolOptions{Logger: o.Logger})
	b.pools.Start(ctx, o.HousekeepingEvery)
	if len(o.Warm.Sizes) > 0 {
		wo := o.Warm
		provider := a.clusters.Info().Name
		wo.Report = func(lab string, ready int) { r.metrics.SetWarmPool(provider, lab, ready) }
		wo.Logger = o.Logger
		b.keeper = a.KeepWarm(wo)
		b.keeper.Start(ctx)
	}
	r.bg = b
	return b
}

// stopBackground stops the background work if it runs and is only (any
// when only is nil): a leader's term stops its own work, never the next
// term's.
func (r *Runtime) stopBackground(only *background) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bg != nil && (only == nil || r.bg == only) {
		r.bg.stop()
		r.bg = nil
	}
}

func (b *background) stop() {
	if b.keeper != nil {
		b.keeper.Stop()
	}
	b.pools.Stop()
	b.stopHousekeeping()
	<-b.housekeepingDone
	b.watcher.Stop()
}

// Leading reports whether this App does the background work now.
func (r *Runtime) Leading() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bg != nil
}

// housekeep starts the loop that ends expired sessions and deletes the
// clusters that ended sessions left (a stop killed half-way, a session
// failed while its creator was gone), so that a long-running server holds
// no cluster nobody uses, and keeps live clusters inside their budgets
// (session.Manager.Maintain).
func (r *Runtime) housekeep(ctx context.Context, b *background, o RuntimeOptions) {
	every := o.HousekeepingEvery
	if every <= 0 {
		every = DefaultHousekeepingEvery
	}
	ctx, b.stopHousekeeping = context.WithCancel(ctx)
	b.housekeepingDone = make(chan struct{})
	go func() {
		defer close(b.housekeepingDone)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if ended, err := r.a.sessions.Expire(ctx, o.Expire); err != nil {
				r.log.Warn("expire sessions", "err", err)
			} else if len(ended) > 0 {
				r.log.Info("sessions expired", "sessions", ended)
			}
			if rep, err := r.a.Recover(ctx); err != nil {
				r.log.Warn("recover sessions", "err", err)
			} else if n := len(rep.Failed) + len(rep.Deleted); n > 0 {
				r.log.Info("recovered sessions", "failed", rep.Failed, "clusters deleted", rep.Deleted)
			}
			if err := r.a.sessions.Maintain(ctx); err != nil {
				r.log.Warn("keep clusters inside their budgets", "err", err)
			}
			sleep := o.Sleep
			sleep.Watched = r.watched
			if slept, err := r.a.sessions.Sleep(ctx, sleep); err != nil {
				r.log.Warn("put idle sessions to sleep", "err", err)
			} else if len(slept) > 0 {
				r.log.Info("sessions asleep", "sessions", slept)
			}
		}
	}()
}

func sessionStates() []string {
	var out []string
	for _, s := range session.States() {
		out = append(out, string(s))
	}
	return out
}

// Metrics returns the registry the runtime records in, for /metrics.
func (r *Runtime) Metrics() *metrics.Metrics { return r.metrics }

// Serving returns what the runtime serves (see CheckServe).
func (r *Runtime) Serving() Serving { return r.serving }

// Console returns the console's runner, nil when the console is off.
func (r *Runtime) Console() *console.Runner { return r.runner }

// Started says that a start may have taken a warm session, so the warm
// pool refills now.
func (r *Runtime) Started() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bg != nil && r.bg.keeper != nil {
		r.bg.keeper.Poke()
	}
}

// ClassesChanged says that a class changed, so its warm sessions follow
// now rather than at the next housekeeping.
// On a replica that does not lead, the leader's pools follow at its next
// housekeeping.
func (r *Runtime) ClassesChanged() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.bg != nil {
		r.bg.pools.Poke()
	}
}

// Stream names of Subscribe.
const (
	// StreamLog is the operator's log, line by line.
	StreamLog = "log"
	// StreamCluster is the lab's resource, its pods and its services,
	// as whole snapshots.
	StreamCluster = "cluster"
)

// Subscribe joins a session's live stream (StreamLog or StreamCluster)
// after the client's last frame, or its last cursor when it comes from
// another server. The cluster view's frames are whole snapshots, so a
// viewer that does not resume this server's frames starts from the newest.
// Callers check who may see the session.
func (r *Runtime) Subscribe(id, name string, from stream.From) (*stream.Subscription, error) {
	switch name {
	case StreamLog:
	case StreamCluster:
		from.Newest, from.Cursor = true, ""
	default:
		return nil, fmt.Errorf("no stream %q: %w", name, session.ErrNotFound)
	}
	return r.hub.Subscribe(name+"/"+id, from)
}

// watched reports whether a page follows session id's live log or
// cluster view on this server.
func (r *Runtime) watched(id string) bool {
	return r.hub.Watched(StreamLog+"/"+id) || r.hub.Watched(StreamCluster+"/"+id)
}

// open maps a hub key to its upstream: the operator's log of the
// session's cluster, or the watches of the lab's resource.
func (r *Runtime) open(key string) (stream.Upstream, error) {
	name, id, ok := strings.Cut(key, "/")
	if !ok {
		return nil, fmt.Errorf("stream key %q: want <stream>/<session>", key)
	}
	ctx := context.Background()
	st, err := r.a.sessions.Status(ctx, id)
	if err != nil {
		return nil, err
	}
	if !st.ClusterLive || st.Cluster == "" {
		return nil, fmt.Errorf("session %s: %w", id, session.ErrNoCluster)
	}
	switch name {
	case StreamLog:
		src, err := r.a.OperatorLog(ctx, id)
		if err != nil {
			return nil, err
		}
		return stream.UpstreamFunc(oplog.FollowJSON(src)), nil
	case StreamCluster:
		l, err := r.a.course.Lab(st.Lab)
		if err != nil {
			return nil, err
		}
		p, name, err := r.a.sessions.Provider(ctx, id)
		if err != nil {
			return nil, err
		}
		cfg, err := p.RESTConfig(name)
		if err != nil {
			return nil, err
		}
		ns := l.Target.Namespace
		if ns == "" {
			ns = "default"
		}
		cv := &clusterview.Watcher{Config: cfg, Namespace: ns, Name: l.Target.Cluster, Logger: r.log}
		if l.Operator != "" {
			// A third-party operator's lab watches the one resource of its
			// kind that its setup made.
			kind, ok := clusterview.KindOf(l.Operator)
			if !ok {
				return nil, fmt.Errorf("no cluster view of operator %s", l.Operator)
			}
			if cv.Name, err = onlyResource(ctx, cfg, kind, ns); err != nil {
				return nil, err
			}
			cv.Kind = &kind
		}
		return stream.UpstreamFunc(cv.Run), nil
	}
	return nil, fmt.Errorf("no stream %q", name)
}

// Close stops the warm pools, housekeeping, the watcher, every stream's
// upstream and the console.
func (r *Runtime) Close() error {
	if r.stopLeading != nil {
		// Gives the Lease up: another replica leads at once.
		r.stopLeading()
		<-r.leadingDone
	}
	r.stopBackground(nil)
	r.hub.Close()
	if r.runner != nil {
		return r.runner.Close()
	}
	return nil
}

// ConsoleLimits cap each learner's console commands at once.
type ConsoleLimits = console.Limits

// The console's caps when none are given.
const (
	DefaultConsoleCommands = console.DefaultMaxCommands
	DefaultConsoleFollows  = console.DefaultMaxFollows
)

// onlyResource names the one resource of kind in namespace ns.
func onlyResource(ctx context.Context, cfg *rest.Config, kind clusterview.Kind, ns string) (string, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	list, err := dyn.Resource(kind.Resource).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", fmt.Errorf("cluster view: %w", err)
	}
	if len(list.Items) != 1 {
		return "", fmt.Errorf("cluster view: %d %s in %s, want one", len(list.Items), kind.Resource.Resource, ns)
	}
	return list.Items[0].GetName(), nil
}
