package controllab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"oplab.dev/oplab/internal/cluster"
	"oplab.dev/oplab/internal/operator/hostpod"
	"oplab.dev/oplab/internal/operator/install"
	"oplab.dev/oplab/internal/oplog"
)

// Cells is what running a learner's controller needs of the provider:
// *cluster.Provider on providers whose clusters run host processes.
type Cells interface {
	Workshop
	StartHostProcess(ctx context.Context, cluster string, spec cluster.HostProcess) error
	StopHostProcess(ctx context.Context, cluster, name string) error
}

// Controller runs a learner's built program as their cluster's
// controller, as oplab runs the reference operator where pods run no
// container: hostpod plays the pod of the lab's Deployment (scaled to 0,
// the program stops; its pod deleted, it starts again) and writes its log
// where package oplog reads an operator's, and the program acts with the
// token of the lab's ServiceAccount. Unlike the reference operator it runs
// confined in the cell (see Workshop.Confine): it sees its program and
// its credentials, and nothing else of the cluster's.
type Controller struct {
	Cells   Cells
	Cluster string
	// Admin reaches the cluster as its admin: the first token is minted
	// with it; AdminKubeconfig is its file, with which hostpod watches the
	// pod (it runs in the cell, outside the program's sandbox).
	Admin           *rest.Config
	AdminKubeconfig string
	// HostPod is the hostpod program.
	HostPod string
	// Namespace, ServiceAccount and Selector name the lab's controller:
	// the account it acts as, and the labels of the pod it plays.
	Namespace, ServiceAccount, Selector string
	// Args are the program's arguments.
	Args []string
}

// hostProcess names the controller among the cluster's host processes.
const hostProcess = "learner-controller"

// DefaultArgs turn off what the lab's scaffold serves that nothing reads
// (metrics, probes) and leader election: one process plays the one pod.
var DefaultArgs = []string{"--metrics-bind-address=0", "--health-probe-bind-address=0", "--leader-elect=false"}

// tokenTTL is the lifetime of each token of the controller; hostpod mints
// the next at four fifths of it.
const tokenTTL = time.Hour

// Files of the running controller in the workspace, beside the build.
const (
	runDir   = "run"
	credsDir = "run/creds"
)

// Log is where the controller's log is, for package oplog to read.
func Log(workspace string) oplog.Location {
	return oplog.Location{Dir: filepath.Join(workspace, runDir)}
}

// LogOf is the log of lab id's controller in cluster name, as package
// oplog reads an operator's: where it runs as a host process, the files
// hostpod writes in the workspace (its previous run's and its current
// one's); where it runs as a pod (PodController), the pod's log, read
// with admin.
func LogOf(ctx context.Context, p *cluster.Provider, name, id string, admin *rest.Config) (oplog.Source, error) {
	if !p.Info().Capabilities.HostProcesses {
		pl, err := LabPlace(id)
		if err != nil {
			return nil, err
		}
		return install.PodLog{Config: admin, Release: pl.Release(id)}, nil
	}
	ws, err := p.Workspace(ctx, name)
	if err != nil {
		return nil, err
	}
	return oplog.Files(Log(ws).Files()), nil
}

// Start runs the program built at binary (a Build's Binary) as the
// controller, stopping the one that runs first: the previous program runs
// until this one starts. The program is copied first, so that a later
// build changes nothing of what runs until the next Start.
func (c Controller) Start(ctx context.Context, binary string) error {
	ws, err := c.Cells.Workspace(ctx, c.Cluster)
	if err != nil {
		return err
	}
	run, creds := filepath.Join(ws, runDir), filepath.Join(ws, credsDir)
	for _, d := range []string{run, creds, filepath.Join(run, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	prog := filepath.Join(run, Program)
	if err := copyProgram(binary, prog); err != nil {
		return fmt.Errorf("the controller's program: %w", err)
	}
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return err
	}
	token, kubeconfig := filepath.Join(creds, "token"), filepath.Join(creds, "kubeconfig")
	if err := hostpod.MintToken(ctx, hostpod.TokenOptions{
		Client: cs, Namespace: c.Namespace, ServiceAccount: c.ServiceAccount, File: token, TTL: tokenTTL,
	}); err != nil {
		return err
	}
	if err := hostpod.WriteTokenKubeconfig(kubeconfig, c.Admin, token, c.ServiceAccount, c.Namespace); err != nil {
		return err
	}
	sandbox, argv, err := c.Cells.Confine(ctx, c.Cluster, cluster.Sandbox{
		ReadOnly: []string{prog, creds},
		Tmp:      filepath.Join(run, "tmp"),
		Chdir:    "/tmp",
	}, prog, append(append([]string{}, DefaultArgs...), c.Args...))
	if err != nil {
		return err
	}
	loc := Log(ws)
	args := append([]string{
		"-kubeconfig", c.AdminKubeconfig,
		"-namespace", c.Namespace,
		"-selector", c.Selector,
		"-log", loc.Log(),
		"-previous-log", loc.Previous(),
		"-token-file", token,
		"-service-account", c.ServiceAccount,
		"-token-ttl", tokenTTL.String(),
		"--", sandbox,
	}, argv...)
	return c.Cells.StartHostProcess(ctx, c.Cluster, cluster.HostProcess{
		Name: hostProcess,
		Path: c.HostPod,
		Args: args,
		Env: []string{
			"KUBECONFIG=" + kubeconfig,
			"POD_NAMESPACE=" + c.Namespace,
			"HOME=/tmp",
			"PATH=/usr/bin:/bin",
		},
		LogPath: filepath.Join(run, "hostpod.log"),
	})
}

// Stop stops the controller; stopping one that does not run is no error.
func (c Controller) Stop(ctx context.Context) error {
	return c.Cells.StopHostProcess(ctx, c.Cluster, hostProcess)
}

// copyProgram copies src to dst through a sibling file, executable.
func copyProgram(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errors.New("nothing is built yet: build the module first")
		}
		return err
	}
	tmp := dst + ".new"
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
