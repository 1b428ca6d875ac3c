package engine

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	pgv1 "oplab.dev/oplab/api/v1"
	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
)

// Engine runs labs against one Target. Its methods are safe for
// concurrent use, though two exercises on one cluster at once make little
// sense.
type Engine struct {
	t    Target
	cfg  *rest.Config // for what the clients do not cover (pod exec)
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	c    client.Client // typed access to PostgresClusters
	logs LogSource
	log  *slog.Logger
	// pace multiplies the time budgets of actions and checks: 1 where pods
	// are simulated, RealContainersPace where they are real.
	pace time.Duration
	// realPods: the provider's pods run containers, so the instances are
	// real PostgreSQL servers (see serversReal).
	realPods bool
	// learner: the Engine acts as the learner (asLearner), with nothing of
	// the admin's.
	learner bool
	// op is the lab's operator (see use).
	op *labOperator
	// admin is, for an Engine that acts as the learner, the one it was
	// made from: it builds and runs a program of the learner's for them,
	// as the server does when they press Build and run.
	admin *Engine
	// burstBuilds lifts the cell's CPU cap for each module runController
	// builds (see cluster.Provider.Unsettle): the self-test builds one for
	// every exercise, three times as long at a settled cell's half core.
	// A learner's own builds are the session's to burst, or not.
	burstBuilds bool
}

// RealContainersPace is how much longer actions and checks may take on a
// provider whose pods are real containers (kind) than on the embedded one,
// whose simulated pods start and fail over in a second or two: real
// PostgreSQL instances are cloned with pg_basebackup, promoted and
// restarted. Measured on 2 busy cores: a three-instance cluster Ready in
// 40-110 s against 1-2 s; the labs' budgets were written for the embedded
// figures. The self-test's windows grow too, which only makes them stricter
// (a shortcut has longer to wrongly pass).
const RealContainersPace = 5

// LearnerControllerPace is RealContainersPace for a lab whose learner
// writes the controller: there the real pods are the controller's own,
// which starts in seconds, and the WebApps' children, whose readiness
// nothing waits for. Measured on kind on 2 cores: the reference solution
// answered every check of a learner's controller within 7 s, the
// embedded figures' 15 s window at pace 1; the pods' 5 would make the
// self-test's windows for a broken controller, each waited out in full,
// take over an hour for the two labs.
const LearnerControllerPace = 2

// budget is d at the engine's pace: the provider's, or
// LearnerControllerPace's when it is slower and the lab in hand is one
// whose learner writes the controller.
func (e *Engine) budget(d time.Duration) time.Duration {
	if e.pace > LearnerControllerPace && e.op != nil {
		e.op.mu.Lock()
		learner := e.op.learnerWrites
		e.op.mu.Unlock()
		if learner {
			return d * LearnerControllerPace
		}
	}
	return d * e.pace
}

// New returns an Engine for t.
func New(t Target) (*Engine, error) {
	if t.Config == nil {
		return nil, fmt.Errorf("new engine: no cluster configuration")
	}
	cfg := rest.CopyConfig(t.Config)
	// Chaos and checks issue bursts of requests; the defaults (5 qps)
	// would make a check take seconds.
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := pgv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	e := &Engine{t: t, cfg: cfg, cs: cs, dyn: dyn, c: c, log: t.Logger, logs: t.Logs, pace: 1}
	if t.Provider != nil && t.Provider.Info().Capabilities.RealContainers {
		e.pace = RealContainersPace
		e.realPods = true
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.op = &labOperator{}
	if e.logs == nil {
		e.logs = e.defaultLogs()
	} else {
		e.op.fixedLogs = true
	}
	return e, nil
}

// defaultLogs reads the reference operator's log where the provider runs
// it.
func (e *Engine) defaultLogs() LogSource { return e.operatorLog(install.Reference) }

// operatorLog reads the log of operator rel where the target's provider
// runs it (install.OperatorLog decides), as the engine's identity where it
// is a pod's.
func (e *Engine) operatorLog(rel install.Release) LogSource {
	return Since{Log: install.OperatorLog(e.t.Provider, e.t.Cluster, e.cfg, rel)}
}

// exercise returns the exercise of l called id.
func exercise(l *lab.Lab, id string) (*lab.Exercise, error) {
	for i := range l.Exercises {
		if l.Exercises[i].ID == id {
			return &l.Exercises[i], nil
		}
	}
	return nil, fmt.Errorf("lab %s: exercise %q: %w", l.ID, id, ErrUnknownExercise)
}
