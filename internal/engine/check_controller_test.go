package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"oplab.dev/oplab/internal/lab"
	"oplab.dev/oplab/labs"
)

// controllerChecks are the checks of a learner's controller, with their
// default parameters.
func controllerChecks(t *testing.T) []lab.Check {
	t.Helper()
	var out []lab.Check
	for _, k := range lab.CheckKinds() {
		p := k.New()
		if !isProbe(p) {
			continue
		}
		out = append(out, lab.Check{Kind: k.Name, Timeout: lab.Duration{Duration: k.Timeout}, Passes: k.Passes, Weight: 1, Params: p})
	}
	if len(out) != 9 {
		t.Fatalf("%d controller checks, want 9", len(out))
	}
	return out
}

// TestLearnerControllerChecks: the reference solution, built and run as
// the cluster's controller, passes every check of a learner's controller;
// each broken variant fails exactly the checks its fault is for, each
// with its evidence.
func TestLearnerControllerChecks(t *testing.T) {
	t.Parallel()
	e, _ := newEngine(t)
	ctx := testContext(t, 25*time.Minute)
	e.use(&lab.Lab{ID: "write-reconciler", Operator: lab.LearnerOperator})
	e.burstBuilds = true // as the self-test does: each build uncapped
	if err := e.installController(ctx, "write-reconciler"); err != nil {
		t.Fatal(err)
	}
	checks := controllerChecks(t)
	variants, err := labs.Variants("write-reconciler")
	if err != nil {
		t.Fatal(err)
	}
	// What each variant's fault is for: the checks it must fail, and
	// those it may fail or pass by chance; it must pass every other.
	type verdict struct{ fail, either []string }
	want := map[string]verdict{
		"solution": {},
		// Its Deployment's readiness wakes no pass: the status catches
		// it only if the pass its own status write brought came after
		// the Deployment's pods were ready.
		"no-owner": {fail: []string{"childrenOwned", "childrenRepaired"}, either: []string{"statusTruthful"}},
		// Its passes come back to back whatever they return, and they
		// keep a capped cell busy: its answer to a change may come after
		// the refusals stopped, twice.
		"hot-loop": {fail: []string{"noHotLoop"}, either: []string{"conflictsRetried"}},
		// Nor does a Deployment's readiness reach its status but on the
		// timer.
		"timer-only": {fail: []string{"childrenRepaired"}, either: []string{"statusTruthful"}},
		// Never removing the finalizer leaves the probes of other checks
		// to be freed by hand, which may outlast their time.
		"finalizer-stuck": {fail: []string{"finalizerRuns"}, either: []string{"childrenOwned"}},
		// Every pass brings the next: the children are seldom all there
		// at once, so a check waiting for them may not see it.
		"recreate-each-pass": {fail: []string{"idempotent"}, either: []string{"childrenMatchSpec", "childrenOwned", "childrenRepaired", "levelTriggered", "statusTruthful", "noHotLoop", "finalizerRuns", "conflictsRetried"}},
		// Whether it follows a change of the spec depends on whether its
		// first status landed before the change.
		"event-not-state": {fail: []string{"childrenRepaired", "levelTriggered"}, either: []string{"childrenMatchSpec", "conflictsRetried"}},
		// No Deployment ever has the WebApp's name: nothing converges.
		"new-child-each-pass": {fail: []string{"childrenMatchSpec", "childrenOwned", "childrenRepaired", "idempotent", "levelTriggered", "noHotLoop", "statusTruthful", "conflictsRetried"}, either: []string{"finalizerRuns"}},
		// A refused write is logged and dropped: nothing brings the pass
		// back once the refusals stop.
		"drops-errors": {fail: []string{"conflictsRetried"}},
	}
	for _, v := range variants {
		if _, ok := want[v]; !ok {
			t.Errorf("variant %s has no expected verdict here", v)
		}
	}
	for _, module := range append([]string{"solution"}, variants...) {
		t.Run(module, func(t *testing.T) {
			start := time.Now()
			if err := e.runController(ctx, "write-reconciler", &lab.RunController{Module: module}); err != nil {
				t.Fatal(err)
			}
			t.Logf("built and started in %s", time.Since(start).Round(100*time.Millisecond))
			if err := e.startOperator(ctx); err != nil {
				t.Fatal(err)
			}
			rep, err := e.RunChecks(ctx, nil, checks, CheckOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rep.Results {
				t.Logf("%-5v %s: %s (%s)", r.Passed, r.Kind, r.Reason, r.Elapsed.Duration().Round(100*time.Millisecond))
			}
			w := want[module]
			for _, r := range rep.Results {
				switch {
				case slices.Contains(w.either, r.Kind):
				case slices.Contains(w.fail, r.Kind) && r.Passed:
					t.Errorf("%s passed %s, the check its fault is for: %s", module, r.Kind, r.Reason)
				case !slices.Contains(w.fail, r.Kind) && !r.Passed:
					t.Errorf("%s failed %s, which it should pass: %s", module, r.Kind, r.Reason)
				}
			}
		})
	}
}

// TestLabModuleNames: the names the checks of a learner's controller rely
// on are the ones the lab's module declares, and the resource is the one
// its CRD serves.
func TestLabModuleNames(t *testing.T) {
	// fix-reconciler's controller replaces write-reconciler's
	// webapp_controller.go: both name the constants.
	for _, id := range []string{"write-reconciler", "fix-reconciler"} {
		fsys, err := labs.Module(id)
		if err != nil {
			t.Fatal(err)
		}
		src, err := fs.ReadFile(fsys, "internal/controller/webapp_controller.go")
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), "webapp_controller.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		consts := map[string]string{}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						consts[n.Name], _ = strconv.Unquote(lit.Value)
					}
				}
			}
		}
		for name, want := range map[string]string{
			"FieldOwner": controllerFieldOwner, "Finalizer": webAppFinalizer,
			"Registry": webAppRegistry, "ContentKey": webAppContentKey,
		} {
			if consts[name] != want {
				t.Errorf("%s: the module's %s is %q, the checks use %q", id, name, consts[name], want)
			}
		}
	}
	crd, err := labs.Manifest("write-reconciler", "crd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"group: " + webAppGVR.Group, "plural: " + webAppGVR.Resource, "name: " + webAppGVR.Version} {
		if !strings.Contains(crd, want) {
			t.Errorf("the lab's CRD has no %q", want)
		}
	}
}

