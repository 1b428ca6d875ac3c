package embedded

import (
	"oplab.dev/oplab/internal/budget"

	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"oplab.dev/oplab/internal/cluster/internal/providers"
)

// stateFile is the record of a cluster inside its directory. Its presence
// marks a directory as a cluster oplab created.
const stateFile = "cluster.json"

// clusterState is what survives oplab itself: enough to find, health-check and
// stop the cluster's processes after a restart.
type clusterState struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	// Ready is set once Create finished; a state without it belongs to a
	// Create that is running or was interrupted.
	Ready bool  `json:"ready"`
	Ports ports `json:"ports"`
	// Processes in start order; they are stopped in reverse.
	Processes []processRecord `json:"processes"`
	// Cell is set when the cluster runs in a cell (package cell); its
	// holder is then the first process.
	Cell *cellRecord `json:"cell,omitempty"`
	// Budget is the cluster's share of the machine, fixed when it was
	// made (package budget); nil in a state an older oplab wrote.
	Budget *budget.Budget `json:"budget,omitempty"`
	// Unsettled is set while a new cluster runs without its CPU cap
	// (providers.CreateOptions.Unsettled), or a cluster Unsettle let go of
	// it for a while, until Settle. UnsettledAt is when Unsettle did; zero
	// for a new cluster, whose Created says.
	Unsettled   bool      `json:"unsettled,omitempty"`
	UnsettledAt time.Time `json:"unsettledAt,omitzero"`
}

// budgetOf is the budget of the cluster of st under p.
func (p *Provider) budgetOf(st *clusterState) budget.Budget {
	if st.Budget != nil {
		return st.Budget.WithDefaults()
	}
	return p.budget
}

// ports are the loopback ports of a cluster's components.
type ports struct {
	EtcdClient        int `json:"etcdClient"`
	EtcdPeer          int `json:"etcdPeer"`
	APIServer         int `json:"apiServer"`
	ControllerManager int `json:"controllerManager"`
	Scheduler         int `json:"scheduler"`
	Kwok              int `json:"kwok"`
}

// processRecord is one component of a cluster and the child process that
// runs it. Components sharing a process (kube-controlplane's) have a record
// each, with the same PID.
type processRecord struct {
	Name string `json:"name"`
	// Process is the binary that runs the component, when its name is not
	// the component's.
	Process string `json:"process,omitempty"`
	PID     int    `json:"pid"`
	Log     string `json:"log"`
	// Health is the URL that answers 200 when the process is healthy; empty
	// for processes that have none.
	Health string `json:"health,omitempty"`
	// Host is set for processes started with StartHostProcess rather than by
	// Create; Spec is what it was started with, for Start to start it
	// again (nil in a state an older oplab wrote: such a process is left
	// to whoever started it).
	Host bool                   `json:"host,omitempty"`
	Spec *providers.HostProcess `json:"spec,omitempty"`
}

// process names the process that runs the component.
func (r processRecord) process() string {
	if r.Process == "" || r.Process == r.Name {
		return r.Name
	}
	return r.Process + " (" + r.Name + ")"
}

// validName is a DNS-1123 label short enough to prefix generated names.
var validName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,38}[a-z0-9])?$`)

func checkName(name string) error {
	if !validName.MatchString(name) {
		return fmt.Errorf("%w %q: use 1-40 lower-case letters, digits and '-', starting and ending with a letter or digit", providers.ErrInvalidName, name)
	}
	return nil
}

func readState(dir string) (*clusterState, error) {
	data, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		return nil, err
	}
	var s clusterState
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("read %s: %w", filepath.Join(dir, stateFile), err)
	}
	return &s, nil
}

// writeState replaces the state file atomically, so a crash mid-write never
// leaves a cluster that cannot be found or stopped.
func writeState(dir string, s *clusterState) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, stateFile+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, stateFile))
}

// isNotExist reports a missing state file or directory.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
