// Package providers defines the interface every cluster backend implements
// and the types the public cluster package hands out.
package providers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"

	"oplab.dev/oplab/internal/jsonconv"
)

// Provider is a backend that makes Kubernetes clusters: embedded (child
// processes on loopback), kind (containers) or existing (a namespace on a
// shared cluster).
type Provider interface {
	// Info describes the backend and what it can do.
	Info() Info
	// Create makes the cluster and returns once its API server answers and a
	// node is Ready. On error nothing of the cluster is left behind.
	Create(ctx context.Context, name string, opts CreateOptions) error
	// Delete stops every process of the cluster and removes its state.
	Delete(ctx context.Context, name string) error
	// List returns every cluster this backend knows, live or not.
	List(ctx context.Context) ([]Status, error)
	// Status reports one cluster. It returns an error wrapping ErrNotFound
	// when there is no such cluster.
	Status(ctx context.Context, name string) (Status, error)
	// KubeconfigPath returns the path of the cluster's admin kubeconfig.
	KubeconfigPath(name string) (string, error)
}

// HostProcessRunner is implemented by providers whose clusters run as host
// processes (embedded): a workload that cannot run in a simulated pod, such
// as an operator, is run beside the cluster and stopped with it.
type HostProcessRunner interface {
	// StartHostProcess starts spec as part of the cluster; a process of the
	// same name is stopped first.
	StartHostProcess(ctx context.Context, cluster string, spec HostProcess) error
	// StopHostProcess stops the named process; stopping one that does not
	// run is not an error.
	StopHostProcess(ctx context.Context, cluster, name string) error
	// HostProgram makes the program at path runnable by the cluster's host
	// processes and returns the path they run it by: a contained cluster
	// sees only its own files and its provider's programs, so another
	// program is copied into the cluster's directory.
	HostProgram(ctx context.Context, cluster, path string) (string, error)
}

// Workshop is implemented by providers whose clusters run host processes
// (embedded): oplab can give a cluster's processes files, and run one
// command among them to its end (a learner's build, in the write-reconciler
// lab), under the cluster's walls and budget.
type Workshop interface {
	// Workspace returns a directory of the cluster that its processes may
	// read and write and that oplab writes to: files put there are the
	// cluster's (given to its cell's user at the next command). It goes
	// with the cluster.
	Workspace(ctx context.Context, cluster string) (string, error)
	// Share makes the files under src readable, not writable, by the
	// cluster's processes at dst (inside the workspace): hard links the cell
	// cannot change where its processes run as a user of their own, a copy
	// otherwise. dst must not exist.
	Share(ctx context.Context, cluster, src, dst string) error
	// Run runs one command among the cluster's processes and waits for it;
	// ctx ending kills it and every process it started. Its program must be
	// one the cluster can run (see HostProgram). A non-zero exit is an
	// *exec.ExitError. The state, when the command ran, tells its
	// resources (the largest process's resident memory among them).
	Run(ctx context.Context, cluster string, c Command) (*os.ProcessState, error)
	// Confine returns the command line that runs prog with args among the
	// cluster's processes in a sandbox of their own, which sees only what
	// c lists and shares only the cluster's network: for a learner's own
	// program, which must not read the cluster's credentials or state. A
	// cluster without walls of its own runs prog as it is.
	Confine(ctx context.Context, cluster string, c Sandbox, prog string, args []string) (string, []string, error)
}

// Sandbox is what a sandbox inside a cluster's cell sees: paths of the
// cluster's (its workspace) or of its provider's programs, each at its own
// path, and a directory of the workspace as its /tmp.
type Sandbox struct {
	ReadOnly []string
	Writable []string
	Tmp      string
	Chdir    string
}

// PodWorkshop is implemented by Workshops whose clusters run a learner's
// program as a pod of their own (kind): there the pod is the sandbox.
// Run runs only what Confine returned (a build); a long-running program
// (the learner's controller) runs as the lab's own pod, whose spec
// ConfinedPod gives.
type PodWorkshop interface {
	Workshop
	// ConfinedPod returns the spec of a pod that runs prog with args as a
	// confined program of the cluster: what c lists mounted at its own
	// path (read-only or writable), an empty /tmp, an unprivileged user,
	// no capabilities, and a root file system of nothing but the node's
	// pause image.
	ConfinedPod(ctx context.Context, cluster string, c Sandbox, prog string, args []string) (corev1.PodSpec, error)
}

// ExitError is the error of a Command that ran and exited non-zero where
// it did not run as a process of this machine (a pod's).
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExitCode is the program's exit status, as *exec.ExitError's.
func (e *ExitError) ExitCode() int { return e.Code }

// Command is one program to run to its end among a cluster's processes.
type Command struct {
	Path string
	Args []string
	// Env is the whole environment: nothing is inherited.
	Env []string
	// Stdout and Stderr receive its output; nil discards it.
	Stdout, Stderr io.Writer
}