// TestReadRefusals reads the counts of refused writes from metrics as the
// two kinds of API server serve them: kube-controlplane's plugin counter,
// and kube-apiserver's count of the webhook's rejections, of which only
// the conflictwindow webhook's 409 answers are its.
func TestReadRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, metrics string
		want          refusals
	}{{
		name: "plugin",
		metrics: "# HELP oplab_conflict_window_refused_total writes refused\n" +
			"# TYPE oplab_conflict_window_refused_total counter\n" +
			"oplab_conflict_window_refused_total 7\n" +
			"apiserver_request_total{code=\"409\"} 99\n",
		want: refusals{plugin: 7, pluginKnown: true},
	}, {
		name: "webhook",
		metrics: "# HELP apiserver_admission_webhook_rejection_count [ALPHA] Admission webhook rejection count\n" +
			"# TYPE apiserver_admission_webhook_rejection_count counter\n" +
			`apiserver_admission_webhook_rejection_count{error_type="no_error",name="conflicts.oplab.dev",operation="UPDATE",rejection_code="409",type="validating"} 5` + "\n" +
			`apiserver_admission_webhook_rejection_count{error_type="no_error",name="conflicts.oplab.dev",operation="CREATE",rejection_code="409",type="validating"} 2` + "\n" +
			// Another webhook's, another code, a failed call: not its refusals.
			`apiserver_admission_webhook_rejection_count{error_type="no_error",name="other.example.com",operation="UPDATE",rejection_code="409",type="validating"} 40` + "\n" +
			`apiserver_admission_webhook_rejection_count{error_type="no_error",name="conflicts.oplab.dev",operation="UPDATE",rejection_code="403",type="validating"} 30` + "\n" +
			`apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",name="conflicts.oplab.dev",operation="UPDATE",rejection_code="409",type="validating"} 20` + "\n" +
			"apiserver_admission_webhook_rejection_count_total 1000\n",
		want: refusals{webhook: 7},
	}, {
		name:    "neither",
		metrics: "apiserver_request_total{code=\"200\"} 12\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readRefusals(io.NopCloser(strings.NewReader(tc.metrics)))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
