package controllab

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"oplab.dev/oplab/internal/cluster"
)

// Runner runs a learner's built program as their cluster's controller:
// a Controller where the cluster runs host processes (embedded), a
// PodController where its pods run real containers (kind).
type Runner interface {
	// Start runs the program built at binary in place of the one that
	// runs, which runs until then.
	Start(ctx context.Context, binary string) error
	// Stop stops the controller; stopping one that does not run is no
	// error.
	Stop(ctx context.Context) error
}

var (
	_ Runner = Controller{}
	_ Runner = PodController{}
)

// PodCells is what a PodController needs of the provider:
// *cluster.Provider on providers whose pods run real containers.
type PodCells interface {
	Workspace(ctx context.Context, cluster string) (string, error)
	ConfinedPod(ctx context.Context, cluster string, c cluster.Sandbox, prog string, args []string) (corev1.PodSpec, error)
}

// PodController runs a learner's program as the pod of the lab's
// Deployment, where the cluster's pods run real containers: the pod sees
// its program and nothing else of the workspace (cluster.Provider's
// ConfinedPod, whose root is the node's pause image), and acts with the
// token of the lab's ServiceAccount, as any pod of it does. A new program
// rolls the Deployment: the pod of the one before runs until the new one
// starts. Its log is the pod's (LogOf).
type PodController struct {
	Cells   PodCells
	Cluster string
	// Admin reaches the cluster as its admin, who alone may give a pod
	// a hostPath volume.
	Admin *rest.Config
	Place Place
	// Args are the program's arguments.
	Args []string
}

// restartedAt is the pod template's annotation that a Start changes.
const restartedAt = "oplab.dev/restartedAt"

// terminationGrace is how long a pod of the controller has to stop: its
// manager stops its workers at SIGTERM.
const terminationGrace = 10

// programPrefix names the programs of a PodController in the workspace's
// run directory: each build its own file, so that the pod that runs one
// keeps it while the next starts.
const programPrefix = Program + "-"

// Start copies the program into the workspace under a name of its
// content and makes the Deployment's pod run it.
func (c PodController) Start(ctx context.Context, binary string) error {
	ws, err := c.Cells.Workspace(ctx, c.Cluster)
	if err != nil {
		return err
	}
	run := filepath.Join(ws, runDir)
	if err := os.MkdirAll(run, 0o755); err != nil {
		return err
	}
	sum, err := fileSum(binary)
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("nothing is built yet: build the module first")
	} else if err != nil {
		return fmt.Errorf("the controller's program: %w", err)
	}
	prog := filepath.Join(run, programPrefix+sum[:16])
	if _, err := os.Lstat(prog); err != nil {
		if err := copyProgram(binary, prog); err != nil {
			return fmt.Errorf("the controller's program: %w", err)
		}
	}
	spec, err := c.Cells.ConfinedPod(ctx, c.Cluster, cluster.Sandbox{ReadOnly: []string{prog}}, prog,
		append(append([]string{}, DefaultArgs...), c.Args...))
	if err != nil {
		return err
	}
	spec.ServiceAccountName = c.Place.ServiceAccount
	spec.AutomountServiceAccountToken = ptr.To(true)
	spec.TerminationGracePeriodSeconds = ptr.To[int64](terminationGrace)
	spec.Containers[0].Name = c.Place.Container
	spec.Containers[0].Env = []corev1.EnvVar{{Name: "HOME", Value: "/tmp"}}
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return err
	}
	deployments := cs.AppsV1().Deployments(c.Place.Namespace)
	var running string
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := deployments.Get(ctx, c.Place.Deployment, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cs := d.Spec.Template.Spec.Containers; len(cs) > 0 && len(cs[0].Command) > 0 {
			running = cs[0].Command[0]
		}
		d.Spec.Template.Spec = spec
		// A new pod each Start, as `kubectl rollout restart` makes one,
		// even of the program that runs: Start restarts the controller.
		if d.Spec.Template.Annotations == nil {
			d.Spec.Template.Annotations = map[string]string{}
		}
		d.Spec.Template.Annotations[restartedAt] = time.Now().UTC().Format(time.RFC3339Nano)
		d.Spec.Replicas = ptr.To[int32](1)
		_, err = deployments.Update(ctx, d, metav1.UpdateOptions{FieldManager: "oplab"})
		return err
	})
	if err != nil {
		return fmt.Errorf("run the program as deployment %s/%s: %w", c.Place.Namespace, c.Place.Deployment, err)
	}
	return pruneRun(run, prog, running)
}

// Stop scales the Deployment to 0.
func (c PodController) Stop(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(c.Admin)
	if err != nil {
		return err
	}
	s, err := cs.AppsV1().Deployments(c.Place.Namespace).GetScale(ctx, c.Place.Deployment, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	if s.Spec.Replicas == 0 {
		return nil
	}
	s.Spec.Replicas = 0
	_, err = cs.AppsV1().Deployments(c.Place.Namespace).UpdateScale(ctx, c.Place.Deployment, s, metav1.UpdateOptions{FieldManager: "oplab"})
	return err
}

// pruneRun removes the programs of run but keep, the new one, and was,
// the one that ran until now (its pod still does).
func pruneRun(run string, keep ...string) error {
	entries, err := os.ReadDir(run)
	if err != nil {
		return err
	}
	for _, e := range entries {
		path := filepath.Join(run, e.Name())
		if strings.HasPrefix(e.Name(), programPrefix) && !slices.Contains(keep, path) {
			if err := os.Remove(path); err != nil {
				return err
			}
		}
	}
	return nil
}

// fileSum is the hex SHA-256 of the file at path.
func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
