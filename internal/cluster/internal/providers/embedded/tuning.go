package embedded

// tuning holds settings that trade memory, CPU or start-up time for nothing
// a lab can observe. Figures are from BenchmarkClusterCreate (`make bench`)
// and from timing single components on a 2-core machine; docs/figures.md
// keeps the current ones and docs/tuning.md the history.
type tuning struct {
	etcd, apiserver, controllerManager, scheduler, kwok []string
	// env adds variables per process, by binary name.
	env map[string][]string
	// startupProfile makes kube-controlplane write a CPU profile of its
	// start-up to the cluster's log directory (see withProfiling).
	startupProfile bool
}

// defaultTuning is what every cluster gets:
//   - API Priority and Fairness off: one learner's cluster has no competing
//     tenants to share out; it saved about 25 MiB in kube-apiserver.
//   - etcd keeps 1,000 raft entries in memory between snapshots instead of
//     10,000 (a few MiB; a single member never ships snapshots).
//   - etcd ticks every 100 ms (its default) with a 500 ms election timeout
//     instead of 1 s: the lone member elects itself sooner. Ticking every
//     50 ms with 250 ms, as before, cost 8 millicores idle against 5 now
//     (a failover session, 60 s), and a create was no faster: 2.07-2.32 s
//     to usable now (BenchmarkClusterCreate, 5 runs) against 2.19-2.81 s.
//   - The controller-manager's client may send 200 requests a second (burst
//     400) instead of 20 (burst 30): it builds its controllers one after
//     another, each fetching its ServiceAccount and token, and the default
//     limit made that take 2.8 s; it now takes 0.5 s. The API server is the
//     cluster's own, on loopback.
//   - GOGC=50 for every process: the heap grows to 1.5 times the live data
//     instead of 2 times; idle CPU was not measurably higher.
//   - GOGC=200 for kube-controlplane's start-up alone (until 5 s after its
//     last component started): the start-up allocates a few hundred MiB of
//     short-lived data, and at GOGC=50 the collector took a quarter of the
//     CPU the start needs. BenchmarkClusterCreate: 2.9 s to usable instead
//     of 3.7 s, for about 10 MiB more idle RSS. Turning the collector off
//     for the start-up was faster still but left the heap fragmented: idle
//     RSS grew by 80 MiB. The window covers a lab's setup too, and leaves a
//     session's heap fragmented: 132-136 MiB of in-use spans for 80-88 MiB
//     of live objects. GOGC=100 for the window gave a session back 12-16 MiB
//     for 0.23 CPU-seconds more a start (docs/tuning.md, "The start-up's
//     GOGC, paid for in fragments"); a class starting together is short of
//     CPU, not memory, so it stays 200.
//
// Idle CPU: a cluster nobody uses still wakes up for periodic work, and on a
// 2-core machine for a class of 30 that work is the machine's whole
// capacity. Profiles of an idle cluster (OPLAB_PPROF=1) and the API server's
// and etcd's request counters showed where it goes; these settings drop the
// periodic work a lone, loopback-only cluster has no use for:
//   - The API server's per-resource size estimator
//     (SizeBasedListCostEstimate) lists every resource's keys in etcd once a
//     minute, some 60 etcd reads a minute, to estimate the cost of LISTs for
//     API Priority and Fairness, which is off; the object count poll
//     (--etcd-count-metric-poll-period) feeds the same estimate and a
//     metric, and the database size poll (--etcd-db-metric-poll-interval)
//     only a metric.
//   - Peer proxying between API servers of different versions
//     (UnknownVersionInteroperabilityProxy, on by default since 1.36) writes
//     the server's address to etcd every 10 s, and the API server identity
//     lease (APIServerIdentity) is renewed every 10 s: both exist for
//     clusters of several API servers, and this one has one. No controller
//     that runs here reads them (storage-version GC does not run).
//   - KWOK renews the node's lease every quarter of its duration: 120 s
//     instead of 40 s renews it every 30 s instead of 10 s. No lab stops the
//     node or watches its lease.
//
// Tried and rejected: --watch-cache=false (no saving), GOMEMLIMIT near the
// live heap (saved 60 MiB but raised idle CPU from 5 % to 9 % of a core),
// the providerless build tag (no change in 1.36), turning off API groups no
// lab uses (the API server's own admission plugins watch them and it never
// becomes ready), etcd --unsafe-no-fsync (start-up and writes no faster),
// and Go code on one thread (GOMAXPROCS=1) in etcd and, after its start-up,
// in kube-controlplane. Idle, that saved a further 0.14 and 0.4 points of a
// core (the Go scheduler's spinning threads), but a process on one thread
// gets a smaller share of busy cores than one on two: with it, in two of
// three full test runs a failover waited more than a minute for its
// cluster, and a class starting together is exactly a machine with busy
// cores. etcd's backend committed every second instead of every 100 ms
// (--backend-batch-interval=1s) saved nothing three alternated runs could
// tell apart.
//
// The two largest idle timers of kube-controlplane have no flag and are
// patched where it is built (hack/build-controlplane.sh): the watch caches'
// bookmark timer and the work queues' metric loops.
func defaultTuning() tuning {
	t := tuning{
		etcd: []string{"--snapshot-count=1000", "--heartbeat-interval=100", "--election-timeout=500"},
		apiserver: []string{
			"--enable-priority-and-fairness=false",
			"--feature-gates=SizeBasedListCostEstimate=false,UnknownVersionInteroperabilityProxy=false,APIServerIdentity=false",
			"--etcd-count-metric-poll-period=0",
			"--etcd-db-metric-poll-interval=0",
		},
		controllerManager: []string{"--kube-api-qps=200", "--kube-api-burst=400"},
		kwok:              []string{"--node-lease-duration-seconds=120"},
		env:               map[string][]string{},
	}
	for _, b := range binaries {
		t.env[b] = append(t.env[b], "GOGC=50")
	}
	t.env[controlPlaneBinary] = append(t.env[controlPlaneBinary], "KUBE_CONTROLPLANE_STARTUP_GOGC=200")
	return t
}
