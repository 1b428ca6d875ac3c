package lab

import (
	"regexp"

	"go.yaml.in/yaml/v3"

	"oplab.dev/oplab/internal/locale"
	"oplab.dev/oplab/internal/yamldoc"
)

// APIVersion and Kind identify a lab file.
const (
	APIVersion = "oplab.dev/v1alpha1"
	Kind       = "Lab"
)

// Duration is a duration written as "90s" or "2m".
type Duration = yamldoc.Duration

// Lab is one lab file.
type Lab struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	ID         string      `yaml:"id"`
	Title      locale.Text `yaml:"title"`
	Summary    locale.Text `yaml:"summary"`
	// Lesson lists page ids; each is content/<lang>/<id>.md in every language.
	Lesson []string `yaml:"lesson"`
	// Requires lists provider capabilities the lab cannot run without.
	Requires []string `yaml:"requires,omitempty"`
	// Operator names the lab's operator when it is not the reference one:
	// one of the course's third-party operators (package thirdparty), which
	// run on real containers only, or LearnerOperator, the learner's own
	// controller. Its log is the lab's operator log, and operatorReady,
	// stopOperator and startOperator act on it.
	Operator string `yaml:"operator,omitempty"`
	// Target is the PostgresCluster that steps act on unless they say otherwise.
	Target    Target     `yaml:"target"`
	Setup     []Step     `yaml:"setup"`
	Exercises []Exercise `yaml:"exercises"`
	Quiz      string     `yaml:"quiz"`
}

// Target names a PostgresCluster.
type Target struct {
	Cluster   string `yaml:"cluster,omitempty"`
	Namespace string `yaml:"namespace,omitempty"`
}

// Exercise is one graded task: reach a steady state, suffer the chaos, repair.
type Exercise struct {
	ID           string      `yaml:"id"`
	Title        locale.Text `yaml:"title"`
	Instructions locale.Text `yaml:"instructions"` // markdown
	TimeLimit    Duration    `yaml:"timeLimit"`
	// SteadyState checks must all pass before chaos is injected.
	SteadyState []Check `yaml:"steadyState"`
	Chaos       []Step  `yaml:"chaos,omitempty"`
	// FaultConfirmed checks prove the chaos took effect; the moment they
	// pass is T0, and goals only count after it.
	FaultConfirmed []Check `yaml:"faultConfirmed,omitempty"`
	Goals          []Check `yaml:"goals"`
	Hints          []Hint  `yaml:"hints"`
	// Before is, for the self-test only, the state the exercise starts
	// from where the learner's own work makes it: an exercise without
	// chaos runs it before trying the goals on the unrepaired state (a lab
	// whose learner writes the controller runs the module of the stage
	// before the exercise's).
	Before []Step `yaml:"before,omitempty"`
	// Solution is the reference repair, used by the self-test.
	Solution []Step `yaml:"solution"`
	// Shortcuts are repairs that must not pass: the self-test applies each
	// after the chaos, instead of the solution, and expects the goals to fail.
	Shortcuts []Shortcut `yaml:"shortcuts,omitempty"`
}

// Shortcut is a way to make goals pass without learning the lesson (a
// wildcard role, a deleted quota, a status edited by hand). The self-test
// applies its Steps after the chaos and expects the goals to fail, and each
// kind in RefusedBy to be among the failed ones.
type Shortcut struct {
	ID string `yaml:"id"`
	// Why says in one line what the shortcut does and why it defeats the
	// lesson; it is shown when the shortcut wrongly passes.
	Why   string `yaml:"why"`
	Steps []Step `yaml:"steps"`
	// Undo puts back what Steps changed that neither the exercise's reset
	// nor the operator restores (objects of applyManifest steps are
	// deleted without it).
	Undo []Step `yaml:"undo,omitempty"`
	// RefusedBy names goal kinds that must fail on the shortcut: the checks
	// meant to refuse it, so that it cannot be refused by accident (a goal
	// that merely has not settled yet).
	RefusedBy []string `yaml:"refusedBy,omitempty"`
}

// Step is one typed action. Params holds the kind's parameter struct after
// decoding (for example *DeletePrimaryPod).
type Step struct {
	Kind    string   `yaml:"kind"`
	Timeout Duration `yaml:"timeout,omitempty"`
	// Raw is the params mapping as written; Params is it decoded.
	Raw    yaml.Node `yaml:"params,omitempty"`
	Params any       `yaml:"-"`
}

// Check is one typed check. It must pass Passes times in a row within
// Timeout; Weight gives it partial credit among an exercise's goals.
type Check struct {
	Kind    string   `yaml:"kind"`
	Timeout Duration `yaml:"timeout,omitempty"`
	Passes  int      `yaml:"passes,omitempty"`
	Weight  int      `yaml:"weight,omitempty"`
	// Explain is the one-line reason shown to a learner when it fails.
	Explain locale.Text `yaml:"explain,omitempty"`
	// Raw is the params mapping as written; Params is it decoded.
	Raw    yaml.Node `yaml:"params,omitempty"`
	Params any       `yaml:"-"`
}

// Hint tiers, from gentlest to most explicit.
const (
	TierNudge   = "nudge"   // points in a direction
	TierWhere   = "where"   // names where to look
	TierCommand = "command" // gives the command or change
)

// Hint is shown when its evidence is seen or its time has passed, and only
// after the hints before it.
type Hint struct {
	Tier  string      `yaml:"tier"`
	After Duration    `yaml:"after,omitempty"` // time since T0 (or since the exercise started when there is no chaos)
	When  []Evidence  `yaml:"when,omitempty"`
	Text  locale.Text `yaml:"text"` // markdown
}

// Evidence is a pattern in the operator's log or the cluster's events. Set
// exactly one field. Patterns are Go regular expressions.
type Evidence struct {
	Log          string `yaml:"log,omitempty"`
	EventReason  string `yaml:"eventReason,omitempty"`
	EventMessage string `yaml:"eventMessage,omitempty"`

	re *regexp.Regexp // Log or EventMessage, compiled by Parse
}
