package lab

import (
	"fmt"
	"strings"
	"time"
)

// LearnerOperator is the Operator of a lab in which the learner writes
// the controller: operatorReady, stopOperator, startOperator and the
// operator's log act on the learner's own controller, which runs as the
// lab's controller.yaml says (package labs).
const LearnerOperator = "learner"

// Modules a RunController step may build besides a broken variant's name.
const (
	ModuleScaffold = "scaffold" // the module the learner starts from
	ModuleSolution = "solution" // the reference solution
)

func controllerActionSpecs() []KindSpec {
	return []KindSpec{
		newSpec[InstallController]("installController", "apply the lab's resource (CRD), its controller's rights and the Deployment whose pod the controller plays", time.Minute, 0),
		newSpec[RunController]("runController", "build a module of the lab (the scaffold, the reference solution or a broken variant) in the cell and run it as the cluster's controller", 5*time.Minute, 0),
	}
}

// The checks of a lab whose learner writes the controller judge what the
// controller does, never its source: each makes a WebApp of its own, with
// a name the learner cannot know in advance, acts on it as a user or a
// failure would, and watches the controller answer. Each runs its whole
// scenario once per poll; Within bounds every wait for the controller.
func controllerCheckSpecs() []KindSpec {
	return []KindSpec{
		newSpec[ChildrenMatchSpec]("childrenMatchSpec", "a new WebApp gets its ConfigMap, Deployment and Service as its spec says, written by the controller, and they follow a change of the spec", 2*time.Minute, 1),
		newSpec[ChildrenOwned]("childrenOwned", "a WebApp's children name it their controlling owner, so that deleting it collects them", 2*time.Minute, 1),
		newSpec[ChildrenRepaired]("childrenRepaired", "a child deleted or changed by hand while the controller runs is put right at once, not on a timer", 2*time.Minute, 1),
		newSpec[LevelTriggered]("levelTriggered", "a pass cut short by a kill, and children and a spec changed while the controller is stopped, are put right when it is back", 3*time.Minute, 1),
		newSpec[Idempotent]("idempotent", "once a WebApp has converged, a window of passes writes nothing: its children keep their identity and resourceVersions", 2*time.Minute, 1),
		newSpec[StatusTruthful]("statusTruthful", "status.observedGeneration and the Ready condition follow the spec and say what the Deployment has", 2*time.Minute, 1),
		newSpec[FinalizerRuns]("finalizerRuns", "a deleted WebApp is taken out of the registry and its finalizer removed, so that it goes", 2*time.Minute, 1),
		newSpec[NoHotLoop]("noHotLoop", "a converged WebApp is not written again while nothing changes: no status rewritten pass after pass", 2*time.Minute, 1),
		newSpec[ConflictsRetried]("conflictsRetried", "writes the API server refuses with a conflict are retried: the error is returned, not dropped, so the pass runs again", 2*time.Minute, 1),
	}
}

// InstallController installs the lab's resource and the place of its
// controller; the controller itself runs once a module is built.
type InstallController struct{}

// RunController builds one of the lab's modules and runs it as the
// controller, in place of the one that runs.
type RunController struct {
	// Module is scaffold, solution or the name of a broken variant.
	Module string `yaml:"module"`
	// With names variants laid over Module, in order: in a lab whose
	// learner repairs a controller, each ships one repair as a variant of
	// the file it fixes, and the self-test runs the module with the
	// repairs of the exercises done so far.
	With []string `yaml:"with,omitempty"`
}

// Name names the module r builds, With included: "scaffold",
// "scaffold+one-configmap+read-the-state".
func (r *RunController) Name() string {
	return strings.Join(append([]string{r.Module}, r.With...), "+")
}

// Validate implements Validator.
func (r *RunController) Validate() []FieldError {
	var errs []FieldError
	if r.Module != ModuleScaffold && r.Module != ModuleSolution && len(dnsName("module", r.Module)) > 0 {
		errs = append(errs, FieldError{"module", fmt.Sprintf("want %s, %s or a variant's name, got %q", ModuleScaffold, ModuleSolution, r.Module)})
	}
	for i, v := range r.With {
		if v == ModuleScaffold || v == ModuleSolution || len(dnsName("with", v)) > 0 {
			errs = append(errs, FieldError{fmt.Sprintf("with[%d]", i), fmt.Sprintf("want a variant's name, got %q", v)})
		}
	}
	return errs
}

// Probe is what every controller check takes: where its WebApp is made,
// and how long the controller has to answer each change.
type Probe struct {
	Namespace string   `yaml:"namespace,omitempty"` // default "default"
	Within    Duration `yaml:"within,omitempty"`    // default 15s
}

// Validate implements Validator.
func (p *Probe) Validate() []FieldError {
	var errs []FieldError
	if p.Namespace != "" {
		errs = append(errs, dnsName("namespace", p.Namespace)...)
	}
	if p.Within.Duration < 0 || p.Within.Duration > 5*time.Minute {
		errs = append(errs, FieldError{"within", fmt.Sprintf("must be 0 (the default) to 5m, got %s", p.Within.Duration)})
	}
	return errs
}

// ChildrenMatchSpec passes when the controller makes a new WebApp's
// children as its spec says and follows a change of the spec.
type ChildrenMatchSpec struct {
	Probe `yaml:",inline"`
}

// ChildrenOwned passes when a WebApp's children are controlled by it and
// are collected when it is deleted.
type ChildrenOwned struct {
	Probe `yaml:",inline"`
}

// ChildrenRepaired passes when children deleted or changed by hand are put
// right within Within.
type ChildrenRepaired struct {
	Probe `yaml:",inline"`
}

// LevelTriggered passes when what changed while the controller was
// stopped is put right within Within of its start.
type LevelTriggered struct {
	Probe `yaml:",inline"`
}

// Idempotent passes when a converged WebApp's children are not written
// during Window.
type Idempotent struct {
	Probe  `yaml:",inline"`
	Window Duration `yaml:"window,omitempty"` // default 5s
}

// StatusTruthful passes when the status reports the generation it saw and
// a Ready condition that agrees with the Deployment.
type StatusTruthful struct {
	Probe `yaml:",inline"`
}

// FinalizerRuns passes when a deleted WebApp leaves the registry and goes.
type FinalizerRuns struct {
	Probe `yaml:",inline"`
}

// NoHotLoop passes when a converged WebApp is written at most MaxWrites
// times during Window.
type NoHotLoop struct {
	Probe     `yaml:",inline"`
	Window    Duration `yaml:"window,omitempty"`    // default 5s
	MaxWrites int      `yaml:"maxWrites,omitempty"` // default 0
}

// ConflictsRetried passes when the controller puts a WebApp right after
// the API server refused its writes with a conflict for Window (the
// ConflictWindow plugin of kube-controlplane): the refused pass returned
// its error and was retried, with nothing else changing to bring it.
type ConflictsRetried struct {
	Probe  `yaml:",inline"`
	Window Duration `yaml:"window,omitempty"` // default 2s
}

// Validate implements Validator.
func (c *ConflictsRetried) Validate() []FieldError {
	errs := c.Probe.Validate()
	if c.Window.Duration < 0 || c.Window.Duration > time.Minute {
		errs = append(errs, FieldError{"window", fmt.Sprintf("must be 0 (the default) to 1m, got %s", c.Window.Duration)})
	}
	return errs
}

// LearnerWritesController says whether l's learner writes its controller
// (Operator is LearnerOperator): the lab has a module to build and run.
func (l *Lab) LearnerWritesController() bool { return l.Operator == LearnerOperator }
