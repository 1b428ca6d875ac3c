package oplog

import "path/filepath"

// Location is the directory of the operator's host process: its log, the
// previous run's log, its kubeconfig and token. Whether an operator runs
// as a host process, and so whether its log is read here, is for package
// install to say (install.OperatorLog), which runs it.
type Location struct {
	Dir string
}

// Beside returns the Location of the operator of the cluster whose admin
// kubeconfig is at kubeconfig: a directory next to it, so that it goes with
// the cluster when the cluster is deleted.
func Beside(kubeconfig string) Location {
	return Location{Dir: filepath.Join(filepath.Dir(kubeconfig), "pg-operator")}
}

// Log is the current run's log, in the CRI format.
func (l Location) Log() string { return filepath.Join(l.Dir, "pg-operator.log") }

// Previous is the log of the run before the current one; hostpod moves Log
// here when it starts the operator again.
func (l Location) Previous() string { return filepath.Join(l.Dir, "pg-operator.previous.log") }

// Files returns the logs oldest first: Previous, then Log.
func (l Location) Files() []string { return []string{l.Previous(), l.Log()} }
