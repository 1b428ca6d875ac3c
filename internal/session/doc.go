// Package session runs a learner's lab sessions: a session ties a learner,
// a lab and a cluster of their own, and moves through the states of
// State (provisioning, ready, in exercise, completed, failed, expired)
// along the transitions of an explicit table.
//
// A Manager does the work through the engine (setup, chaos, checks, hints,
// reset) and the cluster provider, and records every step on the
// session's timeline in the store before it reports it, so an oplab that
// restarts (a new CLI command, a restarted server) picks a session up where
// it was. A command that is killed half-way does not leave the session
// stuck: whoever next holds its lock finishes or undoes the work (see
// settleGone). A Watcher records when an exercise's goals came to hold, so
// the time to recovery is the cluster's, not the check's. Long steps
// report progress as they go through a Progress
// function. The package knows nothing of HTTP or terminals: the offline
// CLI and the web server both drive it (built by internal/app), and what
// it hands them are its own view types (view.go), whose JSON is a
// contract: nothing of the store's, and of the engine's only its verdicts
// (engine.Report, engine.SelfTestReport), which are views themselves.
package session
