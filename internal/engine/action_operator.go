package engine

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/internal/operator/install"
)

// installer returns the operator's installer for the target, bounded by
// the deadline of ctx.
func (e *Engine) installer(ctx context.Context) (*install.Installer, error) {
	if e.t.Provider == nil {
		return nil, fmt.Errorf("install the operator: no cluster provider: %w", ErrUnsupported)
	}
	opts := install.Options{Logger: e.log}
	if d, ok := ctx.Deadline(); ok {
		opts.Timeout = timeUntil(d)
	}
	return install.ForCluster(e.t.Provider, e.t.Cluster, e.t.BinDir, opts)
}

// hostMode reports whether the operator runs as a host process beside the
// cluster (the embedded provider).
func (e *Engine) hostMode() bool {
	return e.t.Provider != nil && e.t.Provider.Info().Capabilities.HostProcesses
}

func (e *Engine) installOperator(ctx context.Context, p *lab.InstallOperator) error {
	if p.Namespace != "" && p.Namespace != install.Namespace {
		return fmt.Errorf("install the operator into namespace %q: the chart installs into %s: %w", p.Namespace, install.Namespace, ErrUnsupported)
	}
	in, err := e.installer(ctx)
	if err != nil {
		return err
	}
	if _, err := in.Install(ctx); err != nil {
		return err
	}
	return nil
}

// scaleOperator sets the replicas of the operator's Deployment.
func (e *Engine) scaleOperator(ctx context.Context, replicas int32) error {
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	_, err := e.cs.AppsV1().Deployments(install.Namespace).Patch(ctx, install.Deployment, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("scale deployment %s/%s to %d: %w", install.Namespace, install.Deployment, replicas, err)
	}
	return nil
}

// stopOperator scales the operator's Deployment to 0 and, when it runs as
// a host process, stops that process too.
func (e *Engine) stopOperator(ctx context.Context) error {
	if err := e.scaleOperator(ctx, 0); err != nil {
		return err
	}
	if e.hostMode() {
		if err := e.t.Provider.StopHostProcess(ctx, e.t.Cluster, install.Deployment); err != nil {
			return fmt.Errorf("stop the operator's host process: %w", err)
		}
	}
	return nil
}

// startOperator scales the operator's Deployment to 1 and waits until it is
// ready; a host process is started again by an upgrade of the release.
func (e *Engine) startOperator(ctx context.Context) error {
	if err := e.scaleOperator(ctx, 1); err != nil {
		return err
	}
	if e.hostMode() {
		return e.installOperator(ctx, &lab.InstallOperator{})
	}
	err := wait.PollUntilContextCancel(ctx, pollInterval, true, func(ctx context.Context) (bool, error) {
		ok, _ := e.operatorReady(ctx)
		return ok, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the operator to be ready: %w", err)
	}
	return nil
}
