package install

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"oplab.dev/oplab/internal/operator/hostpod"
	"oplab.dev/oplab/internal/oplog"
)

// Cell says that the operator runs inside the cluster's cell, beside its
// control plane, as on the pods provider: a container of the cell's pod
// runs RunInCell, which plays the chart's simulated pod as the embedded
// provider's host process does. The installer installs the chart, points
// KWOK's log of that pod at the operator's log in the cell and waits for
// the operator's workers to start.
type Cell struct {
	// Dir is the operator's directory inside the cell, as RunInCell has it.
	Dir string
}

// The operator's probes inside a cell: its own network namespace, so fixed
// ports on its loopback.
const (
	cellHealthAddr  = "127.0.0.1:18081"
	cellMetricsAddr = "127.0.0.1:18080"
)

// CellRun configures RunInCell.
type CellRun struct {
	// AdminKubeconfig is the cluster's admin kubeconfig in the cell; it
	// appears once the control plane is made.
	AdminKubeconfig string
	// Dir receives the operator's token, kubeconfig and logs (see Cell).
	Dir string
	// Operator is the pg-operator program.
	Operator string
	// TokenTTL is the lifetime of the ServiceAccount's tokens;
	// DefaultTokenTTL when zero.
	TokenTTL time.Duration
	Logger   *slog.Logger
}

// RunInCell plays the reference operator's pod until ctx ends: once the
// chart's Deployment exists it runs pg-operator with that Deployment's
// arguments, with a token of the chart's ServiceAccount that it keeps
// fresh, while a pod of the Deployment exists (hostpod); when the
// Deployment's arguments change (an upgrade, or the learner's edit) it
// starts the operator again with the new ones.
func RunInCell(ctx context.Context, o CellRun) error {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = DefaultTokenTTL
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return err
	}
	o.Logger.Info("waiting for the control plane", "kubeconfig", o.AdminKubeconfig)
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		_, err := os.Stat(o.AdminKubeconfig)
		return err == nil, nil
	}); err != nil {
		return nil // ended before the control plane was made
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.AdminKubeconfig)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	// The kubeconfig is written before the API server answers.
	if err := wait.PollUntilContextCancel(ctx, time.Second, true, func(context.Context) (bool, error) {
		_, err := cs.Discovery().ServerVersion()
		return err == nil, nil
	}); err != nil {
		return nil
	}
	loc := oplog.Location{Dir: o.Dir}
	token, kubeconfig := filepath.Join(o.Dir, "token"), filepath.Join(o.Dir, "kubeconfig")
	if err := hostpod.WriteTokenKubeconfig(kubeconfig, cfg, token, ServiceAccount, Namespace); err != nil {
		return err
	}
	tokens := hostpod.TokenOptions{
		Client: cs, Namespace: Namespace, ServiceAccount: ServiceAccount, File: token, TTL: o.TokenTTL,
	}
	refreshing := false

	var (
		args    []string
		running bool
		stop    context.CancelFunc = func() {}
		done    chan error
	)
	defer func() {
		stop()
		if done != nil {
			<-done
		}
	}()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		want, err := liveArgs(ctx, cs)
		switch {
		case err != nil:
			if !apierrors.IsNotFound(err) && ctx.Err() == nil {
				o.Logger.Warn("read the operator's Deployment", "err", err)
			}
		case !running || !slices.Equal(want, args):
			if _, err := os.Stat(token); err != nil {
				// The chart's ServiceAccount came with its Deployment: its
				// first token now, the next ones before each expires.
				if err := hostpod.MintToken(ctx, tokens); err != nil {
					o.Logger.Warn("operator token", "err", err)
					break
				}
			}
			if !refreshing {
				refreshing = true
				go hostpod.RefreshTokens(ctx, tokens, func(err error) { o.Logger.Warn("operator token", "err", err) })
			}
			if running {
				o.Logger.Info("the operator's arguments changed: starting it again")
				stop()
				<-done
			}
			args, running = want, true
			rctx, cancel := context.WithCancel(ctx)
			stop = cancel
			done = make(chan error, 1)
			argv := append([]string{o.Operator}, args...)
			o.Logger.Info("playing the operator's pod", "args", args, "log", loc.Log())
			go func() {
				done <- hostpod.Run(rctx, hostpod.Options{
					Client: cs, Namespace: Namespace, Selector: "app.kubernetes.io/name=pg-operator",
					Argv: argv,
					Env: []string{
						"KUBECONFIG=" + kubeconfig, "POD_NAMESPACE=" + Namespace,
						"HOME=" + o.Dir, "PATH=/usr/local/bin:/usr/bin:/bin",
					},
					LogPath: loc.Log(), PreviousLogPath: loc.Previous(), Logger: o.Logger,
				})
			}()
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-done:
			// hostpod ends only with its context; anything else is a fault
			// worth a fresh start.
			o.Logger.Warn("hostpod ended", "err", err)
			running, done = false, nil
		case <-tick.C:
		}
	}
}

// liveArgs are the arguments of the operator's container in the cluster's
// Deployment, set for a cell: probes on the cell's fixed ports, no leader
// election (one process plays the one pod).
func liveArgs(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
	d, err := cs.AppsV1().Deployments(Namespace).Get(ctx, Deployment, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	args, err := containerArgs(d)
	if err != nil {
		return nil, err
	}
	args = setFlag(args, "--health-probe-bind-address", cellHealthAddr)
	args = setFlag(args, "--metrics-bind-address", cellMetricsAddr)
	return setFlag(args, "--leader-elect", "false"), nil
}

func containerArgs(d *appsv1.Deployment) ([]string, error) {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == Container {
			return slices.Clone(c.Args), nil
		}
	}
	return nil, fmt.Errorf("Deployment %s has no container %s", Deployment, Container)
}

// startedMarker is what controller-runtime logs once a controller's
// workers run: the operator reconciles from then on.
const startedMarker = "Starting workers"

// waitCell points KWOK's log of the operator's pod at the log in the cell
// and waits until that log says the operator's workers started. The log
// is the current run's: hostpod moves the last run's aside at each start.
func (in *Installer) waitCell(ctx context.Context) error {
	loc := oplog.Location{Dir: in.opts.Cell.Dir}
	if err := in.applyClusterLogs(ctx, loc.Log(), loc.Previous()); err != nil {
		return err
	}
	var last string
	var lastErr error
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		found := false
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		// Until the pod and its log exist this fails: polled again.
		lastErr = PodLog{Config: in.cfg, Release: in.rel}.Lines(lctx, false, func(l oplog.Line) error {
			last = l.Text
			if strings.Contains(l.Text, startedMarker) {
				found = true
			}
			return nil
		})
		return found, nil
	})
	if err != nil {
		return fmt.Errorf("the operator in the cell did not start its workers: %w (last line %q, last error %v)", err, last, lastErr)
	}
	return nil
}
