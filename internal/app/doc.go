// Package app composes oplab's application layer once, for both front
// ends: the web server (`oplab serve`) and every command of the offline
// CLI build an App and then only parse input, call it and render.
//
// Open opens the store under the data directory, makes the cluster
// provider, loads and validates the course once, and builds the session
// manager, the class service and the admission gate on them; Close
// releases what Open opened. These parts are not exported: a front end
// cannot reach past the App into the store or the provider, so whatever
// both front ends must agree on (which session an action means, what a
// class member may start, where the operator's log is read) is decided
// here or below, once. Most methods are one call into package session or
// package class; what the App hands back are their view types, never the
// store's records.
//
// The App is not the web server and holds no HTTP: internal/app/webapp
// adapts it to the server's interfaces. Nor does it read flags or the
// environment: its Config is filled by the CLI (internal/cli/config.go;
// TestOnlyTheCLIReadsTheEnvironment), client-go's kubeconfig rules behind
// LeaderLease aside.
// The cluster and operator commands, which need no store and no course,
// use OpenClusters instead of Open.
//
// A serving front end calls App.Serve, which first repairs what an
// unclean stop left (Recover) and then runs the background work as a
// Runtime: housekeeping, the warm and class pools, the goal watcher, the
// live streams' hub, the console's runner and the metrics, stopped by
// Runtime.Close. With RuntimeOptions.Leader, only the replica that holds
// the Lease does the background work; every replica answers calls.
//
// A reading order:
//
//   - app.go: Config, Open, NewProvider and the store, Recover, Ready
//   - api.go: the session, quiz, class and course calls, one line each
//   - learners.go: what a class member sees and may start (Catalogue,
//     Start), decided here for every front end
//   - room.go: the gate in front of starts (package room), on
//     the machine or, on the pods provider, the host cluster
//   - runtime.go: Serve and the Runtime, its streams (Subscribe) and its
//     console; leader.go: which replica does the background work
//   - pool.go, classpools.go: the warm pools (Keeper), one per class
//     that asks for warm sessions (ClassPools)
//   - classroom.go, board.go: an instructor's actions on a learner's
//     session, WatchClass, and the board as package board's view
//   - operatorlog.go, oplogrecord.go, debrief.go: the session's operator
//     log wherever it is, the copy kept before its cluster is deleted,
//     and the replay of a session (Debrief)
//   - contain.go: whether to serve strangers where clusters cannot be
//     contained (CheckServe, Serving)
//   - clusters.go: Clusters, for `oplab cluster` and `oplab operator`
//   - course.go: validating a course and its size (`oplab lab validate`)
//
// Tests build a real App: on embedded clusters (clustertest; TestMain in
// pool_test.go also stops pgtest's PostgreSQL), on PostgreSQL
// (TestOpenOnPostgres), or with no cluster where none is needed
// (TestBoard, TestParseBudget). json_test.go holds every view
// the App hands to a browser to docs/api.md's convention. The benchmarks
// (bench_test.go, board_bench_test.go) measure a start from the warm
// pool, an idle cluster's cost and a class's board.
//
// The App calls internal/session, internal/class, internal/cluster,
// internal/room, internal/store, internal/course, internal/console,
// internal/stream, internal/clusterview, internal/operator/install and
// internal/operator/thirdparty (the operator commands and logs),
// internal/budget and internal/bwrap (a cell's share, the console's
// sandbox) and internal/metrics. It is called by internal/cli and
// internal/app/webapp, and by nothing else.
package app
