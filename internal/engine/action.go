package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"oplab.dev/oplab/internal/lab"
)

// actionFn performs an action; a is the attempt it belongs to (nil during
// setup).
type actionFn func(ctx context.Context, e *Engine, a *Attempt) error

// actionFor returns the function that performs an action with the decoded
// params p, and the one that undoes it on Reset (nil when there is nothing
// to undo). It returns a nil action for a kind the engine does not know.
func actionFor(p any) (do, undo actionFn) {
	switch p := p.(type) {
	case *lab.InstallOperator:
		if p.Operator != "" {
			return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.installThirdParty(ctx, p.Operator) }, nil
		}
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.installOperator(ctx, p) }, nil
	case *lab.InstallController:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.installController(ctx, e.labID()) }, nil
	case *lab.RunController:
		return func(ctx context.Context, e *Engine, _ *Attempt) error {
			return e.runController(ctx, e.labID(), p)
		}, nil
	case *lab.WaitPods:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.waitPods(ctx, p) }, nil
	case *lab.DeletePod:
		// Undone by the pod's controller, which makes it again.
		return func(ctx context.Context, e *Engine, a *Attempt) error { return e.deletePod(ctx, p, a) }, nil
	case *lab.ExecInPod:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.execInPod(ctx, p) }, nil
	case *lab.CreateCluster:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.createCluster(ctx, p) },
			func(ctx context.Context, e *Engine, _ *Attempt) error { return e.deleteCluster(ctx, p.Target) }
	case *lab.ApplyManifest:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.applyManifest(ctx, p) },
			func(ctx context.Context, e *Engine, _ *Attempt) error { return e.deleteManifest(ctx, p) }
	case *lab.DeleteObject:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.deleteObject(ctx, p) }, nil
	case *lab.WaitCondition:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.waitCondition(ctx, p) }, nil
	case *lab.DeletePrimaryPod:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.deletePrimaryPod(ctx, p) }, nil
	case *lab.RemoveRoleVerbs:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.removeRoleVerbs(ctx, p) },
			func(ctx context.Context, e *Engine, _ *Attempt) error { return e.restoreRole(ctx, p) }
	case *lab.ApplyQuota:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.applyQuota(ctx, p) },
			func(ctx context.Context, e *Engine, _ *Attempt) error { return e.deleteQuota(ctx, p) }
	case *lab.CopyStorageClass:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.copyStorageClass(ctx, p) },
			func(ctx context.Context, e *Engine, _ *Attempt) error {
				return e.deleteObject(ctx, &lab.DeleteObject{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass", Name: p.Name})
			}
	case *lab.SetStorageClass:
		// Undone by Reset's return to the baseline's storage class.
		return func(ctx context.Context, e *Engine, _ *Attempt) error {
			return e.setStorageClass(ctx, p.Target, p.StorageClassName)
		}, nil
	case *lab.StopOperator:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.stopOperator(ctx) },
			func(ctx context.Context, e *Engine, _ *Attempt) error { return e.startOperator(ctx) }
	case *lab.StartOperator:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.startOperator(ctx) }, nil
	case *lab.ScaleCluster:
		// Undone by Reset's return to the baseline's replicas.
		return func(ctx context.Context, e *Engine, _ *Attempt) error {
			return e.scaleCluster(ctx, p.Target, int32(p.Replicas))
		}, nil
	case *lab.Switchover:
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.switchover(ctx, p.Target, p.Instance) }, nil
	case *lab.PatchObject:
		// Not undone: what a patch changes is the operator's to put back,
		// or Reset's baseline.
		return func(ctx context.Context, e *Engine, _ *Attempt) error { return e.patchObject(ctx, p) }, nil
	}
	return nil, nil
}

// runSteps performs steps in order, reporting each to progress.
func (e *Engine) runSteps(ctx context.Context, phase, exercise string, steps []lab.Step, a *Attempt, progress Progress) error {
	for i, s := range steps {
		do, _ := actionFor(s.Params)
		report(progress, Step{Phase: phase, Exercise: exercise, Index: i, Total: len(steps), Kind: s.Kind, Message: describeAction(s)})
		start := time.Now()
		err := e.runAction(ctx, s, do, a)
		report(progress, Step{Phase: phase, Exercise: exercise, Index: i, Total: len(steps), Kind: s.Kind,
			Message: describeAction(s), Done: true, Err: err, Elapsed: time.Since(start)})
		if err != nil {
			return fmt.Errorf("%s step %d (%s): %w", phase, i+1, s.Kind, err)
		}
	}
	return nil
}

func (e *Engine) runAction(ctx context.Context, s lab.Step, do actionFn, a *Attempt) error {
	if do == nil {
		return fmt.Errorf("action kind %q: %w", s.Kind, ErrUnsupported)
	}
	if s.Timeout.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, e.budget(s.Timeout.Duration))
		defer cancel()
	}
	e.log.Debug("action", "kind", s.Kind)
	return do(ctx, e, a)
}

func report(p Progress, s Step) {
	if p != nil {
		p(s)
	}
}

// describeAction says in a few words what a step does.
func describeAction(s lab.Step) string {
	switch p := s.Params.(type) {
	case *lab.InstallController:
		return "install the lab's resource and its controller's place"
	case *lab.RunController:
		return fmt.Sprintf("build the %s module and run it as the controller", p.Module)
	case *lab.InstallOperator:
		if p.Operator != "" {
			return "install " + p.Operator
		}
		return "install the operator"
	case *lab.WaitPods:
		return fmt.Sprintf("wait for %d ready pods of %s", p.Count, p.Selector)
	case *lab.DeletePod:
		return fmt.Sprintf("delete the pod of %s", p.Selector)
	case *lab.ExecInPod:
		return fmt.Sprintf("run %q in the pod of %s", strings.Join(p.Command, " "), p.Selector)
	case *lab.CreateCluster:
		return fmt.Sprintf("create PostgresCluster %s with %d replicas", p.Cluster, p.Replicas)
	case *lab.ApplyManifest:
		return "apply a manifest"
	case *lab.DeleteObject:
		return fmt.Sprintf("delete %s %s", p.Kind, p.Name)
	case *lab.WaitCondition:
		return fmt.Sprintf("wait until %s is %s=%s", p.Cluster, p.Type, p.Status)
	case *lab.DeletePrimaryPod:
		if p.Force {
			return "force-delete the primary's pod"
		}
		return "delete the primary's pod"
	case *lab.RemoveRoleVerbs:
		return fmt.Sprintf("remove %v on %v from role %s", p.Verbs, p.Resources, p.Role)
	case *lab.ApplyQuota:
		return fmt.Sprintf("apply ResourceQuota %s", p.Name)
	case *lab.CopyStorageClass:
		from := p.From
		if from == "" {
			from = "the default class"
		}
		return fmt.Sprintf("create StorageClass %s as a copy of %s", p.Name, from)
	case *lab.SetStorageClass:
		return fmt.Sprintf("set the storage class of %s to %s", p.Cluster, p.StorageClassName)
	case *lab.StopOperator:
		return "stop the operator"
	case *lab.StartOperator:
		return "start the operator"
	case *lab.ScaleCluster:
		return fmt.Sprintf("scale %s to %d", p.Cluster, p.Replicas)
	case *lab.Switchover:
		return fmt.Sprintf("switch %s over to %s", p.Cluster, p.Instance)
	case *lab.PatchObject:
		if p.Subresource != "" {
			return fmt.Sprintf("patch the %s of %s %s", p.Subresource, p.Kind, p.Name)
		}
		return fmt.Sprintf("patch %s %s", p.Kind, p.Name)
	}
	return s.Kind
}
