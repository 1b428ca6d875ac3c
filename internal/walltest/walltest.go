// Package walltest owns one rule of oplab's tests: may a test of a wall
// skip because this machine cannot make that wall?
//
// The walls are what keeps a learner inside their own share of the machine
// (docs/security.md): the cell's namespaces, made by bubblewrap, around an
// embedded cluster and the console's kubectl, and the budget's control
// groups. Their tests need the machine's help (user namespaces, a cgroup
// the test may write), and a test that skipped where it could not get it
// would let `make test` pass having tested no wall at all.
//
// The rule: a wall test that cannot make its wall fails, saying why and
// what to do. It skips only
//   - under -short (`make test-short`, which runs no real component and
//     says so), or
//   - where whoever runs the tests said this machine cannot make walls,
//     with OPLAB_WALLS=untested (`make test WALLS=untested`) — never in CI
//     (CI set).
//
// A skip's message starts with Untested and names the wall, so that
// hack/testsum, which `make test` and `make test-short` pipe their report
// through, ends the report with one line for each wall not tested.
package walltest

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// The walls, as a skip names them (one line each in testsum's report).
const (
	// Cell is the cell around an embedded cluster: bubblewrap's user,
	// mount, network, PID, IPC and UTS namespaces (internal/cell).
	Cell = "the cell (bubblewrap namespaces around a cluster)"
	// Sandbox is the console's kubectl in bubblewrap's namespaces
	// (internal/console, internal/bwrap).
	Sandbox = "the console's sandbox (bubblewrap)"
	// Budget is a cell's control group: its memory ceiling, task bound
	// and CPU share (internal/budget).
	Budget = "the budget (a cell's control group)"
)

// Env names the variable that says the machine cannot make walls: its one
// value that lets wall tests skip is EnvUntested.
const (
	Env         = "OPLAB_WALLS"
	EnvUntested = "untested"
)

// Untested starts the message of every skip of a wall test: testsum
// reads the wall's name after it, up to ": ".
const Untested = "wall not tested: "

// Require returns when err is nil: the wall can be made here, and the test
// goes on to test it. Otherwise it skips t (under -short, or with
// OPLAB_WALLS=untested outside CI) or fails it, saying which wall and why.
func Require(t testing.TB, wall string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if ok, why := MaySkip(); ok {
		t.Skipf("%s%s: %v (%s)", Untested, wall, err, why)
		return
	}
	t.Fatalf("%s cannot be tested on this machine: %v. "+
		"A pass would claim a wall nobody tested: make the machine able to (scripts/ensure-bwrap.sh installs bubblewrap; "+
		"user namespaces must be allowed; control groups need root or a delegated subtree), "+
		"or say it cannot with %s=%s (make test WALLS=%s) and read the report's list of walls not tested", wall, err, Env, EnvUntested, EnvUntested)
}

// MaySkip reports whether a wall test that cannot make its wall may skip
// here, and why.
func MaySkip() (bool, string) {
	switch {
	case testing.Short():
		return true, "-short"
	case os.Getenv("CI") != "":
		return false, ""
	case os.Getenv(Env) == EnvUntested:
		return true, Env + "=" + EnvUntested
	}
	return false, ""
}

// Contained is the error Require takes from a cluster provider's
// Contained(): nil when its clusters are contained, else why not (a reason
// of its own where the provider gives none).
func Contained(ok bool, why error) error {
	switch {
	case ok:
		return nil
	case why == nil:
		return errors.New("clusters cannot be contained here, and the provider does not say why")
	}
	return fmt.Errorf("clusters cannot be contained here: %w", why)
}
