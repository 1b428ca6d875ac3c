// Package engine runs labs against one real cluster: it performs a lab's
// setup, an exercise's steady-state gate, its chaos (and waits until the
// fault is confirmed, T0), its goal checks (polled within their time budget,
// K consecutive passes, partial credit by weight, T1 and the time to
// recovery), gathers the evidence hints are chosen from, runs the reference
// solution, resets an exercise, and self-tests a lab.
//
// The engine is the grader, so it judges from what a learner cannot forge:
// it acts as the cluster's admin, takes who is primary from the database
// servers (or, where they are simulated, from annotations only the
// operator may write) rather than from labels, and compares a repaired
// role with the chart's rules rendered from oplab's own copy, never read
// back from the learner's cluster. It is not the session: it knows
// nothing of HTTP, terminals, storage or learners, and keeps no record of
// an exercise between calls. What must outlive a call (when an attempt
// began, T0, the primary chaos removed) is kept in an Attempt, plain data
// the caller persists and hands back. The lab files themselves are
// package lab's: an action or check kind is declared there and carried out
// here.
//
// A typical run of one exercise:
//
//	e, _ := engine.New(engine.Target{Config: cfg, Provider: p, Cluster: "alice", BinDir: bin})
//	_ = e.Setup(ctx, l, progress)                   // once per lab
//	a, _ := e.Begin(ctx, l, "delete-primary")       // records the baseline
//	rep, _ := e.SteadyState(ctx, l, a, engine.CheckOptions{})
//	_, _ = e.Chaos(ctx, l, a, progress)             // a.T0 is set
//	rep, _ = e.Check(ctx, l, a, engine.CheckOptions{}) // a.T1 is set once all goals pass
//	h, due, _ := e.NextHint(ctx, l, a, shown)
//	_ = e.Reset(ctx, l, a, progress)                // back to the baseline
//
// A reading order:
//
//   - engine.go: Target, Attempt and Baseline, Report, Hint, the errors
//   - runner.go: New, the Engine's clients, and its pace on real pods
//     (RealContainersPace)
//   - exercise.go: Setup, Begin, SteadyState, Chaos, Check, Solve
//   - action.go: each action kind's do and undo (actionFor); the
//     action_*.go files carry them out by what they touch (cluster,
//     objects, operator, rbac, storage)
//   - check.go: polling and stability (RunChecks, poll) and each check
//     kind (checkFor); the check_*.go files judge by subject (cluster,
//     objects, quota, rbac)
//   - rbac_effective.go, chart_rbac.go: a ServiceAccount's effective
//     permissions, and the chart's rules they are measured against
//   - server.go, dataplane.go: what the database servers say of their
//     role, for the reference operator and the third-party ones
//   - evidence.go, logs.go: Evidence and NextHint, from the operator's
//     log (LogSource) and the cluster's events
//   - recovered.go: RecoveredAt, when the cluster's own records show the
//     goals holding (the time to recovery when no one watched)
//   - reset.go: Reset and Teardown, and what undoing each action means
//   - selftest.go: SelfTest, shortcuts run as the learner (asLearner)
//   - answers.go: Answer, a quiz's cluster questions; kube.go: helpers
//
// Tests run against a real embedded cluster (clustertest.New, through
// newEngine in helpers_test.go). TestSelfTestAllLabs is `oplab lab
// selftest --all` in `make test`; kinds_test.go keeps package lab's
// registry and the engine in step (every kind implemented, every chaos
// kind undone); the pure judgements (poll, quotaJudgement, withoutVerbs,
// beyond) are table tests. The *_kind_test.go files run on kind, gated as
// every kind test (clustertest.NewKind; the self-tests also by
// clustertest.RequireSlowKind) and run by make test-kind.
//
// The engine calls the cluster provider (internal/cluster), the operator's
// installer (internal/operator/install: installing operators, their
// charts, where their log is read), internal/fence (the learner's identity
// for the self-test), internal/operator/thirdparty, internal/podexec and
// the course's lab and quiz packages. internal/session is its caller, for
// every session step and the goal Watcher; internal/app only names its
// self-test types.
package engine
