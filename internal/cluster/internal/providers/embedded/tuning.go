package embedded

// tuning holds settings that trade memory, CPU or start-up time for nothing
// a lab can observe. Figures are from BenchmarkClusterCreate (`make bench`)
// and from timing single components on a 2-core machine; the README keeps the
// current ones.
type tuning struct {
	etcd, apiserver, controllerManager, scheduler, kwok []string
	// env adds variables per process, by binary name.
	env map[string][]string
}

// defaultTuning is what every cluster gets:
//   - API Priority and Fairness off: one learner's cluster has no competing
//     tenants to share out; it saved about 25 MiB in kube-apiserver.
//   - etcd keeps 1,000 raft entries in memory between snapshots instead of
//     10,000 (a few MiB; a single member never ships snapshots).
//   - etcd ticks every 50 ms with a 250 ms election timeout instead of
//     100 ms and 1 s: the lone member elects itself in 0.1-0.3 s instead of
//     0.3-1.0 s, for 0.3 % more of a core at idle.
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
//     RSS grew by 80 MiB.
//
// Tried and rejected: --watch-cache=false (no saving), GOMEMLIMIT near the
// live heap (saved 60 MiB but raised idle CPU from 5 % to 9 % of a core),
// the providerless build tag (no change in 1.36), turning off API groups no
// lab uses (the API server's own admission plugins watch them and it never
// becomes ready), etcd --unsafe-no-fsync (start-up and writes no faster).
func defaultTuning() tuning {
	t := tuning{
		etcd:              []string{"--snapshot-count=1000", "--heartbeat-interval=50", "--election-timeout=250"},
		apiserver:         []string{"--enable-priority-and-fairness=false"},
		controllerManager: []string{"--kube-api-qps=200", "--kube-api-burst=400"},
		env:               map[string][]string{},
	}
	for _, b := range binaries {
		t.env[b] = append(t.env[b], "GOGC=50")
	}
	t.env[controlPlaneBinary] = append(t.env[controlPlaneBinary], "KUBE_CONTROLPLANE_STARTUP_GOGC=200")
	return t
}
