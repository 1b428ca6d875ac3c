package engine

import (
	"testing"

	"oplab.dev/oplab/internal/lab"
)

// Every kind the lab format registers must be runnable: a lab that
// validates must not fail at run time for want of an implementation.
func TestEveryKindImplemented(t *testing.T) {
	t.Parallel()
	for _, k := range lab.ActionKinds() {
		if do, _ := actionFor(k.New()); do == nil {
			t.Errorf("action kind %s: got no implementation, want one", k.Name)
		}
		if describeAction(lab.Step{Kind: k.Name, Params: k.New()}) == k.Name {
			t.Errorf("action kind %s: got no description, want one", k.Name)
		}
	}
	for _, k := range lab.CheckKinds() {
		if checkFor(k.New()) == nil {
			t.Errorf("check kind %s: got no implementation, want one", k.Name)
		}
	}
	if do, undo := actionFor(struct{}{}); do != nil || undo != nil {
		t.Errorf("unknown params: got an implementation, want none")
	}
	if checkFor(struct{}{}) != nil {
		t.Errorf("unknown check params: got an implementation, want none")
	}
}

// Chaos kinds that leave something behind must say how Reset undoes it.
func TestChaosUndo(t *testing.T) {
	t.Parallel()
	for _, p := range []any{&lab.CreateCluster{}, &lab.ApplyManifest{}, &lab.RemoveRoleVerbs{}, &lab.ApplyQuota{}, &lab.StopOperator{}} {
		if _, undo := actionFor(p); undo == nil {
			t.Errorf("%T: got no undo, want one", p)
		}
	}
}
