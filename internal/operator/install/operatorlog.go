package install

import (
	"k8s.io/client-go/rest"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/oplog"
)

// OperatorLog is where the log of operator rel (the reference operator
// when zero) in cluster name of p is read: where ForCluster runs it.
//
//   - The reference operator on a provider that runs host processes (the
//     embedded one) writes its files beside the cluster's admin kubeconfig
//     (oplog.Beside); they are read there, the same files KWOK serves as
//     its simulated pod's log, across the operator's restarts.
//   - Everywhere else the log is the operator pod's, read through the API
//     server with cfg: a real pod on kind, the pod KWOK serves from the
//     cell's file on the pods provider, and every third-party operator,
//     which never runs as a host process.
//
// p may be nil (a caller with only a configuration), and so may p not know
// the cluster: then too the pod's log is read, which says what is wrong
// when it is read. The page's stream, `oplab logs`, the debrief's copy and
// the grader's evidence all read the operator's log from here.
func OperatorLog(p *cluster.Provider, name string, cfg *rest.Config, rel Release) oplog.Source {
	rel = rel.orReference()
	if p != nil && rel == Reference && p.Info().Capabilities.HostProcesses {
		if kc, err := p.KubeconfigPath(name); err == nil {
			return oplog.Beside(kc).Source()
		}
	}
	return PodLog{Config: cfg, Release: rel}
}
