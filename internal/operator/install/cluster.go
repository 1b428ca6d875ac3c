package install

import (
	"fmt"
	"maps"
	"path/filepath"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/oplog"
)

// ForCluster returns an Installer for the cluster name of p.
//
// On a provider that runs workloads as host processes (the embedded one) the
// operator runs from binDir (pg-operator, run by hostpod) with its
// kubeconfig, token and log in a directory beside the cluster's admin
// kubeconfig, so they go with the cluster. On a provider whose pods run no
// container the operator simulates its PostgreSQL instances, unless
// opts.Values sets instanceMode.
func ForCluster(p *cluster.Provider, name, binDir string, opts Options) (*Installer, error) {
	cfg, err := p.RESTConfig(name)
	if err != nil {
		return nil, err
	}
	info := p.Info()
	if !info.Capabilities.RealContainers {
		vals := maps.Clone(opts.Values)
		if vals == nil {
			vals = map[string]any{}
		}
		if _, set := vals["instanceMode"]; !set {
			vals["instanceMode"] = "simulated"
		}
		opts.Values = vals
	}
	if info.Capabilities.HostProcesses && opts.Host == nil {
		kc, err := p.KubeconfigPath(name)
		if err != nil {
			return nil, err
		}
		opts.Host = &Host{
			Runner:          p,
			Cluster:         name,
			Operator:        filepath.Join(binDir, "pg-operator"),
			HostPod:         filepath.Join(binDir, "hostpod"),
			AdminKubeconfig: kc,
			Dir:             oplog.Beside(kc).Dir,
		}
	} else if !info.Capabilities.RealContainers && !info.Capabilities.HostProcesses {
		return nil, fmt.Errorf("provider %s can neither run the operator's container nor a host process", info.Name)
	}
	return New(cfg, opts), nil
}
