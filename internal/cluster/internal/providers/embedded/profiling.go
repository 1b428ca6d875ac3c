package embedded

import "os"

// ProfilingEnv, set to 1 in oplab's environment, makes new clusters serve
// CPU and heap profiles: kube-controlplane on the API server's
// /debug/pprof/ (the handlers profile the whole process, so every
// component in it), etcd on its client URL's /debug/pprof/. Both need the
// cluster's admin credentials. Off by default: it is for finding where an
// idle cluster's CPU goes (`kubectl get --raw '/debug/pprof/profile?seconds=60'`).
const ProfilingEnv = "OPLAB_PPROF"

// withProfiling adds the profiling flags to t when ProfilingEnv is 1. The
// flags come after the defaults, and the last value of a flag wins.
func withProfiling(t tuning) tuning {
	if os.Getenv(ProfilingEnv) != "1" {
		return t
	}
	t.etcd = append(t.etcd, "--enable-pprof")
	t.apiserver = append(t.apiserver, "--profiling=true")
	return t
}