// Restarter is implemented by providers whose clusters can be stopped and
// started again from their saved state (embedded): the pods provider's
// control-plane pod starts its cluster again after the pod is replaced.
type Restarter interface {
	// Stop stops the cluster's processes and keeps its state.
	Stop(ctx context.Context, name string) error
	// Start starts a stopped cluster again from its state.
	Start(ctx context.Context, name string, opts CreateOptions) error
}

// Sleeper is implemented by backends whose clusters can sleep while
// nobody uses them (embedded): frozen, every process of the cluster stops
// using the CPU and keeps its memory, and thaws at once; stopped
// (Restarter), it gives its memory back and starts again from its state,
// its host processes with it.
type Sleeper interface {
	// Freeze stops every process of the cluster from running, console
	// commands included, until Thaw.
	Freeze(ctx context.Context, name string) error
	// Thaw lets a frozen cluster's processes run again. Thawing a
	// cluster that is not frozen is not an error.
	Thaw(ctx context.Context, name string) error
}

// ImageLoader is implemented by providers whose nodes run real containers
// (kind): images of the local engine are copied into the nodes, so no
// registry is needed.
type ImageLoader interface {
	// LoadImages copies the named images into every node of the cluster.
	LoadImages(ctx context.Context, cluster string, images ...string) error
}

// HostProcess is a program to run beside a cluster.
type HostProcess struct {
	// Name identifies the process within the cluster ("pg-operator").
	Name string
	// Path and Args are the program and its arguments (without argv[0]).
	Path string
	Args []string
	// Env is the whole environment of the process: nothing is inherited.
	Env []string
	// LogPath, when set, receives stdout and stderr; by default they go to
	// the cluster's log directory as <Name>.log.
	LogPath string
	// Expose lists the ports on 127.0.0.1 the process listens on that
	// oplab must reach (health, metrics). A contained cluster's processes
	// listen in the cell's own network namespace: these ports are
	// forwarded from the host's loopback while the process runs.
	Expose []int
}

// Info names a backend and declares its capabilities.
type Info struct {
	Name         string       `json:"name"`
	Capabilities Capabilities `json:"capabilities"`
}

// Capabilities say what a backend's clusters can do, so a lab that needs
// something a backend lacks is refused before any work starts.
type Capabilities struct {
	// RealContainers: pods run real container images.
	RealContainers bool `json:"realContainers"`
	// LoadImages: local images can be loaded into the cluster's nodes.
	LoadImages bool `json:"loadImages"`
	// Disposable: the whole cluster belongs to one learner and is deleted
	// with their session.
	Disposable bool `json:"disposable"`
	// HostProcesses: workloads such as the operator run as host processes
	// beside the cluster (see HostProcessRunner).
	HostProcesses bool `json:"hostProcesses"`
	// CellOperator: the reference operator runs inside the cluster's cell,
	// beside its control plane (package install's RunInCell, started by the
	// pods provider), once its chart is installed.
	CellOperator bool `json:"cellOperator"`
	// CellConsole: the web console's commands run inside the cluster's
	// cell (see CellConsole), not on the machine oplab's server runs on.
	CellConsole bool `json:"cellConsole"`
	// Sleeps: a cluster nobody uses can be frozen and stopped, and woken
	// again as it was (see Sleeper).
	Sleeps bool `json:"sleeps"`
	// Builds: a learner's Go module can be built in the cluster's cell and
	// run as the cluster's controller (see Workshop): as a host process
	// where pods run none (embedded), as the lab's own pod where they run
	// real containers (kind, see PodWorkshop).
	Builds bool `json:"builds"`
}

// Budgeted is implemented by backends whose clusters run under a budget
// of their own (package budget): the embedded backend's cells.
type Budgeted interface {
	Capped
	// Usage reports what the cluster takes of its budget now. It reads
	// files only (the cell's control group, etcd's database, the cell's
	// directory), so a page may ask it often.
	Usage(ctx context.Context, name string) (Usage, error)
	// ConsoleGroup returns the cgroup.procs files a console command of
	// the cluster's learner joins (the cell's console leaf); nil when the
	// cluster has no group.
	ConsoleGroup(name string) []string
}

// Capped is implemented by backends whose clusters run under a CPU cap
// that a start or a build may lift for a while: the embedded backend's
// cells, kind's node containers.
type Capped interface {
	// Maintain keeps the cluster inside its bounds where it can without
	// the learner: a cluster left without its cap longer than a start
	// takes settled; on the embedded backend also etcd's free pages given
	// back (defragmentation), its "database space exceeded" alarm lifted
	// once there is room again, components' logs cut to their bound.
	Maintain(ctx context.Context, name string) error
	// Settle caps the CPU of a cluster made Unsettled at its budget's;
	// settling a settled cluster does nothing. Maintain settles a cluster
	// left unsettled longer than a start takes (its starter gone).
	Settle(ctx context.Context, name string) error
	// Unsettle lifts a cluster's CPU cap until Settle, for a burst of
	// work its learner waits for (a build of their controller), and says
	// whether there was a cap to lift (none while a start's setup runs);
	// Maintain settles it if Settle does not come within a few minutes.
	Unsettle(ctx context.Context, name string) (bool, error)
}

