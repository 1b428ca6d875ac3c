package embedded

// tuning holds settings that trade memory and CPU for nothing a lab can
// observe. Figures are from BenchmarkClusterCreate (`make bench`) on a
// 2-core machine; the README keeps the current ones.
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
//   - GOGC=50 for every component: the heap grows to 1.5 times the live
//     data instead of 2 times; idle CPU was not measurably higher.
//
// Tried and rejected: --watch-cache=false (no saving), GOMEMLIMIT near the
// live heap (saved 60 MiB but raised idle CPU from 5 % to 9 % of a core),
// the providerless build tag (no change in 1.36).
func defaultTuning() tuning {
	t := tuning{
		apiserver: []string{"--enable-priority-and-fairness=false"},
		etcd:      []string{"--snapshot-count=1000"},
		env:       map[string][]string{},
	}
	for _, b := range binaries {
		t.env[b] = append(t.env[b], "GOGC=50")
	}
	return t
}
