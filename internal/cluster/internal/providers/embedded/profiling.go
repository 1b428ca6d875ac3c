package embedded

// withProfiling adds to t, when on (Options.Profiling), the flags that make
// new clusters serve CPU and heap profiles: kube-controlplane on the API
// server's /debug/pprof/ (the handlers profile the whole process, so every
// component in it), etcd on its client URL's /debug/pprof/. Both need the
// cluster's admin credentials. Off by default: it is for finding where an
// idle cluster's CPU goes (`kubectl get --raw '/debug/pprof/profile?seconds=60'`).
// kube-controlplane also writes a CPU profile of its own start-up, until its
// last component has started, to logs/kube-controlplane-startup.pprof in
// the cluster's directory: what the API server does before it can serve a
// profile.
// The flags come after the defaults, and the last value of a flag wins.
func withProfiling(t tuning, on bool) tuning {
	if !on {
		return t
	}
	t.etcd = append(t.etcd, "--enable-pprof")
	t.apiserver = append(t.apiserver, "--profiling=true")
	t.startupProfile = true
	return t
}
