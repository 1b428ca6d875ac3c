package oplog

import (
	"errors"
	"fmt"
	"path/filepath"

	"oplab.dev/oplab/internal/cluster"
)

// ErrNoHostLog is returned by ForCluster when the provider runs the operator
// as a pod: its log is the pod's, read through the API server.
var ErrNoHostLog = errors.New("the operator does not run as a host process on this provider")

// Location is the directory of the operator's host process: its log, the
// previous run's log, its kubeconfig and token.
type Location struct {
	Dir string
}

// Beside returns the Location of the operator of the cluster whose admin
// kubeconfig is at kubeconfig: a directory next to it, so that it goes with
// the cluster when the cluster is deleted.
func Beside(kubeconfig string) Location {
	return Location{Dir: filepath.Join(filepath.Dir(kubeconfig), "pg-operator")}
}

// ForCluster returns the Location of the operator of cluster name of p, or
// ErrNoHostLog when p does not run host processes.
func ForCluster(p *cluster.Provider, name string) (Location, error) {
	if !p.Info().Capabilities.HostProcesses {
		return Location{}, ErrNoHostLog
	}
	kc, err := p.KubeconfigPath(name)
	if err != nil {
		return Location{}, fmt.Errorf("operator log of cluster %s: %w", name, err)
	}
	return Beside(kc), nil
}

// Log is the current run's log, in the CRI format.
func (l Location) Log() string { return filepath.Join(l.Dir, "pg-operator.log") }

// Previous is the log of the run before the current one; hostpod moves Log
// here when it starts the operator again.
func (l Location) Previous() string { return filepath.Join(l.Dir, "pg-operator.previous.log") }

// Files returns the logs oldest first: Previous, then Log.
func (l Location) Files() []string { return []string{l.Previous(), l.Log()} }
