// Package webapp is the application layer as the web server sees it: it
// implements the server's interfaces (Learning, Classroom, SignIns,
// Console, Streams) on an app.App's methods and the Runtime App.Serve
// starts, so that internal/server holds no policy and imports none of the
// session, cluster, console or stream packages.
//
//   - sessions.go: the catalogue, lab pages and the session's actions, with
//     the layer's errors marked with the server's kinds (errors.go);
//   - classes.go: joining and rejoining a class; the
//     class's refusals (a wrong code, a closed or full class, a lab not
//     in the class …) become server.Refusals, which the page says in the
//     learner's language. The catalogue and Start go through App's class
//     policy (internal/app/learners.go);
//   - console.go: the Runtime's console.Runner, run with the session's own
//     kubeconfig;
//   - streams.go: the Runtime's stream hub, keyed "log/<session>" (the
//     operator's log of the session's cluster, App.OperatorLog) and
//     "cluster/<session>" (a clusterview.Watcher on the lab's
//     PostgresCluster), whose frames (package frame, the type the server
//     writes too) are relayed to the server's WebSocket writer as the hub
//     made them. BenchmarkLogLineTo100Clients times a log line through
//     that path.
//
// The server checks that the caller owns a session before it calls any of
// these with the session's id.
package webapp