// Usage is what a cluster takes of its budget. Zero limits are unknown.
type Usage struct {
	// Memory is the cell's memory now, page cache included; MemoryPeak
	// the most it has used; MemoryLimit its ceiling.
	Memory      uint64 `json:"memory"`
	MemoryPeak  uint64 `json:"memoryPeak"`
	MemoryLimit uint64 `json:"memoryLimit"`
	// Resident is the part of Memory only a kill gives back (see
	// budget.Usage.Resident).
	Resident uint64 `json:"resident"`
	// OOMKills counts the cluster's processes the kernel killed at the
	// ceiling; ConsoleOOMKills the console commands it killed.
	OOMKills        uint64 `json:"oomKills"`
	ConsoleOOMKills uint64 `json:"consoleOomKills"`
	Tasks           uint64 `json:"tasks"`
	TasksLimit      uint64 `json:"tasksLimit"`
	// CPU is the CPU time the cell's processes have used ("cpuMs");
	// CPULimit its cap in thousandths of a core, 0 while it has none (a
	// cluster made Unsettled, until Settle).
	CPU      jsonconv.Duration `json:"cpuMs"`
	CPULimit int64             `json:"cpuLimitMillicores,omitempty"`
	// Disk is what the cluster's directory takes on the host's disk.
	Disk      uint64 `json:"disk"`
	DiskLimit uint64 `json:"diskLimit"`
	// Etcd is the size of etcd's database; EtcdQuota its quota, beyond
	// which etcd refuses writes.
	Etcd      uint64 `json:"etcd"`
	EtcdQuota uint64 `json:"etcdQuota"`
	// Down names the cluster's processes that are not running.
	Down []string `json:"down,omitempty"`
}

// CellConsole is implemented by backends whose clusters' cells run the
// web console's commands (the pods backend).
type CellConsole interface {
	// ExecConsole runs `cellpod console` with argv (console.Call's form)
	// in the cluster's cell, streaming stdin, stdout and stderr; a
	// non-zero exit is an error with ExitStatus().
	ExecConsole(ctx context.Context, cluster string, argv []string, stdin io.Reader, stdout, stderr io.Writer) error
}

// CreateOptions tune Create.
type CreateOptions struct {
	// APIServerPort pins the API server's port; 0 picks a free one.
	APIServerPort int
	// Unsettled leaves a cluster that runs under a CPU cap (Capped)
	// without it when Create returns, for the work that follows
	// its start (a lab's setup), until Settle. Without it the cap is set
	// once the cluster is ready.
	Unsettled bool
	// Progress, when set, is told about each step as it starts and ends.
	Progress func(Step)
}

// Step is a unit of progress reported while creating a cluster.
type Step struct {
	Name     string        // what is happening, e.g. "Starting etcd"
	Done     bool          // false when the step starts, true when it ends
	Err      error         // set on a failed end
	Duration time.Duration // set when Done
}

// State is the health of a cluster as a whole.
type State string

const (
	// StateRunning: every component is alive and answers its health check.
	StateRunning State = "running"
	// StateDegraded: some component died or does not answer.
	StateDegraded State = "degraded"
	// StateStopped: no component of the cluster is alive.
	StateStopped State = "stopped"
	// StateCreating: Create has not finished, and the process running it
	// is alive.
	StateCreating State = "creating"
	// StateAbandoned: Create did not finish and the process running it is
	// gone (killed); nothing will ever finish it. List removes such a
	// cluster, and so does a new Create of the same name.
	StateAbandoned State = "abandoned"
)

// Status describes a cluster.
type Status struct {
	Name       string            `json:"name"`
	Provider   string            `json:"provider"`
	State      State             `json:"state"`
	Server     string            `json:"server,omitempty"`
	Kubeconfig string            `json:"kubeconfig,omitempty"`
	Created    time.Time         `json:"created"`
	Components []ComponentStatus `json:"components,omitempty"`
}

// ComponentStatus is one component of a cluster and the process running it.
type ComponentStatus struct {
	Name string `json:"name"`
	// Process is the program running the component; components sharing a
	// process have the same Process and PID.
	Process string `json:"process,omitempty"`
	PID     int    `json:"pid"`
	Alive   bool   `json:"alive"`
	Healthy bool   `json:"healthy"`
	Log     string `json:"log,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

// Errors shared by all backends.
var (
	ErrNotFound      = errors.New("cluster not found")
	ErrAlreadyExists = errors.New("cluster already exists")
	ErrInvalidName   = errors.New("invalid cluster name")
	// ErrUnsupported: the backend, or this one of its clusters, cannot
	// do what was asked (a cluster made without a control group cannot
	// be frozen).
	ErrUnsupported = errors.New("not supported by this cluster provider")
)
