package lab

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPublicHidesHintsAndSolutions(t *testing.T) {
	t.Parallel()
	l, errs := Parse("demo.yaml", readDemo(t))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	b, err := json.Marshal(l.Public())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, secret := range []string{"Watch the log", "kubectl get pgc", "waitCondition", "deletePrimaryPod", "promot"} {
		if strings.Contains(s, secret) {
			t.Errorf("public view contains %q: %s", secret, s)
		}
	}
	for _, want := range []string{`"id":"break-it"`, "Delete the **primary**.", `"kind":"primaryChanged","weight":2`, `"hints":2`} {
		if !strings.Contains(s, want) {
			t.Errorf("public view lacks %q: %s", want, s)
		}
	}
}
